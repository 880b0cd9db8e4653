// topk, sort, argsort: forward against a naive stable sort written here, index dtypes, shape
// inference, finite-difference gradients of the value outputs, errors.
#include <algorithm>
#include <numeric>
#include <optional>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

// Distinct values 0.1 * (a permutation of 0..n-1) minus an offset: ties never occur and
// finite differences (eps 1e-3) never reorder.
NDArray SpacedArray(const TShape& s, uint64_t seed) {
  std::vector<int> perm(static_cast<size_t>(s.Size()));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  NDArray a(s);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, 0.1f * static_cast<float>(perm[static_cast<size_t>(i)]) - 1.0f);
  return a;
}

struct NaiveTopK {
  NDArray values, indices, mask;
};

// The reference: each row along the axis ordered by (value, position) with std::stable_sort.
NaiveTopK Naive(const NDArray& x, std::optional<int> axis, int64_t k, bool ascend) {
  const TShape& s = x.shape();
  int64_t outer = 1, n = x.Size(), inner = 1;
  int ax = 0;
  if (axis) {
    ax = *axis < 0 ? *axis + s.ndim() : *axis;
    outer = s.ProdDims(0, ax);
    n = s[ax];
    inner = s.ProdDims(ax + 1, s.ndim());
  }
  if (k <= 0) k = n;
  TShape os = axis ? s : TShape({k});
  if (axis) os[ax] = k;
  NaiveTopK r{NDArray(os), NDArray(os), NDArray(s)};
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> pos(static_cast<size_t>(n));
      std::iota(pos.begin(), pos.end(), 0);
      auto at = [&](int64_t j) { return x.GetFlat((o * n + j) * inner + i); };
      std::stable_sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) {
        return ascend ? at(a) < at(b) : at(a) > at(b);
      });
      for (int64_t r2 = 0; r2 < k; ++r2) {
        int64_t dst = (o * k + r2) * inner + i;
        r.values.SetFlat(dst, at(pos[static_cast<size_t>(r2)]));
        r.indices.SetFlat(dst, static_cast<float>(pos[static_cast<size_t>(r2)]));
        r.mask.SetFlat((o * n + pos[static_cast<size_t>(r2)]) * inner + i, 1.0f);
      }
    }
  return r;
}

std::string AxisText(std::optional<int> axis) { return axis ? std::to_string(*axis) : "None"; }

// Forward outputs of a single-op symbol, all visible outputs.
std::vector<NDArray> Outputs(const std::string& op, const KwArgs& params, const NDArray& x) {
  auto exec = BindSingleOp(op, params, {{"data", x}}, {}, OpReq::kNull);
  exec->Forward(false);
  std::vector<NDArray> r;
  for (auto& o : exec->outputs()) r.push_back(o.Copy());
  return r;
}
}  // namespace

TEST_CASE("topk matches a naive sort for every ret_typ and axis", "[ops][topk][ordering]") {
  NDArray x = SpacedArray(TShape({3, 4, 5}), 1);
  for (std::optional<int> axis : {std::optional<int>(-1), std::optional<int>(0), std::optional<int>(1),
                                  std::optional<int>()}) {
    for (int64_t k : {1, 3, 0}) {
      for (bool ascend : {false, true}) {
        INFO("axis=" << AxisText(axis) << " k=" << k << " is_ascend=" << ascend);
        NaiveTopK want = Naive(x, axis, k, ascend);
        KwArgs p = {{"axis", AxisText(axis)}, {"k", std::to_string(k)}, {"is_ascend", ascend ? "1" : "0"}};
        auto with = [&](const char* ret) {
          KwArgs q = p;
          q["ret_typ"] = ret;
          return q;
        };
        RequireClose(Outputs("topk", with("value"), x)[0], want.values, 0, 0, "value");
        RequireClose(Outputs("topk", with("indices"), x)[0], want.indices, 0, 0, "indices");
        RequireClose(Outputs("topk", with("mask"), x)[0], want.mask, 0, 0, "mask");
        auto both = Outputs("topk", with("both"), x);
        REQUIRE(both.size() == 2);
        RequireClose(both[0], want.values, 0, 0, "both/value");
        RequireClose(both[1], want.indices, 0, 0, "both/indices");
        if (k == 0) {
          KwArgs sp = {{"axis", AxisText(axis)}, {"is_ascend", ascend ? "True" : "False"}};
          auto sorted = Outputs("sort", sp, x);
          REQUIRE(sorted.size() == 1);  // the indices output is hidden
          RequireClose(sorted[0], want.values, 0, 0, "sort");
          RequireClose(Outputs("argsort", sp, x)[0], want.indices, 0, 0, "argsort");
        }
      }
    }
  }
  // MXNet's documented defaults: indices of the largest element on the last axis.
  NDArray d(TShape({2, 3}), {0.3f, 0.2f, 0.4f, 0.1f, 0.3f, 0.2f});
  RequireClose(Outputs("topk", {}, d)[0], NDArray(TShape({2, 1}), {2, 1}));
  RequireClose(Outputs("argsort", {{"axis", "0"}}, d)[0], NDArray(TShape({2, 3}), {1, 0, 1, 0, 1, 0}));
}

