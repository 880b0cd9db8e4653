// batch_take: one element per row, indices clipped, any data dtype, no gradient.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
std::vector<float> Values(const NDArray& a) { return std::vector<float>(a.fdata(), a.fdata() + a.Size()); }
}  // namespace

TEST_CASE("batch_take", "[ops][batch_take]") {
  // MXNet's documented example, plus clipping of out-of-range indices.
  const NDArray x({3, 2}, {1, 2, 3, 4, 5, 6});
  NDArray out = RunForward("batch_take", {}, {{"a", x}, {"indices", NDArray({3}, {0, 1, 0})}});
  CHECK(out.shape() == TShape({3}));
  CHECK(Values(out) == std::vector<float>{1, 4, 5});
  out = RunForward("batch_take", {}, {{"a", x}, {"indices", NDArray({3}, {-4, 7, 1})}});
  CHECK(Values(out) == std::vector<float>{1, 4, 6});
  // int32 indices and int64 data; a 3-D a is (rows, M) with M its last axis.
  NDArray a(TShape({2, 2, 3}), DType::kInt64);
  for (int64_t i = 0; i < 12; ++i) a.data<int64_t>()[i] = 100 + i;
  NDArray idx(TShape({2, 2}), DType::kInt32);
  for (int i = 0; i < 4; ++i) idx.data<int32_t>()[i] = 2 - i % 3;
  out = RunForward("batch_take", {}, {{"a", a}, {"indices", idx}});
  REQUIRE(out.dtype() == DType::kInt64);
  CHECK(out.shape() == TShape({2, 2}));
  for (int64_t i = 0; i < 4; ++i) CHECK(out.data<int64_t>()[i] == 100 + i * 3 + (2 - i % 3));
  // Shapes: one index per row; a must be 2-D at least.
  Symbol s = SingleOpSymbol("batch_take", {});
  CHECK(InferShape(s, {{"op_a", TShape({4, 5})}, {"op_indices", TShape({4})}}).out_shapes[0] == TShape({4}));
  CHECK_THROWS_AS(InferShape(s, {{"op_a", TShape({4, 5})}, {"op_indices", TShape({3})}}), ShapeError);
  CHECK_THROWS_AS(InferShape(s, {{"op_a", TShape({4})}, {"op_indices", TShape({4})}}), ShapeError);
  CHECK(!OpRegistry::Global().Get("batch_take").backward);
}
