// Broadcast binary ops, element-wise maximum/minimum/power, scalar forms, unary math, dot and
// batch_dot: forward against naive references, gradients against finite differences.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
using BinFn = std::function<double(double, double)>;

// Values on a grid (k * 0.1 + offset): distinct operands stay >= 0.05 apart, so no tie sits
// within a finite-difference step of a kink.
NDArray GridArray(const TShape& shape, uint64_t seed, double offset, int lo = -9, int hi = 9) {
  NDArray a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, static_cast<float>(dist(rng) * 0.1 + offset));
  return a;
}

// NumPy broadcasting written out directly: output dims, then per output multi-index the
// operand indices.
NDArray NaiveBroadcast(const NDArray& l, const NDArray& r, const BinFn& f) {
  int nd = std::max(l.shape().ndim(), r.shape().ndim());
  auto dim = [&](const TShape& s, int i) {  // dim i of s aligned right, 1 when missing
    int k = i - (nd - s.ndim());
    return k < 0 ? int64_t{1} : s[k];
  };
  std::vector<int64_t> od;
  for (int i = 0; i < nd; ++i) od.push_back(std::max(dim(l.shape(), i), dim(r.shape(), i)));
  NDArray out{TShape(od)};
  for (int64_t flat = 0; flat < out.Size(); ++flat) {
    std::vector<int64_t> idx(nd);
    int64_t rem = flat;
    for (int i = nd - 1; i >= 0; --i) {
      idx[i] = rem % od[i];
      rem /= od[i];
    }
    auto offset = [&](const TShape& s) {
      int64_t off = 0;
      for (int i = 0; i < nd; ++i) {
        int64_t d = dim(s, i);
        off = off * d + (d == 1 ? 0 : idx[i]);
      }
      return off;
    };
    out.SetFlat(flat, static_cast<float>(f(l.GetFlat(offset(l.shape())), r.GetFlat(offset(r.shape())))));
  }
  return out;
}

double PyMod(double a, double b) {
  if (b == 0) return 0;
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

struct BinCase {
  std::string op;
  BinFn f;
  bool grad = true;
};

std::vector<BinCase> BroadcastCases() {
  return {{"broadcast_add", [](double a, double b) { return a + b; }},
          {"broadcast_sub", [](double a, double b) { return a - b; }},
          {"broadcast_mul", [](double a, double b) { return a * b; }},
          {"broadcast_div", [](double a, double b) { return a / b; }},
          {"broadcast_power", [](double a, double b) { return std::pow(a, b); }},
          {"broadcast_maximum", [](double a, double b) { return std::max(a, b); }},
          {"broadcast_minimum", [](double a, double b) { return std::min(a, b); }},
          {"broadcast_hypot", [](double a, double b) { return std::sqrt(a * a + b * b); }},
          {"broadcast_mod", PyMod},
          {"broadcast_equal", [](double a, double b) { return double(a == b); }},
          {"broadcast_not_equal", [](double a, double b) { return double(a != b); }},
          {"broadcast_greater", [](double a, double b) { return double(a > b); }},
          {"broadcast_greater_equal", [](double a, double b) { return double(a >= b); }},
          {"broadcast_lesser", [](double a, double b) { return double(a < b); }},
          {"broadcast_lesser_equal", [](double a, double b) { return double(a <= b); }},
          {"broadcast_logical_and", [](double a, double b) { return double(a != 0 && b != 0); }},
          {"broadcast_logical_or", [](double a, double b) { return double(a != 0 || b != 0); }},
          {"broadcast_logical_xor", [](double a, double b) { return double((a != 0) != (b != 0)); }}};
}

const std::vector<std::pair<TShape, TShape>> kBroadcastShapes = {
    {TShape({2, 3, 4}), TShape({2, 1, 4})}, {TShape({3, 1}), TShape({1, 4})},
    {TShape({4}), TShape({2, 3, 4})},       {TShape({2, 3}), TShape({2, 3})},
    {TShape({2, 1, 3}), TShape({1})}};
}  // namespace

