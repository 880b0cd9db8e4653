// _contrib_index_array: each element's own multi-index (all axes or the selected ones, negative
// too), int64, against naive unravelling.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_contrib_index_array lists each element's multi-index", "[ops][index_array]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 1);
  struct Case { const char* axes; std::vector<int> pick; };
  for (const Case& c : {Case{nullptr, {0, 1, 2}}, Case{"(2,0)", {2, 0}}, Case{"(-1,)", {2}}}) {
    INFO((c.axes ? c.axes : "all"));
    KwArgs p;
    if (c.axes) p["axes"] = c.axes;
    NDArray got = Invoke("_contrib_index_array", p, {x})[0];
    CHECK(got.dtype() == DType::kInt64);
    const int64_t m = static_cast<int64_t>(c.pick.size());
    REQUIRE(got.shape() == TShape({2, 3, 4, m}));
    NDArray g = got.AsType(DType::kFloat32);
    for (int64_t i = 0; i < x.Size(); ++i) {
      const int64_t coord[3] = {i / 12, (i / 4) % 3, i % 4};
      for (int64_t j = 0; j < m; ++j) CHECK(g.GetFlat(i * m + j) == coord[c.pick[j]]);
    }
  }
  CHECK_THROWS_WITH(Invoke("_contrib_index_array", {{"axes", "(3,)"}}, {x}), Catch::Contains("out of range"));
  // The gradient is zero.
  auto exec = BindSingleOp("_contrib_index_array", {}, {{"data", x}});
  exec->Forward(true);
  exec->Backward({NDArray(TShape({2, 3, 4, 3}), DType::kInt64)});
  RequireClose(exec->grad_arrays()[0], NDArray(x.shape(), std::vector<float>(24, 0.0f)));
}
