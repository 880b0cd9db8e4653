// shape_array and size_array: int64 outputs computed from the input's shape, any input dtype.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("shape_array and size_array", "[ops][shape_array]") {
  for (TShape s : {TShape({2, 3, 4}), TShape({7}), TShape({1, 0, 5})}) {
    INFO(s);
    NDArray x(s, DType::kInt8);
    NDArray shape = RunForward("shape_array", {}, {{"data", x}});
    CHECK(shape.dtype() == DType::kInt64);
    REQUIRE(shape.shape() == TShape({s.ndim()}));
    for (int d = 0; d < s.ndim(); ++d) CHECK(shape.data<int64_t>()[d] == s[d]);
    NDArray size = RunForward("size_array", {}, {{"data", x}});
    CHECK(size.dtype() == DType::kInt64);
    REQUIRE(size.shape() == TShape({1}));
    CHECK(size.data<int64_t>()[0] == s.Size());
  }
  Symbol sym = Symbol::Create("shape_array", "s", {}, {});
  CHECK(InferType(sym, {{"s_data", DType::kFloat16}}).out_types[0] == DType::kInt64);
  // A zero gradient (MXNet's MakeZeroGradNodes).
  CheckGradients("shape_array", {}, {{"data", RandomArray(TShape({2, 3}), 1)}});
}
