// one_hot: forward against a naive loop (out-of-range rows stay off), dtype, shapes.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("one_hot matches a naive loop", "[ops][one_hot]") {
  NDArray idx(TShape({2, 3}), {1, 0, 4, -1, 2.7f, 3});
  KwArgs p = {{"depth", "4"}, {"on_value", "5"}, {"off_value", "-0.5"}};
  NDArray y = RunForward("one_hot", p, {{"indices", idx}});
  REQUIRE(y.shape() == TShape({2, 3, 4}));
  NDArray want(TShape({2, 3, 4}));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j)
      want.SetFlat(i * 4 + j, static_cast<int64_t>(idx.GetFlat(i)) == j ? 5.0f : -0.5f);
  RequireClose(y, want, 0, 0);
  // dtype picks the output type; integer indices work too.
  Symbol s = Symbol::Create("one_hot", "h", {{"depth", "3"}, {"dtype", "int32"}}, {});
  auto types = InferType(s, {{"h_indices", DType::kInt64}});
  CHECK(types.out_types[0] == DType::kInt32);
  NDArray ii(TShape({2}), DType::kInt64);
  ii.SetFlat(0, 2);
  ii.SetFlat(1, 0);
  NDArray yi = RunForward("one_hot", {{"depth", "3"}, {"dtype", "int32"}}, {{"indices", ii}});
  CHECK(yi.dtype() == DType::kInt32);
  RequireClose(yi.AsType(DType::kFloat32), NDArray(TShape({2, 3}), {0, 0, 1, 1, 0, 0}), 0, 0);
}

TEST_CASE("one_hot has a zero gradient", "[ops][one_hot][grad]") {
  // MXNet's MakeZeroGradNodes: the indices get zeros, finite differences agree (the output is
  // piecewise constant in the indices).
  CheckGradients("one_hot", {{"depth", "5"}}, {{"indices", NDArray(TShape({2, 2}), {0.5f, 1.5f, 2.5f, 3.5f})}});
}

TEST_CASE("one_hot, pick and gather_nd on NaN and huge indices", "[ops][one_hot][pick][gather_nd][errors]") {
  // one_hot: no valid index, a row of off_value; pick clips (NaN counts as the lowest index,
  // as x86's conversion gives); gather_nd refuses.
  NDArray bad(TShape({3}), {NAN, 1e30f, -1e30f});
  RequireClose(RunForward("one_hot", {{"depth", "2"}}, {{"indices", bad}}), NDArray(TShape({3, 2})), 0, 0);
  NDArray x(TShape({3, 4}), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  RequireClose(RunForward("pick", {{"axis", "1"}}, {{"data", x}, {"index", bad}}), NDArray(TShape({3}), {0, 7, 8}), 0, 0);
  try {
    RunForward("gather_nd", {}, {{"data", x}, {"indices", NDArray(TShape({1, 1}), {NAN})}});
    FAIL("gather_nd accepted a NaN index");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("gather_nd: index nan at indices[0, 0] is out of bounds"));
  }
}