TEST_CASE("topk orders ties by position and NaN above every number", "[ops][topk][ordering]") {
  NDArray x(TShape({6}), {1, 3, 3, 1, NAN, 3});
  RequireClose(Outputs("topk", {{"k", "3"}}, x)[0], NDArray(TShape({3}), {4, 1, 2}));
  RequireClose(Outputs("topk", {{"k", "3"}, {"is_ascend", "1"}}, x)[0], NDArray(TShape({3}), {0, 3, 1}));
  RequireClose(Outputs("argsort", {}, x)[0], NDArray(TShape({6}), {0, 3, 1, 2, 5, 4}));
  RequireClose(Outputs("argsort", {{"is_ascend", "False"}}, x)[0], NDArray(TShape({6}), {4, 1, 2, 5, 0, 3}));
}

TEST_CASE("topk sort argsort index dtypes and shapes", "[ops][topk][ordering][types]") {
  Symbol data = Symbol::Variable("data");
  auto types = [&](const std::string& op, const KwArgs& p) {
    return InferType(Symbol::Create(op, "t", p, {{"data", data}}), {{"data", DType::kFloat32}}).out_types;
  };
  CHECK(types("topk", {}) == std::vector<DType>{DType::kFloat32});
  CHECK(types("topk", {{"dtype", "int32"}}) == std::vector<DType>{DType::kInt32});
  CHECK(types("topk", {{"ret_typ", "both"}, {"dtype", "int64"}}) ==
        std::vector<DType>{DType::kFloat32, DType::kInt64});
  CHECK(types("topk", {{"ret_typ", "mask"}, {"dtype", "int64"}}) == std::vector<DType>{DType::kFloat32});
  CHECK(types("argsort", {{"dtype", "int64"}}) == std::vector<DType>{DType::kInt64});
  CHECK(types("sort", {}) == std::vector<DType>{DType::kFloat32});
  // Integer indices come out exact.
  NDArray x = SpacedArray(TShape({2, 7}), 3);
  auto out = Outputs("topk", {{"ret_typ", "both"}, {"k", "4"}, {"dtype", "int32"}}, x);
  CHECK(out[1].dtype() == DType::kInt32);
  RequireClose(out[1].AsType(DType::kFloat32), Naive(x, -1, 4, false).indices, 0, 0);
  auto idx = Outputs("argsort", {{"dtype", "uint8"}}, x)[0];
  CHECK(idx.dtype() == DType::kUint8);
  RequireClose(idx.AsType(DType::kFloat32), Naive(x, -1, 0, true).indices, 0, 0);

  auto shape = [&](const std::string& op, const KwArgs& p, const TShape& s) {
    return InferShape(Symbol::Create(op, "t", p, {{"data", data}}), {{"data", s}}).out_shapes;
  };
  CHECK(shape("topk", {{"k", "2"}, {"axis", "1"}}, TShape({3, 4, 5})) == std::vector<TShape>{TShape({3, 2, 5})});
  CHECK(shape("topk", {{"k", "2"}, {"axis", "None"}, {"ret_typ", "both"}}, TShape({3, 4})) ==
        std::vector<TShape>{TShape({2}), TShape({2})});
  CHECK(shape("topk", {{"k", "2"}, {"ret_typ", "mask"}}, TShape({3, 4})) == std::vector<TShape>{TShape({3, 4})});
  CHECK(shape("sort", {{"axis", "None"}}, TShape({3, 4})) == std::vector<TShape>{TShape({12})});
  CHECK(shape("argsort", {{"axis", "0"}}, TShape({3, 4})) == std::vector<TShape>{TShape({3, 4})});
  // Output counts: both shows two; value and sort hide their indices.
  CHECK(Symbol::Create("topk", "t", {{"ret_typ", "both"}}, {{"data", data}}).ListOutputs().size() == 2);
  CHECK(Symbol::Create("topk", "t", {{"ret_typ", "value"}}, {{"data", data}}).ListOutputs().size() == 1);
  CHECK(Symbol::Create("sort", "t", {}, {{"data", data}}).ListOutputs().size() == 1);
}

