// gather_nd and scatter_nd: forward against naive loops, negative gather indices, shapes,
// finite-difference gradients, out-of-bounds errors.
#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// indices (M, N) into data of shape s: the flat offset of slice y and the slice length.
std::vector<int64_t> NaiveOffsets(const TShape& s, const NDArray& idx, int64_t* len) {
  int64_t M = idx.shape()[0], N = idx.Size() / M;
  *len = s.ProdDims(static_cast<int>(M), s.ndim());
  std::vector<int64_t> off;
  for (int64_t y = 0; y < N; ++y) {
    int64_t f = 0;
    for (int64_t m = 0; m < M; ++m) {
      int64_t i = static_cast<int64_t>(idx.GetFlat(m * N + y));
      if (i < 0) i += s[static_cast<int>(m)];
      f = f * s[static_cast<int>(m)] + i;
    }
    off.push_back(f * *len);
  }
  return off;
}
}  // namespace

TEST_CASE("gather_nd matches a naive gather", "[ops][gather_nd]") {
  NDArray x = RandomArray(TShape({3, 4, 2}), 1);
  // M = 2 over (3, 4): slices of length 2; indices shaped (2, 2, 3); one negative.
  NDArray idx(TShape({2, 2, 3}), {0, 2, 1, -1, 0, 2, /**/ 3, 0, 1, 2, -4, 3});
  NDArray y = RunForward("gather_nd", {}, {{"data", x}, {"indices", idx}});
  REQUIRE(y.shape() == TShape({2, 3, 2}));
  int64_t len = 0;
  auto off = NaiveOffsets(x.shape(), idx, &len);
  NDArray want(TShape({2, 3, 2}));
  for (size_t k = 0; k < off.size(); ++k)
    for (int64_t j = 0; j < len; ++j) want.SetFlat(static_cast<int64_t>(k) * len + j, x.GetFlat(off[k] + j));
  RequireClose(y, want, 0, 0);
  // MXNet's documented example.
  NDArray d(TShape({2, 2}), {0, 1, 2, 3});
  RequireClose(RunForward("gather_nd", {}, {{"data", d}, {"indices", NDArray(TShape({2, 2}), {1, 0, 0, 1})}}),
               NDArray(TShape({2}), {2, 1}));
  GradCheckOptions opt;
  opt.no_grad = {"indices"};
  CheckGradients("gather_nd", {}, {{"data", x}, {"indices", idx}}, opt);
  // Repeated indices accumulate in the gradient.
  CheckGradients("gather_nd", {}, {{"data", x}, {"indices", NDArray(TShape({1, 3}), {1, 1, 2})}}, opt);
}

TEST_CASE("scatter_nd matches a naive scatter", "[ops][scatter_nd]") {
  NDArray data = RandomArray(TShape({3, 2}), 2);
  NDArray idx(TShape({2, 3}), {0, 2, 1, 3, 0, 1});  // three distinct (row, col) in (3, 4, 2)
  KwArgs p = {{"shape", "(3,4,2)"}};
  NDArray y = RunForward("scatter_nd", p, {{"data", data}, {"indices", idx}});
  int64_t len = 0;
  auto off = NaiveOffsets(TShape({3, 4, 2}), idx, &len);
  NDArray want(TShape({3, 4, 2}));
  for (size_t k = 0; k < off.size(); ++k)
    for (int64_t j = 0; j < len; ++j) want.SetFlat(off[k] + j, data.GetFlat(static_cast<int64_t>(k) * len + j));
  RequireClose(y, want, 0, 0);
  GradCheckOptions opt;
  opt.no_grad = {"indices"};
  CheckGradients("scatter_nd", p, {{"data", data}, {"indices", idx}}, opt);
  // The data shape follows from indices and shape.
  Symbol s = Symbol::Create("scatter_nd", "s", p, {});
  auto r = InferShape(s, {{"s_indices", TShape({2, 3})}});
  CHECK(r.arg_shapes[0] == TShape({3, 2}));
  CHECK(r.out_shapes[0] == TShape({3, 4, 2}));
}

TEST_CASE("gather_nd and scatter_nd errors", "[ops][gather_nd][scatter_nd][errors]") {
  NDArray x = RandomArray(TShape({3, 4}), 1);
  CHECK_THAT(ErrorOf([&] { RunForward("gather_nd", {}, {{"data", x}, {"indices", NDArray(TShape({2, 1}), {3, 0})}}); }),
             Catch::Contains("gather_nd: index 3 at indices[0, 0] is out of bounds for axis 0 of size 3"));
  CHECK_THAT(ErrorOf([&] { RunForward("gather_nd", {}, {{"data", x}, {"indices", NDArray(TShape({3, 1}), {0, 0, 0})}}); }),
             Catch::Contains("number of indices 3 exceeds the data dimension 2"));
  CHECK_THAT(ErrorOf([&] { RunForward("gather_nd", {}, {{"data", x}, {"indices", NDArray(TShape({2}), {0, 0})}}); }),
             Catch::Contains("requires index tensor to have at least 2 dimensions"));
  CHECK_THAT(ErrorOf([&] {
               RunForward("scatter_nd", {{"shape", "(3,4)"}},
                          {{"data", NDArray(TShape({1}), {1})}, {"indices", NDArray(TShape({2, 1}), {-1, 0})}});
             }),
             Catch::Contains("scatter_nd: index -1 at indices[0, 0] is out of bounds"));
}

TEST_CASE("_scatter_set_nd sets the indexed elements and keeps the rest", "[ops][scatter_nd]") {
  // MXNet's documented example: lhs ones (2, 2), rhs [2, 3, 0] at (1, 0), (1, 1), (0, 0).
  NDArray lhs(TShape({2, 2}), {1, 1, 1, 1});
  NDArray rhs(TShape({3}), {2, 3, 0});
  NDArray idx(TShape({2, 3}), {1, 1, 0, 0, 1, 0});
  NDArray out = RunForward("_scatter_set_nd", {{"shape", "(2, 2)"}}, {{"lhs", lhs}, {"rhs", rhs}, {"indices", idx}});
  CHECK(out.ToVector() == std::vector<float>{0, 1, 2, 3});
  CHECK(lhs.ToVector() == std::vector<float>{1, 1, 1, 1});  // a new output leaves lhs alone
  // int32 arrays too; an index out of range is an error naming it.
  NDArray ilhs = lhs.AsType(DType::kInt32), irhs = rhs.AsType(DType::kInt32);
  NDArray iout = RunForward("_scatter_set_nd", {{"shape", "(2, 2)"}}, {{"lhs", ilhs}, {"rhs", irhs}, {"indices", idx}});
  CHECK(iout.dtype() == DType::kInt32);
  CHECK(iout.ToVector() == std::vector<float>{0, 1, 2, 3});
  NDArray bad(TShape({2, 3}), {1, 1, 5, 0, 1, 0});
  CHECK_THROWS_WITH(RunForward("_scatter_set_nd", {{"shape", "(2, 2)"}}, {{"lhs", lhs}, {"rhs", rhs}, {"indices", bad}}),
                    Catch::Contains("out of bounds"));
}