TEST_CASE("broadcast ops forward match NumPy broadcasting", "[ops][broadcast]") {
  for (auto& c : BroadcastCases()) {
    for (auto& [ls, rs] : kBroadcastShapes) {
      INFO(c.op << " " << ls << " " << rs);
      // Positive operands (power), with some exact ties for the comparisons.
      NDArray l = GridArray(ls, 1, 0.0, 1, 6), r = GridArray(rs, 2, 0.0, 1, 6);
      if (c.op == "broadcast_mod" || c.op.find("logical") != std::string::npos)
        l = GridArray(ls, 3, 0.0, -6, 6), r = GridArray(rs, 4, 0.0, -3, 3);
      if (c.op == "broadcast_mod")  // nothing divides by zero
        for (int64_t i = 0; i < r.Size(); ++i)
          if (r.GetFlat(i) == 0) r.SetFlat(i, 0.3f);
      NDArray y = RunForward(c.op, {}, {{"lhs", l}, {"rhs", r}});
      RequireClose(y, NaiveBroadcast(l, r, c.f), 1e-5f, 1e-5f, c.op);
    }
  }
}

TEST_CASE("broadcast ops gradients sum over broadcast axes", "[ops][broadcast][grad]") {
  for (auto& c : BroadcastCases()) {
    for (auto& [ls, rs] : kBroadcastShapes) {
      INFO(c.op << " " << ls << " " << rs);
      // lhs on the .05 grid, rhs on the .1 grid: never within 0.05 of each other.
      NDArray l = GridArray(ls, 5, 0.05, 3, 15), r = GridArray(rs, 6, 0.0, 3, 15);
      if (c.op == "broadcast_mod") {  // a/b well inside (0, 1) or (-1, 0): smooth there
        l = GridArray(ls, 7, 0.05, -7, 6);
        r = GridArray(rs, 8, 0.0, 9, 12);
      }
      CheckGradients(c.op, {}, {{"lhs", l}, {"rhs", r}});
    }
  }
}

TEST_CASE("broadcast_maximum sends tied gradients to lhs", "[ops][broadcast][grad]") {
  NDArray l(TShape({2, 2}), {1, 2, 3, 4}), r(TShape({1, 2}), {3, 2});
  auto exec = BindSingleOp("broadcast_maximum", {}, {{"lhs", l}, {"rhs", r}});
  exec->Forward(true);
  exec->Backward({NDArray(TShape({2, 2}), {1, 1, 1, 1})});
  // lhs wins where lhs >= rhs: (0,1) tie, (1,0), (1,1).
  RequireClose(exec->grad_arrays()[0], NDArray(TShape({2, 2}), {0, 1, 1, 1}));
  RequireClose(exec->grad_arrays()[1], NDArray(TShape({1, 2}), {1, 0}));
}

