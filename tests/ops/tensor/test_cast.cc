// Cast: type conversion and the gradient cast back.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Cast converts types and casts the gradient back", "[ops][Cast][grad]") {
  NDArray x(TShape({5}), {1.7f, -2.2f, 3.0f, 250.4f, -0.5f});
  NDArray y = RunForward("Cast", {{"dtype", "int32"}}, {{"data", x}});
  REQUIRE(y.dtype() == DType::kInt32);
  const int32_t* yi = y.data<int32_t>();
  for (int64_t i = 0; i < 5; ++i) CHECK(yi[i] == static_cast<int32_t>(x.GetFlat(i)));
  NDArray h = RunForward("cast", {{"dtype", "float16"}}, {{"data", x}});
  REQUIRE(h.dtype() == DType::kFloat16);
  CHECK(h.GetFlat(3) == 250.375f);  // nearest half
  // Type inference: the output takes dtype, the input keeps its own.
  Symbol c = Symbol::Create("Cast", "c", {{"dtype", "float64"}}, {{"data", Symbol::Variable("data")}});
  auto t = InferType(c, {{"data", DType::kFloat32}});
  CHECK(t.out_types[0] == DType::kFloat64);
  CHECK(t.arg_types[0] == DType::kFloat32);
  // Gradients float32 -> float32 (the finite-difference harness works in float32).
  CheckGradients("Cast", {{"dtype", "float32"}}, {{"data", RandomArray(TShape({2, 3}), 6)}});
  // float32 -> float64: backward casts the head gradient back to float32.
  auto exec = BindSingleOp("Cast", {{"dtype", "float64"}}, {{"data", x}});
  exec->Forward(true);
  NDArray head(TShape({5}), DType::kFloat64);
  for (int64_t i = 0; i < 5; ++i) head.SetFlat(i, 0.5f * static_cast<float>(i));
  exec->Backward({head});
  REQUIRE(exec->grad_arrays()[0].dtype() == DType::kFloat32);
  for (int64_t i = 0; i < 5; ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 0.5f * static_cast<float>(i));
  CHECK_THROWS_AS(Symbol::Create("Cast", "c2", {{"dtype", "float128"}}, {}), ParamError);
}
