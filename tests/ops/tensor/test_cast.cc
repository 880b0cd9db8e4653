// Cast: type conversion and the gradient cast back; amp_cast and amp_multicast, which convert
// only float32/float16/bfloat16.
#include <cmath>

#include <symbind/executor/invoke.h>

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

TEST_CASE("amp_cast converts AMP floats and passes other dtypes through", "[ops][amp_cast][grad]") {
  NDArray x(TShape({4}), {1.0f / 3, 65504.0f, 70000.0f, -2.5f});
  NDArray h = Invoke("amp_cast", {{"dtype", "float16"}}, {x})[0];
  REQUIRE(h.dtype() == DType::kFloat16);
  // The same rounding as Cast (round to nearest even; beyond float16's range: inf).
  NDArray want = Invoke("Cast", {{"dtype", "float16"}}, {x})[0];
  for (int64_t i = 0; i < 4; ++i) CHECK(h.AsType(DType::kFloat32).GetFlat(i) == want.AsType(DType::kFloat32).GetFlat(i));
  CHECK(std::isinf(h.AsType(DType::kFloat32).GetFlat(2)));
  NDArray xi = x.AsType(DType::kInt32);
  CHECK(Invoke("amp_cast", {{"dtype", "float16"}}, {xi})[0].dtype() == DType::kInt32);
  CheckGradients("amp_cast", {{"dtype", "float32"}}, {{"data", RandomArray(TShape({2, 3}), 3)}});
}

TEST_CASE("amp_multicast casts to the widest (or narrowest) AMP float of its inputs", "[ops][amp_multicast][grad]") {
  NDArray a = RandomArray(TShape({3}), 1), b = RandomArray(TShape({2}), 2);
  auto wide = Invoke("amp_multicast", {{"num_outputs", "3"}},
                     {a.AsType(DType::kFloat16), b, a.AsType(DType::kInt32)});
  REQUIRE(wide.size() == 3);
  CHECK(wide[0].dtype() == DType::kFloat32);
  CHECK(wide[1].dtype() == DType::kFloat32);
  CHECK(wide[2].dtype() == DType::kInt32);
  RequireClose(wide[0], a.AsType(DType::kFloat16).AsType(DType::kFloat32));
  auto narrow = Invoke("amp_multicast", {{"num_outputs", "2"}, {"cast_narrow", "True"}}, {a.AsType(DType::kFloat16), b});
  CHECK(narrow[0].dtype() == DType::kFloat16);
  CHECK(narrow[1].dtype() == DType::kFloat16);
  CheckGradients("amp_multicast", {{"num_outputs", "2"}}, {{"data_0", a}, {"data_1", b}});
}