TEST_CASE("broadcast shape inference and errors", "[ops][broadcast][shape]") {
  auto infer = [](const TShape& l, const TShape& r) {
    Symbol s = Symbol::Create("broadcast_add", "b", {}, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
    return InferShape(s, {{"l", l}, {"r", r}}).out_shapes[0];
  };
  CHECK(infer(TShape({2, 1, 4}), TShape({3, 1})) == TShape({2, 3, 4}));
  CHECK(infer(TShape({5}), TShape({2, 1})) == TShape({2, 5}));
  CHECK(infer(TShape({1, 0}), TShape({3, 1})) == TShape({3, 0}));
  try {
    infer(TShape({2, 3}), TShape({4, 3}));
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("operands could not be broadcast together with shapes (2,3) (4,3)"));
  }
  for (std::string alias : {"broadcast_plus", "broadcast_minus"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
  CHECK(OpRegistry::Global().Get("broadcast_plus").name == "broadcast_add");
  CHECK(OpRegistry::Global().Get("broadcast_mul").ListArguments({}) ==
        std::vector<std::string>{"lhs", "rhs"});
}

TEST_CASE("element-wise maximum, minimum, power, hypot", "[ops][elemwise][grad]") {
  std::vector<BinCase> cases = {{"_maximum", [](double a, double b) { return std::max(a, b); }},
                                {"_minimum", [](double a, double b) { return std::min(a, b); }},
                                {"_power", [](double a, double b) { return std::pow(a, b); }},
                                {"_hypot", [](double a, double b) { return std::hypot(a, b); }}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray l = GridArray(TShape({3, 4}), 9, 0.05, 3, 15), r = GridArray(TShape({3, 4}), 10, 0.0, 3, 15);
    NDArray want(l.shape());
    for (int64_t i = 0; i < l.Size(); ++i) want.SetFlat(i, static_cast<float>(c.f(l.GetFlat(i), r.GetFlat(i))));
    RequireClose(RunForward(c.op, {}, {{"lhs", l}, {"rhs", r}}), want);
    CheckGradients(c.op, {}, {{"lhs", l}, {"rhs", r}});
  }
  for (std::string alias : {"_Maximum", "_Minimum", "_Power", "_Hypot"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
  // Same-shape ops: a shape mismatch is an error.
  Symbol s = Symbol::Create("_maximum", "m", {}, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
  CHECK_THROWS_AS(InferShape(s, {{"l", TShape({2, 3})}, {"r", TShape({3, 2})}}), ShapeError);
}

TEST_CASE("scalar maximum, minimum, power, rpower, hypot", "[ops][scalar][grad]") {
  std::vector<BinCase> cases = {{"_maximum_scalar", [](double x, double s) { return std::max(x, s); }},
                                {"_minimum_scalar", [](double x, double s) { return std::min(x, s); }},
                                {"_power_scalar", [](double x, double s) { return std::pow(x, s); }},
                                {"_rpower_scalar", [](double x, double s) { return std::pow(s, x); }},
                                {"_hypot_scalar", [](double x, double s) { return std::hypot(x, s); }}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray x = GridArray(TShape({2, 5}), 11, 0.05, 3, 15);
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, static_cast<float>(c.f(x.GetFlat(i), 1.1)));
    RequireClose(RunForward(c.op, {{"scalar", "1.1"}}, {{"data", x}}), want);
    CheckGradients(c.op, {{"scalar", "1.1"}}, {{"data", x}});
  }
  for (std::string alias : {"_MaximumScalar", "_MinimumScalar", "_PowerScalar", "_RPowerScalar", "_HypotScalar"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
}

namespace {
// erf is increasing: bisect erf(x) = y on [-6, 6].
double InverseErfByBisection(double y) {
  double lo = -6, hi = 6;
  for (int k = 0; k < 100; ++k) {
    double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct UnaryCase {
  std::string op;
  std::function<double(double)> f;
  double lo, hi;
  bool flat = false;  // piecewise constant: zero gradient
};
}  // namespace

TEST_CASE("unary math forward and gradients", "[ops][unary][grad]") {
  std::vector<UnaryCase> cases = {
      {"exp", [](double x) { return std::exp(x); }, -2, 2},
      {"expm1", [](double x) { return std::exp(x) - 1; }, -2, 2},
      {"log", [](double x) { return std::log(x); }, 0.3, 3},
      {"log10", [](double x) { return std::log(x) / std::log(10.0); }, 0.3, 3},
      {"log2", [](double x) { return std::log(x) / std::log(2.0); }, 0.3, 3},
      {"log1p", [](double x) { return std::log(1 + x); }, -0.5, 2},
      {"sqrt", [](double x) { return std::sqrt(x); }, 0.3, 3},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.3, 3},
      {"cbrt", [](double x) { return std::cbrt(x); }, 0.3, 3},
      {"rcbrt", [](double x) { return 1 / std::cbrt(x); }, 0.3, 3},
      {"square", [](double x) { return x * x; }, -2, 2},
      {"reciprocal", [](double x) { return 1 / x; }, 0.3, 3},
      {"abs", [](double x) { return std::fabs(x); }, -2, 2},
      {"negative", [](double x) { return -x; }, -2, 2},
      {"sign", [](double x) { return double((x > 0) - (x < 0)); }, -2, 2, true},
      {"floor", [](double x) { return std::floor(x); }, -3, 3, true},
      {"ceil", [](double x) { return std::ceil(x); }, -3, 3, true},
      {"round", [](double x) { return x < 0 ? -std::floor(-x + 0.5) : std::floor(x + 0.5); }, -3, 3, true},
      {"rint", [](double x) { return x - std::floor(x) <= 0.5 ? std::floor(x) : std::ceil(x); }, -3, 3, true},
      {"trunc", [](double x) { return x < 0 ? std::ceil(x) : std::floor(x); }, -3, 3, true},
      {"fix", [](double x) { return x < 0 ? std::ceil(x) : std::floor(x); }, -3, 3, true},
      {"sin", [](double x) { return std::sin(x); }, -3, 3},
      {"cos", [](double x) { return std::cos(x); }, -3, 3},
      {"tan", [](double x) { return std::sin(x) / std::cos(x); }, -1.2, 1.2},
      {"arcsin", [](double x) { return std::atan2(x, std::sqrt(1 - x * x)); }, -0.9, 0.9},
      {"arccos", [](double x) { return std::atan2(std::sqrt(1 - x * x), x); }, -0.9, 0.9},
      {"arctan", [](double x) { return std::asin(x / std::sqrt(1 + x * x)); }, -3, 3},
      {"degrees", [](double x) { return x * 180 / M_PI; }, -3, 3},
      {"radians", [](double x) { return x * M_PI / 180; }, -3, 3},
      {"sinh", [](double x) { return (std::exp(x) - std::exp(-x)) / 2; }, -2, 2},
      {"cosh", [](double x) { return (std::exp(x) + std::exp(-x)) / 2; }, -2, 2},
      {"arcsinh", [](double x) { return std::log(x + std::sqrt(x * x + 1)); }, -3, 3},
      {"arccosh", [](double x) { return std::log(x + std::sqrt(x * x - 1)); }, 1.3, 3},
      {"arctanh", [](double x) { return 0.5 * std::log((1 + x) / (1 - x)); }, -0.8, 0.8},
      {"erf", [](double x) { return std::erf(x); }, -2, 2},
      {"erfinv", InverseErfByBisection, -0.9, 0.9},
      {"gamma", [](double x) { return std::exp(std::lgamma(x)); }, 0.3, 3},
      {"gammaln", [](double x) { return std::lgamma(x); }, 0.3, 3},
      {"logical_not", [](double x) { return double(x == 0); }, -2, 2, true}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray x = RandomArray(TShape({3, 4}), 12, static_cast<float>(c.lo), static_cast<float>(c.hi));
    // Keep every value away from kinks and jumps (multiples of 0.5, zero).
    for (int64_t i = 0; i < x.Size(); ++i) {
      float v = x.GetFlat(i);
      if (std::fabs(v * 2 - std::round(v * 2)) < 0.04f) x.SetFlat(i, v + 0.05f);
    }
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, static_cast<float>(c.f(x.GetFlat(i))));
    RequireClose(RunForward(c.op, {}, {{"data", x}}), want);
    CheckGradients(c.op, {}, {{"data", x}});
  }
  // Halfway cases: round goes away from zero, rint to the lower integer (MXNet's rint).
  NDArray h(TShape({4}), {0.5f, 1.5f, -0.5f, 2.5f});
  RequireClose(RunForward("round", {}, {{"data", h}}), NDArray(TShape({4}), {1, 2, -1, 3}));
  RequireClose(RunForward("rint", {}, {{"data", h}}), NDArray(TShape({4}), {0, 1, -1, 2}));
  RequireClose(RunForward("fix", {}, {{"data", NDArray(TShape({2}), {-1.7f, 1.7f})}}),
               NDArray(TShape({2}), {-1, 1}));
  // logical_not on exact zeros; erfinv at and beyond +-1; gamma at a pole and of negatives.
  RequireClose(RunForward("logical_not", {}, {{"data", NDArray(TShape({3}), {-2, 0, 1})}}),
               NDArray(TShape({3}), {0, 1, 0}));
  NDArray e = RunForward("erfinv", {}, {{"data", NDArray(TShape({4}), {1, -1, 1.5f, 0})}});
  CHECK(e.GetFlat(0) == INFINITY);
  CHECK(e.GetFlat(1) == -INFINITY);
  CHECK(std::isnan(e.GetFlat(2)));
  CHECK(e.GetFlat(3) == 0.0f);
  NDArray neg(TShape({2}), {-0.5f, -1.5f});
  RequireClose(RunForward("gamma", {}, {{"data", neg}}),
               NDArray(TShape({2}), {static_cast<float>(std::tgamma(-0.5)), static_cast<float>(std::tgamma(-1.5))}));
  CheckGradients("gamma", {}, {{"data", neg}});
  CheckGradients("gammaln", {}, {{"data", neg}});
  for (std::string alias : {"_npx_erf", "_npx_erfinv", "_npx_gamma", "_npx_gammaln"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
  // Unary ops infer shapes both ways.
  Symbol s = Symbol::Create("exp", "e", {}, {{"data", Symbol::Variable("x")}});
  CHECK(InferShape(s, {{"x", TShape({2, 7})}}).out_shapes[0] == TShape({2, 7}));
}

namespace {
// out[i, l] = sum_k op(A)[i, k] op(B)[k, l] for A stored (ar, ac), B stored (br, bc).
std::vector<double> NaiveMatMul(const float* A, int64_t ar, int64_t ac, bool ta, const float* B,
                                int64_t br, int64_t bc, bool tb) {
  int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) {
        double a = ta ? A[q * ac + i] : A[i * ac + q];
        double b = tb ? B[j * bc + q] : B[q * bc + j];
        s += a * b;
      }
      out[static_cast<size_t>(i * n + j)] = s;
    }
  return out;
}

NDArray FromDoubles(const TShape& shape, const std::vector<double>& v) {
  NDArray a(shape);
  REQUIRE(a.Size() == static_cast<int64_t>(v.size()));
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, static_cast<float>(v[static_cast<size_t>(i)]));
  return a;
}

// out[i, j, l] = sum over k < 4 of term(i, j, l, k), for a (2, 3, 5) output.
NDArray Contract235(const std::function<double(int, int, int, int)>& term) {
  NDArray out(TShape({2, 3, 5}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int l = 0; l < 5; ++l) {
        double s = 0;
        for (int k = 0; k < 4; ++k) s += term(i, j, l, k);
        out.SetFlat((i * 3 + j) * 5 + l, static_cast<float>(s));
      }
  return out;
}

KwArgs TransposeParams(bool ta, bool tb) {
  return {{"transpose_a", ta ? "True" : "False"}, {"transpose_b", tb ? "True" : "False"}};
}
}  // namespace

TEST_CASE("dot of matrices with every transpose", "[ops][dot][grad]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transpose_a=" << ta << " transpose_b=" << tb);
      TShape ls = ta ? TShape({4, 3}) : TShape({3, 4}), rs = tb ? TShape({5, 4}) : TShape({4, 5});
      NDArray l = RandomArray(ls, 20), r = RandomArray(rs, 21);
      NDArray y = RunForward("dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
      RequireClose(y, FromDoubles(TShape({3, 5}), NaiveMatMul(l.fdata(), ls[0], ls[1], ta, r.fdata(),
                                                              rs[0], rs[1], tb)));
      CheckGradients("dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
    }
}

TEST_CASE("dot of vectors and N-D arrays", "[ops][dot][grad]") {
  // 1-D x 1-D: inner product of shape (1,).
  NDArray u = RandomArray(TShape({4}), 22), v = RandomArray(TShape({4}), 23);
  double ip = 0;
  for (int i = 0; i < 4; ++i) ip += u.GetFlat(i) * v.GetFlat(i);
  NDArray y = RunForward("dot", {}, {{"lhs", u}, {"rhs", v}});
  CHECK(y.shape() == TShape({1}));
  CHECK(y.GetFlat(0) == Approx(ip).epsilon(1e-5));
  CheckGradients("dot", {}, {{"lhs", u}, {"rhs", v}});

  // N-D: lhs (2,3,4) . rhs (4,5) -> (2,3,5), written as an explicit tensor contraction.
  NDArray a = RandomArray(TShape({2, 3, 4}), 24), b = RandomArray(TShape({4, 5}), 25);
  RequireClose(RunForward("dot", {}, {{"lhs", a}, {"rhs", b}}),
               Contract235([&](int i, int j, int l, int k) { return a.At({i, j, k}) * b.At({k, l}); }));
  CheckGradients("dot", {}, {{"lhs", a}, {"rhs", b}});

  // rhs N-D: (3,) . (3,2,2) -> (2,2); transpose_a on 3-D lhs contracts its first axis:
  // (4,2,3)^T . (4,5) -> (2,3,5).
  NDArray c = RandomArray(TShape({3}), 26), d = RandomArray(TShape({3, 2, 2}), 27);
  NDArray want2(TShape({2, 2}));
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += c.GetFlat(k) * d.At({k, p, q});
      want2.SetFlat(p * 2 + q, static_cast<float>(s));
    }
  RequireClose(RunForward("dot", {}, {{"lhs", c}, {"rhs", d}}), want2);
  CheckGradients("dot", {}, {{"lhs", c}, {"rhs", d}});
  NDArray e = RandomArray(TShape({4, 2, 3}), 28);
  RequireClose(RunForward("dot", {{"transpose_a", "True"}}, {{"lhs", e}, {"rhs", b}}),
               Contract235([&](int i, int j, int l, int k) { return e.At({k, i, j}) * b.At({k, l}); }));
  CheckGradients("dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                 {{"lhs", e}, {"rhs", RandomArray(TShape({2, 4}), 29)}});
}

TEST_CASE("dot shape inference and errors", "[ops][dot][shape]") {
  auto infer = [](const KwArgs& p, const TShape& l, const TShape& r) {
    Symbol s = Symbol::Create("dot", "d", p, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
    return InferShape(s, {{"l", l}, {"r", r}}).out_shapes[0];
  };
  CHECK(infer({}, TShape({2, 3, 4}), TShape({4, 5, 6})) == TShape({2, 3, 5, 6}));
  CHECK(infer({{"transpose_b", "True"}}, TShape({2, 4}), TShape({5, 6, 4})) == TShape({2, 5, 6}));
  CHECK(infer({}, TShape({7}), TShape({7, 2})) == TShape({2}));
  CHECK(infer({}, TShape({7}), TShape({7})) == TShape({1}));
  try {
    infer({}, TShape({2, 3}), TShape({4, 5}));
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("dot shape error: (2,3) X (4,5)"));
  }
  CHECK_THROWS_AS(infer({{"transpose_a", "True"}}, TShape({3}), TShape({3})), ShapeError);
  CHECK_THROWS_AS(infer({{"forward_stype", "dense"}}, TShape({3}), TShape({3})), ParamError);
  CHECK(infer({{"forward_stype", "default"}}, TShape({3}), TShape({3})) == TShape({1}));
}

TEST_CASE("batch_dot forward, gradients and shapes", "[ops][batch_dot][grad]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transpose_a=" << ta << " transpose_b=" << tb);
      TShape ls = ta ? TShape({3, 4, 2}) : TShape({3, 2, 4}), rs = tb ? TShape({3, 5, 4}) : TShape({3, 4, 5});
      NDArray l = RandomArray(ls, 30), r = RandomArray(rs, 31);
      NDArray y = RunForward("batch_dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
      REQUIRE(y.shape() == TShape({3, 2, 5}));
      for (int b = 0; b < 3; ++b) {
        auto want = NaiveMatMul(l.fdata() + b * 8, ls[1], ls[2], ta, r.fdata() + b * 20, rs[1], rs[2], tb);
        RequireClose(y.At(b), FromDoubles(TShape({2, 5}), want));
      }
      CheckGradients("batch_dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
    }
  // 4-D: two batch dims.
  NDArray l = RandomArray(TShape({2, 2, 3, 2}), 32), r = RandomArray(TShape({2, 2, 2, 3}), 33);
  NDArray y = RunForward("batch_dot", {}, {{"lhs", l}, {"rhs", r}});
  REQUIRE(y.shape() == TShape({2, 2, 3, 3}));
  for (int b = 0; b < 4; ++b)
    RequireClose(y.Reshape(TShape({4, 3, 3})).At(b),
                 FromDoubles(TShape({3, 3}), NaiveMatMul(l.fdata() + b * 6, 3, 2, false, r.fdata() + b * 6, 2, 3, false)));
  CheckGradients("batch_dot", {}, {{"lhs", l}, {"rhs", r}});

  auto infer = [](const TShape& a, const TShape& b) {
    Symbol s = Symbol::Create("batch_dot", "bd", {}, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
    return InferShape(s, {{"l", a}, {"r", b}}).out_shapes[0];
  };
  CHECK_THROWS_WITH(infer(TShape({2, 3}), TShape({2, 3, 4})),
                    Catch::Contains("batch_dot currently only support N-D*N-D array (N >= 3)"));
  CHECK_THROWS_WITH(infer(TShape({2, 3, 4}), TShape({3, 4, 5})),
                    Catch::Contains("the leading batch dimensions must be equal"));
  CHECK_THROWS_WITH(infer(TShape({2, 3, 4}), TShape({2, 5, 5})), Catch::Contains("shape mismatch"));
}
