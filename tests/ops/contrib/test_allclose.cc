// _contrib_allclose against numpy.allclose's rule, element by element.
#include <cmath>
#include <limits>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

uint8_t AllClose(const NDArray& a, const NDArray& b, const KwArgs& params = {}) {
  NDArray r = RunForward("_contrib_allclose", params, {{"a", a}, {"b", b}});
  REQUIRE(r.dtype() == DType::kUint8);
  REQUIRE(r.shape() == TShape(std::vector<int64_t>{}));
  return r.data<uint8_t>()[0];
}

NDArray Floats(const std::vector<float>& v) {
  NDArray a(TShape({static_cast<int64_t>(v.size())}), DType::kFloat32);
  for (size_t i = 0; i < v.size(); ++i) a.fdata()[i] = v[i];
  return a;
}

}  // namespace

TEST_CASE("_contrib_allclose", "[ops][allclose]") {
  // |a - b| <= atol + rtol * |b|: rtol 1e-5 of 100 is 0.001.
  CHECK(AllClose(Floats({100.0f, 1e-8f}), Floats({100.0009f, 1e-9f})) == 1);
  CHECK(AllClose(Floats({100.0f, 1e-8f}), Floats({100.0011f, 1e-9f})) == 0);
  CHECK(AllClose(Floats({100.0f, 1e-7f}), Floats({100.0f, 1e-8f})) == 0);  // atol 1e-8
  CHECK(AllClose(Floats({1.0f, 2.0f}), Floats({1.0f, 2.1f})) == 0);
  CHECK(AllClose(Floats({1.0f, 2.0f}), Floats({1.0f, 2.1f}), {{"atol", "0.2"}}) == 1);
  CHECK(AllClose(Floats({100.0f}), Floats({101.0f}), {{"rtol", "0.01"}, {"atol", "0"}}) == 1);
  CHECK(AllClose(Floats({101.0f}), Floats({100.0f}), {{"rtol", "0.001"}, {"atol", "0"}}) == 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(AllClose(Floats({nan, 1.0f}), Floats({nan, 1.0f})) == 1);
  CHECK(AllClose(Floats({nan, 1.0f}), Floats({nan, 1.0f}), {{"equal_nan", "false"}}) == 0);
  CHECK(AllClose(Floats({nan}), Floats({1.0f})) == 0);
  CHECK(AllClose(Floats({inf, -inf}), Floats({inf, -inf})) == 1);
  CHECK(AllClose(Floats({inf}), Floats({-inf})) == 0);
  // A large array with one element off, found whatever chunk it is in.
  NDArray big = RandomArray(TShape({300000}), 3);
  NDArray off = big.Copy();
  off.fdata()[299999] += 1.0f;
  CHECK(AllClose(big, big.Copy()) == 1);
  CHECK(AllClose(big, off) == 0);
  // Integer and half dtypes compare in their own values.
  NDArray i1(TShape({3}), DType::kInt32), i2(TShape({3}), DType::kInt32);
  for (int k = 0; k < 3; ++k) i1.data<int32_t>()[k] = i2.data<int32_t>()[k] = k * 1000;
  CHECK(AllClose(i1, i2) == 1);
  i2.data<int32_t>()[2] = 2001;
  CHECK(AllClose(i1, i2) == 0);
  CHECK(AllClose(big.AsType(DType::kFloat16), big.AsType(DType::kFloat16)) == 1);
  // Shapes and dtypes must agree.
  CHECK_THROWS(AllClose(Floats({1, 2}), Floats({1, 2, 3})));
  CHECK_THROWS(AllClose(Floats({1, 2}), i1));
}