TEST_CASE("topk and sort gradients by finite differences", "[ops][topk][ordering][grad]") {
  NDArray x = SpacedArray(TShape({3, 5}), 7);
  for (const char* ret : {"value", "both"})
    for (const char* axis : {"-1", "0", "None"}) {
      INFO("ret_typ=" << ret << " axis=" << axis);
      CheckGradients("topk", {{"ret_typ", ret}, {"k", "2"}, {"axis", axis}}, {{"data", x}});
    }
  CheckGradients("sort", {{"axis", "0"}, {"is_ascend", "False"}}, {{"data", x}});
  // Indices and masks: a zero gradient, as MXNet.
  CheckGradients("topk", {{"ret_typ", "mask"}, {"k", "2"}}, {{"data", x}});
  CheckGradients("argsort", {}, {{"data", x}});
}

TEST_CASE("topk errors", "[ops][topk][ordering][errors]") {
  Symbol data = Symbol::Variable("data");
  auto bind_shape = [&](const KwArgs& p, const TShape& s) {
    InferShape(Symbol::Create("topk", "t", p, {{"data", data}}), {{"data", s}});
  };
  CHECK_THAT(ErrorOf([&] { bind_shape({{"k", "5"}}, TShape({2, 4})); }),
             Catch::Contains("k must be smaller than or equal to the 4 elements"));
  CHECK_THAT(ErrorOf([&] { bind_shape({{"axis", "2"}}, TShape({2, 4})); }), Catch::Contains("axis 2 is out of range"));
  CHECK_THAT(ErrorOf([&] { RunForward("argsort", {{"dtype", "uint8"}}, {{"data", RandomArray(TShape({300}), 1)}}); }),
             Catch::Contains("cannot represent the indices of an axis of 300 elements"));
  CHECK_THAT(ErrorOf([&] { RunForward("topk", {}, {{"data", NDArray(TShape({2}), DType::kBool)}}); }),
             Catch::Contains("topk: unsupported dtype bool"));
}

TEST_CASE("topk and sort keep integer data in its dtype", "[ops][topk][ordering][dtype]") {
  // Values beyond float32's exact range stay distinct and exact.
  NDArray x(TShape({4}), DType::kInt32);
  const int32_t v[] = {1234567891, 1234567890, -5, 1234567892};
  std::copy(v, v + 4, x.data<int32_t>());
  NDArray top = RunForward("topk", {{"k", "2"}, {"ret_typ", "value"}}, {{"data", x}});
  REQUIRE(top.dtype() == DType::kInt32);
  CHECK(top.data<int32_t>()[0] == 1234567892);
  CHECK(top.data<int32_t>()[1] == 1234567891);
  NDArray idx = RunForward("argsort", {}, {{"data", x}});
  CHECK(idx.ToVector() == std::vector<float>{2, 1, 0, 3});
  NDArray sorted = RunForward("sort", {{"is_ascend", "False"}}, {{"data", x}});
  CHECK(std::vector<int32_t>(sorted.data<int32_t>(), sorted.data<int32_t>() + 4) ==
        std::vector<int32_t>{1234567892, 1234567891, 1234567890, -5});
  // The value gradient flows back to the chosen positions in int32 as well.
  auto exec = test::BindSingleOp("topk", {{"k", "2"}, {"ret_typ", "value"}}, {{"data", x}});
  exec->Forward(true);
  NDArray head(TShape({2}), DType::kInt32);
  head.data<int32_t>()[0] = 3;
  head.data<int32_t>()[1] = 5;
  exec->Backward({head});
  const NDArray& dx = exec->grad_arrays()[0];
  REQUIRE(dx.dtype() == DType::kInt32);
  CHECK(std::vector<int32_t>(dx.data<int32_t>(), dx.data<int32_t>() + 4) == std::vector<int32_t>{5, 0, 0, 3});
  NDArray mask = RunForward("topk", {{"k", "1"}, {"ret_typ", "mask"}, {"is_ascend", "True"}}, {{"data", x}});
  CHECK(std::vector<int32_t>(mask.data<int32_t>(), mask.data<int32_t>() + 4) == std::vector<int32_t>{0, 0, 1, 0});
}
