// _ravel_multi_index and _unravel_index against naive row-major arithmetic, both ways, with
// shape[0] = -1; dtypes kept; indices out of range named.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("ravel_multi_index and unravel_index are row-major and inverse", "[ops][ravel]") {
  // Columns are multi-indices into shape (3, 4, 5).
  NDArray multi(TShape({3, 4}), {0, 2, 1, 2,  //
                                 3, 0, 1, 3,  //
                                 4, 1, 0, 4});
  NDArray flat(TShape({4}));
  for (int64_t i = 0; i < 4; ++i)
    flat.SetFlat(i, (multi.GetFlat(i) * 4 + multi.GetFlat(4 + i)) * 5 + multi.GetFlat(8 + i));
  for (const char* shape : {"(3,4,5)", "(-1,4,5)"}) {
    INFO(shape);
    RequireClose(RunForward("_ravel_multi_index", {{"shape", shape}}, {{"data", multi}}), flat);
    RequireClose(RunForward("_unravel_index", {{"shape", shape}}, {{"data", flat}}), multi);
  }
  CHECK(OpRegistry::Global().Get("ravel_multi_index").name == "_ravel_multi_index");
  CHECK(OpRegistry::Global().Get("unravel_index").name == "_unravel_index");
  NDArray fi = Invoke("_unravel_index", {{"shape", "(3,4,5)"}}, {flat.AsType(DType::kInt64)})[0];
  CHECK(fi.dtype() == DType::kInt64);
  RequireClose(fi.AsType(DType::kFloat32), multi);
}

TEST_CASE("ravel_multi_index and unravel_index reject indices out of range", "[ops][ravel]") {
  NDArray bad(TShape({2, 2}), {0, 1, 2, 4});
  CHECK_THROWS_WITH(Invoke("_ravel_multi_index", {{"shape", "(2,4)"}}, {bad}),
                    Catch::Contains("index 4 of item 1 is out of bounds for axis 1"));
  CHECK_THROWS_WITH(Invoke("_unravel_index", {{"shape", "(2,4)"}}, {NDArray(TShape({2}), {3, 8})}),
                    Catch::Contains("flat index 8 of item 1 is out of bounds"));
  CHECK_THROWS_WITH(Invoke("_ravel_multi_index", {{"shape", "(3,4,5)"}}, {bad}), Catch::Contains("(3, N)"));
}
