// Reductions (sum, mean, prod, max, min, nansum, nanprod, norm) and argmax/argmin: forward,
// gradients with ties, shapes, and exact long reductions independent of the thread count.
#include <tbb/global_control.h>

#include <cmath>
#include <limits>
#include <set>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Distinct magnitudes >= 0.5 with mixed signs: no ties for max/min, no zero factor for prod.
NDArray DistinctNonZero(const TShape& shape, uint64_t seed) {
  NDArray a(shape);
  std::vector<int> perm(static_cast<size_t>(a.Size()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
  for (int64_t i = 0; i < a.Size(); ++i) {
    int p = perm[static_cast<size_t>(i)];
    a.SetFlat(i, (p % 2 ? -1.0f : 1.0f) * (0.5f + 0.02f * static_cast<float>(p)));
  }
  return a;
}

// The reduced axes of a rank-nd input as the params describe them, computed directly.
std::set<int> AxesOf(int nd, const std::vector<int>& axes, bool given, bool exclude) {
  std::set<int> s;
  if (!given || axes.empty()) {
    for (int i = 0; i < nd; ++i) s.insert(i);
    return s;
  }
  std::set<int> listed;
  for (int a : axes) listed.insert(a < 0 ? a + nd : a);
  for (int i = 0; i < nd; ++i)
    if (listed.count(i) != exclude) s.insert(i);
  return s;
}

// Folds x into groups keyed by the non-reduced coordinates; returns the groups in row-major
// order of those coordinates (which is the output's order).
std::vector<std::vector<double>> Groups(const NDArray& x, const std::set<int>& reduced) {
  const TShape& s = x.shape();
  std::map<std::vector<int64_t>, std::vector<double>> g;
  for (int64_t flat = 0; flat < x.Size(); ++flat) {
    std::vector<int64_t> idx(s.ndim()), key;
    int64_t rem = flat;
    for (int i = s.ndim() - 1; i >= 0; --i) {
      idx[i] = rem % s[i];
      rem /= s[i];
    }
    for (int i = 0; i < s.ndim(); ++i)
      if (!reduced.count(i)) key.push_back(idx[i]);
    g[key].push_back(x.GetFlat(flat));
  }
  std::vector<std::vector<double>> out;
  for (auto& kv : g) out.push_back(kv.second);
  return out;
}

struct ReduceCase {
  std::string op;
  std::function<double(const std::vector<double>&)> f;
};

std::vector<ReduceCase> ReduceCases() {
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  return {{"sum", sum},
          {"mean", [sum](const std::vector<double>& v) { return sum(v) / v.size(); }},
          {"prod", [](const std::vector<double>& v) {
             double p = 1;
             for (double x : v) p *= x;
             return p;
           }},
          {"max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }},
          {"min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }},
          {"nansum", sum},
          {"nanprod", [](const std::vector<double>& v) {
             double p = 1;
             for (double x : v) p *= x;
             return p;
           }},
          {"norm", [](const std::vector<double>& v) {
             double s = 0;
             for (double x : v) s += x * x;
             return std::sqrt(s);
           }},
          {"_square_sum", [](const std::vector<double>& v) {
             double s = 0;
             for (double x : v) s += x * x;
             return s;
           }}};
}

struct AxisConfig {
  KwArgs params;
  std::vector<int> axes;
  bool given, exclude, keepdims;
  TShape out;  // for input (2,3,4)
};

std::vector<AxisConfig> AxisConfigs() {
  return {{{}, {}, false, false, false, TShape({1})},
          {{{"keepdims", "True"}}, {}, false, false, true, TShape({1, 1, 1})},
          {{{"axis", "1"}}, {1}, true, false, false, TShape({2, 4})},
          {{{"axis", "-1"}, {"keepdims", "True"}}, {-1}, true, false, true, TShape({2, 3, 1})},
          {{{"axis", "(0, 2)"}}, {0, 2}, true, false, false, TShape({3})},
          {{{"axis", "(0,1,2)"}}, {0, 1, 2}, true, false, false, TShape({1})},
          {{{"axis", "1"}, {"exclude", "True"}}, {1}, true, true, false, TShape({3})},
          {{{"axis", "(0,)"}, {"exclude", "True"}, {"keepdims", "True"}}, {0}, true, true, true, TShape({2, 1, 1})},
          // An empty axis reduces everything even with exclude (MXNet).
          {{{"axis", "()"}, {"exclude", "True"}}, {}, true, true, false, TShape({1})}};
}

}  // namespace

TEST_CASE("reductions forward over axes, keepdims and exclude", "[ops][reduce]") {
  NDArray x = DistinctNonZero(TShape({2, 3, 4}), 1);
  for (auto& c : ReduceCases()) {
    for (auto& cfg : AxisConfigs()) {
      if (c.op == "norm" && cfg.exclude) continue;  // norm has no exclude
      INFO(c.op << " axis/exclude/keepdims config with output " << cfg.out);
      NDArray y = RunForward(c.op, cfg.params, {{"data", x}});
      REQUIRE(y.shape() == cfg.out);
      auto groups = Groups(x, AxesOf(3, cfg.axes, cfg.given, cfg.exclude));
      REQUIRE(static_cast<int64_t>(groups.size()) == y.Size());
      NDArray want(y.shape());
      for (size_t j = 0; j < groups.size(); ++j) want.SetFlat(static_cast<int64_t>(j), static_cast<float>(c.f(groups[j])));
      RequireClose(y, want, 1e-5f, 1e-5f, c.op);
    }
  }
  for (std::string alias : {"sum_axis", "max_axis", "min_axis"}) CHECK(OpRegistry::Global().Find(alias) != nullptr);
}

TEST_CASE("reduction gradients", "[ops][reduce][grad]") {
  NDArray x = DistinctNonZero(TShape({2, 3, 2}), 2);
  for (auto& c : ReduceCases()) {
    for (KwArgs p : {KwArgs{}, KwArgs{{"axis", "1"}}, KwArgs{{"axis", "(0,2)"}, {"keepdims", "True"}},
                     KwArgs{{"axis", "-1"}, {"exclude", "True"}}}) {
      if (c.op == "norm" && p.count("exclude")) continue;
      INFO(c.op << " " << (p.count("axis") ? p["axis"] : "None"));
      CheckGradients(c.op, p, {{"data", x}});
    }
  }
  CheckGradients("norm", {{"ord", "1"}, {"axis", "0"}}, {{"data", x}});
}

TEST_CASE("max and min send the gradient to every tied extremum", "[ops][reduce][grad]") {
  NDArray x(TShape({2, 3}), {1, 3, 3, 5, 2, 2});
  for (std::string op : {"max", "min"}) {
    auto exec = BindSingleOp(op, {{"axis", "1"}}, {{"data", x}});
    exec->Forward(true);
    exec->Backward({NDArray(TShape({2}), {10, 20})});
    NDArray want = op == "max" ? NDArray(TShape({2, 3}), {0, 10, 10, 20, 0, 0})
                               : NDArray(TShape({2, 3}), {10, 0, 0, 0, 20, 20});
    RequireClose(exec->grad_arrays()[0], want, 0, 0, op);
  }
}

TEST_CASE("nansum and nanprod skip NaN", "[ops][reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  NDArray x(TShape({2, 3}), {1, nan, 2, nan, nan, 4});
  RequireClose(RunForward("nansum", {{"axis", "1"}}, {{"data", x}}), NDArray(TShape({2}), {3, 4}));
  RequireClose(RunForward("nanprod", {{"axis", "1"}}, {{"data", x}}), NDArray(TShape({2}), {2, 4}));
  CHECK(std::isnan(RunForward("sum", {}, {{"data", x}}).GetFlat(0)));
  CHECK(std::isnan(RunForward("max", {}, {{"data", x}}).GetFlat(0)));
  auto exec = BindSingleOp("nansum", {}, {{"data", x}});
  exec->Forward(true);
  exec->Backward();
  RequireClose(exec->grad_arrays()[0], NDArray(TShape({2, 3}), {1, 0, 1, 0, 0, 1}));
}

TEST_CASE("norm: L1 and L2, default shape (1,), bad order", "[ops][norm]") {
  NDArray x = DistinctNonZero(TShape({2, 3}), 3);
  double l2 = 0, l1 = 0;
  for (int64_t i = 0; i < 6; ++i) l2 += x.GetFlat(i) * x.GetFlat(i), l1 += std::fabs(x.GetFlat(i));
  NDArray y = RunForward("norm", {}, {{"data", x}});
  CHECK(y.shape() == TShape({1}));
  CHECK(y.GetFlat(0) == Approx(std::sqrt(l2)).epsilon(1e-6));
  CHECK(RunForward("norm", {{"ord", "1"}}, {{"data", x}}).GetFlat(0) == Approx(l1).epsilon(1e-6));
  NDArray cols = RunForward("norm", {{"ord", "1"}, {"axis", "0"}, {"keepdims", "True"}}, {{"data", x}});
  REQUIRE(cols.shape() == TShape({1, 3}));
  for (int c = 0; c < 3; ++c)
    CHECK(cols.GetFlat(c) == Approx(std::fabs(x.At({0, c})) + std::fabs(x.At({1, c}))).epsilon(1e-6));
  CHECK_THROWS_AS(RunForward("norm", {{"ord", "3"}}, {{"data", x}}), ParamError);
  // out_dtype sets the output dtype, whatever the input's.
  NDArray y64 = RunForward("norm", {{"out_dtype", "float64"}}, {{"data", x}});
  CHECK(y64.dtype() == DType::kFloat64);
  CHECK(y64.GetFlat(0) == Approx(std::sqrt(l2)).epsilon(1e-6));
  NDArray from64 = RunForward("norm", {{"ord", "1"}, {"out_dtype", "float32"}}, {{"data", x.AsType(DType::kFloat64)}});
  CHECK(from64.dtype() == DType::kFloat32);
  CHECK(from64.GetFlat(0) == Approx(l1).epsilon(1e-6));
}

TEST_CASE("reduction shape inference and errors", "[ops][reduce][shape]") {
  auto infer = [](const std::string& op, const KwArgs& p, const TShape& in) {
    Symbol s = Symbol::Create(op, "r", p, {{"data", Symbol::Variable("x")}});
    return InferShape(s, {{"x", in}}).out_shapes[0];
  };
  for (auto& cfg : AxisConfigs()) CHECK(infer("sum", cfg.params, TShape({2, 3, 4})) == cfg.out);
  CHECK(infer("mean", {{"axis", "(1,)"}}, TShape({5, 6})) == TShape({5}));
  CHECK_THROWS_WITH(infer("sum", {{"axis", "(1,1)"}}, TShape({2, 3})), Catch::Contains("Reduction axes have duplicates"));
  CHECK_THROWS_WITH(infer("sum", {{"axis", "2"}}, TShape({2, 3})), Catch::Contains("exceeds input dimensions (2,3)"));
  CHECK_THROWS_WITH(infer("sum", {{"axis", "-3"}}, TShape({2, 3})), Catch::Contains("exceeds input dimensions"));
  CHECK_THROWS_WITH(infer("max", {}, TShape({2, 0})), Catch::Contains("Reduction input's size should > 0"));
  CHECK_THROWS_AS(infer("sum", {{"keepdims", "maybe"}}, TShape({2})), ParamError);
  CHECK(infer("argmax", {}, TShape({2, 3})) == TShape({1}));
  CHECK(infer("argmax", {{"axis", "0"}, {"keepdims", "True"}}, TShape({2, 3})) == TShape({1, 3}));
  CHECK(infer("argmin", {{"axis", "-1"}}, TShape({2, 3, 4})) == TShape({2, 3}));
  CHECK(infer("argmax", {{"axis", "5"}}, TShape({7})) == TShape({1}));  // 1-D ignores axis
  CHECK_THROWS_WITH(infer("argmax", {{"axis", "2"}}, TShape({2, 3})), Catch::Contains("exceeds the input dimension"));
  CHECK(infer("argmax_channel", {}, TShape({4, 5})) == TShape({4}));
  CHECK(infer("norm", {{"axis", "(0,1)"}}, TShape({2, 3, 4})) == TShape({4}));
}

TEST_CASE("argmax, argmin and argmax_channel", "[ops][argmax]") {
  NDArray x = DistinctNonZero(TShape({3, 4}), 4);
  auto naive = [&](bool is_max, int axis) {
    std::vector<float> out;
    int outer = axis == 0 ? 4 : 3, m = axis == 0 ? 3 : 4;
    for (int o = 0; o < outer; ++o) {
      int best = 0;
      for (int k = 1; k < m; ++k) {
        float v = axis == 0 ? x.At({k, o}) : x.At({o, k});
        float b = axis == 0 ? x.At({best, o}) : x.At({o, best});
        if (is_max ? v > b : v < b) best = k;
      }
      out.push_back(static_cast<float>(best));
    }
    return out;
  };
  for (bool is_max : {true, false}) {
    std::string op = is_max ? "argmax" : "argmin";
    RequireClose(RunForward(op, {{"axis", "0"}}, {{"data", x}}), NDArray(TShape({4}), naive(is_max, 0)));
    RequireClose(RunForward(op, {{"axis", "-1"}, {"keepdims", "True"}}, {{"data", x}}),
                 NDArray(TShape({3, 1}), naive(is_max, 1)));
    // Without an axis: the flat index over the whole array.
    int64_t best = 0;
    for (int64_t i = 1; i < 12; ++i)
      if (is_max ? x.GetFlat(i) > x.GetFlat(best) : x.GetFlat(i) < x.GetFlat(best)) best = i;
    RequireClose(RunForward(op, {}, {{"data", x}}), NDArray(TShape({1}), {static_cast<float>(best)}));
    // Zero gradient (MXNet's MakeZeroGradNodes).
    CheckGradients(op, {{"axis", "1"}}, {{"data", x}});
  }
  // Ties: the first occurrence wins.
  NDArray t(TShape({2, 3}), {1, 5, 5, 2, 2, 0});
  RequireClose(RunForward("argmax", {{"axis", "1"}}, {{"data", t}}), NDArray(TShape({2}), {1, 0}));
  RequireClose(RunForward("argmin", {{"axis", "1"}}, {{"data", t}}), NDArray(TShape({2}), {0, 2}));
  RequireClose(RunForward("argmax_channel", {}, {{"data", x}}), NDArray(TShape({3}), naive(true, 1)));
}

TEST_CASE("long reductions are exact and independent of the thread count", "[ops][reduce]") {
  // (3, 70000) summed over axis 1 goes through the chunked path (few outputs, long rows).
  NDArray x = RandomArray(TShape({3, 70000}), 5);
  NDArray y = RunForward("sum", {{"axis", "1"}}, {{"data", x}});
  NDArray n = RunForward("norm", {}, {{"data", x}});
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int64_t i = 0; i < 70000; ++i) s += x.GetFlat(r * 70000 + i);
    CHECK(y.GetFlat(r) == Approx(s).margin(1e-3));
  }
  NDArray y1, n1;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    y1 = RunForward("sum", {{"axis", "1"}}, {{"data", x}});
    n1 = RunForward("norm", {}, {{"data", x}});
  }
  for (int r = 0; r < 3; ++r) CHECK(y1.GetFlat(r) == y.GetFlat(r));
  CHECK(n1.GetFlat(0) == n.GetFlat(0));
  // Gradient of a long mean: every element gets 1/N.
  auto exec = BindSingleOp("mean", {{"axis", "1"}}, {{"data", x}});
  exec->Forward(true);
  exec->Backward({NDArray(TShape({3}), {1, 2, 3})});
  CHECK(exec->grad_arrays()[0].GetFlat(70000 * 2 + 5) == Approx(3.0 / 70000));
}
