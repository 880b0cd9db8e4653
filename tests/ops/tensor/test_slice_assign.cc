// _slice_assign and _slice_assign_scalar (x[begin:end:step] = value, MXNet's __setitem__)
// against nested loops over the window, in place through Invoke and in other dtypes.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

// Element (i, j) of a 4 x 6 array is in the window rows 1..3, columns 5, 3, 1 (step -2).
bool InWindow(int64_t i, int64_t j) { return i >= 1 && i < 4 && j % 2 == 1; }
// The window element (i, j) receives: rows from 0, columns 5 -> 0, 3 -> 1, 1 -> 2.
int64_t WindowIndex(int64_t i, int64_t j) { return (i - 1) * 3 + (5 - j) / 2; }

const KwArgs kWindow{{"begin", "(1, None)"}, {"end", "(None, 0)"}, {"step", "(None, -2)"}};

}  // namespace

TEST_CASE("_slice_assign writes rhs into the window and keeps the rest of lhs", "[ops][slice_assign]") {
  NDArray lhs = RandomArray(TShape({4, 6}), 1), rhs = RandomArray(TShape({3, 3}), 2);
  const NDArray before = lhs.Copy();
  // As NDArray.__setitem__ calls it: the output is lhs itself.
  std::vector<NDArray> out = Invoke("_slice_assign", kWindow, {lhs, rhs}, {lhs});
  CHECK(out[0].SharesStorageWith(lhs));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      INFO(i << ", " << j);
      CHECK(lhs.At({i, j}) == (InWindow(i, j) ? rhs.GetFlat(WindowIndex(i, j)) : before.At({i, j})));
    }
  // Into a new array the input stays as it was.
  NDArray fresh = Invoke("_crop_assign", kWindow, {before, rhs})[0];
  RequireClose(fresh, lhs, 0.f, 0.f);
  CHECK(before.At({1, 5}) != rhs.GetFlat(0));
}

TEST_CASE("_slice_assign_scalar fills the window in the array's dtype", "[ops][slice_assign]") {
  for (DType dtype : {DType::kFloat32, DType::kInt32, DType::kFloat16, DType::kUint8}) {
    NDArray x = RandomArray(TShape({4, 6}), 3, 0.f, 9.f).AsType(dtype);
    const NDArray before = x.Copy();
    KwArgs params = kWindow;
    params["scalar"] = "7";
    Invoke("_slice_assign_scalar", params, {x}, {x});
    CHECK(x.dtype() == dtype);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 6; ++j) CHECK(x.At({i, j}) == (InWindow(i, j) ? 7.f : before.At({i, j})));
  }
  NDArray whole(TShape({2, 2}));
  Invoke("_crop_assign_scalar", {{"begin", "(None,)"}, {"end", "(None,)"}, {"scalar", "-1.5"}}, {whole}, {whole});
  RequireClose(whole, NDArray(TShape({2, 2}), {-1.5f, -1.5f, -1.5f, -1.5f}), 0.f, 0.f);
}

TEST_CASE("_slice_assign rejects a value whose shape is not the window's", "[ops][slice_assign][errors]") {
  NDArray lhs = RandomArray(TShape({4, 6}), 1);
  CHECK_THROWS_AS(Invoke("_slice_assign", kWindow, {lhs, RandomArray(TShape({3, 2}), 2)}), ShapeError);
  CHECK_THROWS_AS(Invoke("_slice_assign", {{"begin", "(0,)"}, {"end", "(2,)"}, {"step", "(0,)"}},
                         {lhs, RandomArray(TShape({2, 6}), 2)}),
                  ShapeError);
  CHECK_THROWS_AS(Invoke("_slice_assign", kWindow, {lhs, RandomArray(TShape({3, 3}), 2).AsType(DType::kInt32)}),
                  TypeError);
}
