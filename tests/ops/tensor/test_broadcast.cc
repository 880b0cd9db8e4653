// Broadcast binary ops: NumPy broadcasting forward, gradients summed over broadcast axes, shapes.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
using BinFn = std::function<double(double, double)>;

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

TEST_CASE("Binary ops differentiate one input while the other takes no gradient", "[ops][broadcast][grad]") {
  // grad_req null for rhs: no gradient array is bound there, and the backward must not touch it.
  NDArray l(TShape({2, 3}), {1, 2, 3, 4, 5, 6}), r(TShape({2, 3}), {2, 2, 2, 3, 3, 3});
  for (const char* op : {"broadcast_mul", "elemwise_mul"}) {
    INFO(op);
    auto exec = BindSingleOp(op, {}, {{"lhs", l}, {"rhs", r}}, {"rhs"});
    CHECK(exec->grad_arrays()[1].is_none());
    exec->Forward(true);
    exec->Backward({NDArray(TShape({2, 3}), std::vector<float>(6, 1.0f))});
    CHECK(exec->grad_arrays()[0].ToVector() == r.ToVector());  // d(l * r)/dl = r
  }
}

TEST_CASE("broadcast ops differentiate float64 in double", "[ops][broadcast][grad][float64]") {
  // MXNet's float64 tests wrap every op in broadcast_add and check gradients to 1e-7.
  NDArray l = RandomArray(TShape({3, 4}), 23, 0.2f, 5.0f), r = RandomArray(TShape({3, 4}), 24, -4.0f, 4.0f);
  for (const char* op : {"broadcast_add", "broadcast_mul", "broadcast_power", "broadcast_hypot"}) {
    const BinFn f = [&] {
      for (auto& c : BroadcastCases())
        if (c.op == op) return c.f;
      return BinFn();
    }();
    CheckFloat64Elementwise(op, {}, {{"lhs", l}, {"rhs", r}},
                            [&f](const std::vector<double>& v) { return f(v[0], v[1]); });
  }
  // rhs (1, 4) stretched over 3 rows: its gradient sums the rows' in double.
  NDArray l64 = l.AsType(DType::kFloat64), r64 = RandomArray(TShape({1, 4}), 25, -4.0f, 4.0f).AsType(DType::kFloat64);
  auto exec = BindSingleOp("broadcast_power", {}, {{"lhs", l64}, {"rhs", r64}});
  exec->Forward(true);
  NDArray head(TShape({3, 4}), DType::kFloat64);
  for (int64_t i = 0; i < 12; ++i) head.data<double>()[i] = 0.5 + 0.1 * static_cast<double>(i);
  exec->Backward({head});
  const double* a = l64.data<double>();
  const double* b = r64.data<double>();
  const NDArray& gl = exec->grad_arrays()[0];
  const NDArray& gr = exec->grad_arrays()[1];
  REQUIRE((gl.dtype() == DType::kFloat64 && gr.dtype() == DType::kFloat64));
  for (int64_t j = 0; j < 4; ++j) {
    double want_r = 0;
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t k = i * 4 + j;
      const double h = head.data<double>()[k];
      const double want_l = h * b[j] * std::pow(a[k], b[j] - 1);
      CHECK(std::fabs(gl.data<double>()[k] - want_l) <= 1e-12 * std::max(1.0, std::fabs(want_l)));
      want_r += h * std::pow(a[k], b[j]) * std::log(a[k]);
    }
    CHECK(std::fabs(gr.data<double>()[j] - want_r) <= 1e-12 * std::max(1.0, std::fabs(want_r)));
  }
}
