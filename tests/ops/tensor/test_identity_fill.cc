// BlockGrad, identity, zeros_like and ones_like: forward and gradients; _copyto's dtype conversion.
#include <cmath>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("BlockGrad, identity, zeros_like, ones_like", "[ops][BlockGrad][identity][zeros_like][ones_like][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 7);
  for (std::string op : {"BlockGrad", "stop_gradient", "_copy", "identity"}) {
    NDArray y = RunForward(op, {}, {{"data", x}});
    for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == x.GetFlat(i));
  }
  NDArray z = RunForward("zeros_like", {}, {{"data", x}}), o = RunForward("ones_like", {}, {{"data", x}});
  for (int64_t i = 0; i < x.Size(); ++i) {
    CHECK(z.GetFlat(i) == 0.0f);
    CHECK(o.GetFlat(i) == 1.0f);
  }
  // identity passes gradients; zeros_like/ones_like have zero gradient (the finite differences
  // agree); BlockGrad's zero gradient is checked directly below.
  for (std::string op : {"_copy", "zeros_like", "ones_like"}) {
    INFO(op);
    CheckGradients(op, {}, {{"data", x}});
  }
  auto exec = BindSingleOp("BlockGrad", {}, {{"data", x}});
  exec->Forward(true);
  exec->Backward({RandomArray(TShape({2, 3}), 8)});
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 0.0f);
}

TEST_CASE("_copyto writes the input into the output given, converted to its dtype", "[ops][copyto]") {
  NDArray x(TShape({2, 3}), {1.5f, -2.f, 3.25f, 0.f, 7.f, -0.5f});
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
    NDArray target(TShape({2, 3}), dtype);
    std::vector<NDArray> out = Invoke("_copyto", {}, {x}, {target});
    CHECK(out[0].SharesStorageWith(target));
    CHECK(target.dtype() == dtype);
    for (int64_t i = 0; i < 6; ++i)
      CHECK(target.GetFlat(i) == (dtype == DType::kInt32 ? std::trunc(x.GetFlat(i)) : x.GetFlat(i)));
  }
  CHECK_THROWS_AS(Invoke("_copyto", {}, {x}, {NDArray(TShape({3, 2}))}), ShapeError);
}
