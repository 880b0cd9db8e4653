// _contrib_quantize_v2, _contrib_quantize and _contrib_dequantize against the formulas of
// docs/quantization.md, element by element.
#include <symbind/ops/quantization/quantization_util.h>

#include "quant_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("quantize_v2 int8: x * 127.5 / R rounded half to even, clamped to -128..127", "[ops][quantization]") {
  // Ties at +-0.5 levels, the range's ends, and values past them.
  const float r = 2.0f, step = r / 127.5f;
  NDArray x(TShape({8}), std::vector<float>{0.5f * step, 1.5f * step, -2.5f * step, r, -r, 3.0f, -3.0f, 0.3f});
  auto out = RunAll("_contrib_quantize_v2", {{"min_calib_range", "-1.5"}, {"max_calib_range", "2"}}, {{"data", x}});
  REQUIRE(out[0].dtype() == DType::kInt8);
  for (int64_t i = 0; i < x.Size(); ++i) {
    const double want = RoundClamp(static_cast<double>(x.GetFlat(i) * (127.5f / r)), -128, 127);
    CHECK(out[0].GetFlat(i) == want);
  }
  CHECK(out[0].GetFlat(0) == 0);    // 0.5 -> 0 (to even)
  CHECK(out[0].GetFlat(1) == 2);    // 1.5 -> 2
  CHECK(out[0].GetFlat(4) == -128); // -R reaches -128 as in MXNet's CPU kernel
  CHECK(out[1].GetFlat(0) == -2.0f);
  CHECK(out[2].GetFlat(0) == 2.0f);
}

TEST_CASE("quantize_v2 uint8 and auto: 255.5 / R, no zero point, the range passes through", "[ops][quantization]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 11, -0.5f, 4.0f);
  for (const char* type : {"uint8", "auto"}) {
    auto out = RunAll("_contrib_quantize_v2", {{"out_type", type}, {"min_calib_range", "0"}, {"max_calib_range", "3.5"}},
                      {{"data", x}});
    REQUIRE(out[0].dtype() == DType::kUint8);
    for (int64_t i = 0; i < x.Size(); ++i)
      CHECK(out[0].GetFlat(i) == RoundClamp(x.GetFlat(i) * (255.5f / 3.5f), 0, 255));
    CHECK(out[1].GetFlat(0) == 0.0f);
    CHECK(out[2].GetFlat(0) == 3.5f);
  }
  // auto with a negative calibrated minimum, or without calibration, is int8.
  CHECK(RunAll("_contrib_quantize_v2", {{"out_type", "auto"}, {"min_calib_range", "-1"}, {"max_calib_range", "1"}},
               {{"data", x}})[0].dtype() == DType::kInt8);
  CHECK(RunAll("_contrib_quantize_v2", {{"out_type", "auto"}}, {{"data", x}})[0].dtype() == DType::kInt8);
}

TEST_CASE("quantize_v2 without calibration uses the data's own range", "[ops][quantization]") {
  NDArray x = RandomArray(TShape({5, 7}), 12, -3.0f, 1.0f);
  float lo = x.GetFlat(0), hi = lo;
  for (int64_t i = 0; i < x.Size(); ++i) lo = std::min(lo, x.GetFlat(i)), hi = std::max(hi, x.GetFlat(i));
  const float r = std::max(std::fabs(lo), std::fabs(hi));
  auto out = RunAll("_contrib_quantize_v2", {}, {{"data", x}});
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(out[0].GetFlat(i) == RoundClamp(x.GetFlat(i) * (127.5f / r), -128, 127));
  CHECK(out[1].GetFlat(0) == -r);
  CHECK(out[2].GetFlat(0) == r);
}

TEST_CASE("quantize_v2 passes quantized data through with its type's full range", "[ops][quantization]") {
  NDArray q = RandomLevels(TShape({6}), DType::kUint8, 0, 255, 13);
  auto out = RunAll("_contrib_quantize_v2", {}, {{"data", q}});
  REQUIRE(out[0].dtype() == DType::kUint8);
  for (int64_t i = 0; i < q.Size(); ++i) CHECK(out[0].GetFlat(i) == q.GetFlat(i));
  CHECK(out[1].GetFlat(0) == 0.0f);
  CHECK(out[2].GetFlat(0) == 255.5f);
}

TEST_CASE("quantize (weights): 127 / R and 255 / R over the given range", "[ops][quantization]") {
  NDArray w = RandomArray(TShape({4, 3}), 14, -0.7f, 0.9f);
  auto s8 = RunAll("_contrib_quantize", {{"out_type", "int8"}}, {{"data", w}, {"min_range", Range(-0.7f)}, {"max_range", Range(0.9f)}});
  REQUIRE(s8[0].dtype() == DType::kInt8);
  for (int64_t i = 0; i < w.Size(); ++i) CHECK(s8[0].GetFlat(i) == RoundClamp(w.GetFlat(i) * (127.0f / 0.9f), -128, 127));
  CHECK(s8[1].GetFlat(0) == -0.9f);
  CHECK(s8[2].GetFlat(0) == 0.9f);
  auto u8 = RunAll("_contrib_quantize", {}, {{"data", w}, {"min_range", Range(0.0f)}, {"max_range", Range(0.9f)}});
  REQUIRE(u8[0].dtype() == DType::kUint8);  // MXNet's default out_type
  for (int64_t i = 0; i < w.Size(); ++i) CHECK(u8[0].GetFlat(i) == RoundClamp(w.GetFlat(i) * (255.0f / 0.9f), 0, 255));
}

TEST_CASE("dequantize: q * R / 127.5 (int8) and q * R / 255.5 (uint8), a round trip within half a step",
          "[ops][quantization]") {
  NDArray x = RandomArray(TShape({3, 10}), 15, -2.0f, 2.0f);
  auto q = RunAll("_contrib_quantize_v2", {{"min_calib_range", "-2"}, {"max_calib_range", "2"}}, {{"data", x}});
  NDArray y = RunForward("_contrib_dequantize", {}, {{"data", q[0]}, {"min_range", q[1]}, {"max_range", q[2]}});
  REQUIRE(y.dtype() == DType::kFloat32);
  for (int64_t i = 0; i < x.Size(); ++i) {
    CHECK(y.GetFlat(i) == q[0].GetFlat(i) * (1.0f / (127.5f / 2.0f)));
    CHECK(std::fabs(y.GetFlat(i) - x.GetFlat(i)) <= 0.5f * 2.0f / 127.5f + 1e-6f);
  }
  NDArray u = RandomLevels(TShape({9}), DType::kUint8, 0, 255, 16);
  NDArray yu = RunForward("_contrib_dequantize", {}, {{"data", u}, {"min_range", Range(0)}, {"max_range", Range(3)}});
  for (int64_t i = 0; i < u.Size(); ++i) CHECK(yu.GetFlat(i) == u.GetFlat(i) * (1.0f / (255.5f / 3.0f)));
}

TEST_CASE("quantization ops reject the wrong dtypes with the node and input named", "[ops][quantization][errors]") {
  NDArray f = RandomArray(TShape({4}), 17);
  REQUIRE_THROWS_WITH(RunAll("_contrib_dequantize", {}, {{"data", f}, {"min_range", Range(0)}, {"max_range", Range(1)}}),
                      Catch::Contains("operator op (_contrib_dequantize)") &&
                          Catch::Contains("input 'data' must be int8 or uint8"));
  NDArray i32 = RandomLevels(TShape({4}), DType::kInt32, -5, 5, 18);
  REQUIRE_THROWS_WITH(RunAll("_contrib_quantize_v2", {}, {{"data", i32}}),
                      Catch::Contains("must be int8 or uint8") && Catch::Contains("int32"));
}

TEST_CASE("SaturateRound: clamp, then round half to even, as nearbyint does", "[quantize]") {
  int64_t wrong = 0;
  for (int i = -140000; i <= 140000; ++i) {
    const float x = float(i) / 512.0f;  // every tie and fraction of 1/512 in [-273, 273]
    wrong += symbind::quant::SaturateRound<int8_t>(x) != int8_t(std::nearbyint(std::min(std::max(x, -128.0f), 127.0f)));
    wrong += symbind::quant::SaturateRound<uint8_t>(x) != uint8_t(std::nearbyint(std::min(std::max(x, 0.0f), 255.0f)));
  }
  CHECK(wrong == 0);
  CHECK(symbind::quant::SaturateRound<int8_t>(-127.5f) == -128);
  CHECK(symbind::quant::SaturateRound<int8_t>(126.5f) == 126);
  CHECK(symbind::quant::SaturateRound<uint8_t>(1e30f) == 255);
  CHECK(symbind::quant::SaturateRound<int8_t>(-std::numeric_limits<float>::infinity()) == -128);
  CHECK(symbind::quant::SaturateRound<int8_t>(std::nanf("")) == 0);
}

// The array kernels (AVX2 where the CPU has it; ctest's quantize_round_base entry runs the
// portable loop) against SaturateRound element by element: ties, values past the range, NaN,
// infinities, negative zero, int32 sums past float's exact integers, lengths off the vector width.
TEST_CASE("ScaleRound equals SaturateRound of each scaled element, for float32 and int32 input (with a bias)", "[quantize_round]") {
  std::vector<float> floats;
  std::vector<int32_t> sums;
  for (int i = -70000; i <= 70000; i += 7) floats.push_back(float(i) / 256.0f);
  for (float v : {std::nanf(""), -std::nanf(""), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), -0.0f, 0.5f, -0.5f, 1.5f, 127.5f, -128.5f, 255.5f, 1e30f})
    floats.push_back(v);
  for (int64_t i = -300000; i <= 300000; i += 13) sums.push_back(static_cast<int32_t>(i * 7151));
  for (int32_t v : {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 16777217, -16777217, 0})
    sums.push_back(v);
  for (float scale : {1.0f, 0.37f, 1e-4f, -2.5f})
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{33}, static_cast<int64_t>(floats.size())}) {
      INFO("scale " << scale << ", " << n << " elements");
      std::vector<int8_t> s8(n);
      std::vector<uint8_t> u8(n);
      quant::ScaleRound(floats.data(), n, scale, s8.data());
      quant::ScaleRound(floats.data(), n, scale, u8.data());
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) {
        wrong += s8[i] != quant::SaturateRound<int8_t>(floats[i] * scale);
        wrong += u8[i] != quant::SaturateRound<uint8_t>(floats[i] * scale);
      }
      CHECK(wrong == 0);
      const int64_t m = std::min<int64_t>(n, static_cast<int64_t>(sums.size()));
      quant::ScaleRound(sums.data(), m, scale * 1e-3f, s8.data());
      quant::ScaleRound(sums.data(), m, scale * 1e-3f, u8.data());
      for (int64_t i = 0; i < m; ++i) {
        wrong += s8[i] != quant::SaturateRound<int8_t>(static_cast<float>(sums[i]) * (scale * 1e-3f));
        wrong += u8[i] != quant::SaturateRound<uint8_t>(static_cast<float>(sums[i]) * (scale * 1e-3f));
      }
      CHECK(wrong == 0);
      // With a bias added to the int32 sums first (wrapping past int32's ends, as the kernels' sums do).
      for (const int32_t bias : {int32_t{0}, int32_t{-77777}, std::numeric_limits<int32_t>::max()}) {
        quant::ScaleRound(sums.data(), m, bias, scale * 1e-3f, s8.data());
        quant::ScaleRound(sums.data(), m, bias, scale * 1e-3f, u8.data());
        for (int64_t i = 0; i < m; ++i) {
          const float biased = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(sums[i]) + static_cast<uint32_t>(bias)));
          wrong += s8[i] != quant::SaturateRound<int8_t>(biased * (scale * 1e-3f));
          wrong += u8[i] != quant::SaturateRound<uint8_t>(biased * (scale * 1e-3f));
        }
        CHECK(wrong == 0);
      }
    }
}

// Dequantize, relu / clip / leaky, quantize in one pass (_fused_quantized_act's kernel) against
// the scalar formula, for every level of both types, both output types, lengths off the vector
// width; quantize_round_base runs the portable loop.
TEST_CASE("ActScaleRound equals SaturateRound(act(x * step) * scale) on every level", "[quantize_round]") {
  std::vector<int8_t> s8;
  std::vector<uint8_t> u8;
  for (int rep = 0; rep < 3; ++rep)
    for (int v = 0; v < 256; ++v) {
      s8.push_back(static_cast<int8_t>(v - 128));
      u8.push_back(static_cast<uint8_t>(v));
    }
  const int64_t n = static_cast<int64_t>(s8.size()) - 5;  // a tail past the last vector
  FusedActivation relu{FusedActivation::kRelu}, clip{FusedActivation::kClip, 0.0f, 6.0f}, none{};
  FusedActivation leaky{FusedActivation::kLeaky};
  leaky.slope = 0.1f;
  int64_t wrong = 0;
  for (const FusedActivation& act : {relu, clip, leaky, none})
    for (float step : {0.05f, 0.0471f})
      for (float scale : {21.25f, 40.0f}) {
        std::vector<int8_t> o8(static_cast<size_t>(n));
        std::vector<uint8_t> ou(static_cast<size_t>(n));
        quant::ActScaleRound(s8.data(), n, step, act, scale, o8.data());
        quant::ActScaleRound(u8.data(), n, step, act, scale, ou.data());
        for (int64_t i = 0; i < n; ++i) {
          wrong += o8[size_t(i)] != quant::SaturateRound<int8_t>(act(static_cast<float>(s8[size_t(i)]) * step) * scale);
          wrong += ou[size_t(i)] != quant::SaturateRound<uint8_t>(act(static_cast<float>(u8[size_t(i)]) * step) * scale);
        }
        quant::ActScaleRound(s8.data(), n, step, act, scale, ou.data());
        quant::ActScaleRound(u8.data(), n, step, act, scale, o8.data());
        for (int64_t i = 0; i < n; ++i) {
          wrong += ou[size_t(i)] != quant::SaturateRound<uint8_t>(act(static_cast<float>(s8[size_t(i)]) * step) * scale);
          wrong += o8[size_t(i)] != quant::SaturateRound<int8_t>(act(static_cast<float>(u8[size_t(i)]) * step) * scale);
        }
      }
  CHECK(wrong == 0);
}

// The quantized add's and BatchNorm's kernels against their scalar formulas, every type pair,
// sums past int32's range (the clamp), lengths off the vector width.
TEST_CASE("AddScaledLevels and ScaleShiftLevels equal their scalar formulas", "[quantize_round]") {
  std::mt19937 rng(5);
  std::vector<int8_t> s8(101);
  std::vector<uint8_t> u8(101);
  for (size_t i = 0; i < s8.size(); ++i) {
    s8[i] = static_cast<int8_t>(int(rng() % 256) - 128);
    u8[i] = static_cast<uint8_t>(rng() % 256);
  }
  s8[0] = -128, u8[0] = 255;
  int64_t wrong = 0;
  auto check_add = [&](const auto* a, const auto* b, float wa, float wb, auto zero) {
    using TO = decltype(zero);
    std::vector<TO> y(s8.size());
    quant::AddScaledLevels(a, b, static_cast<int64_t>(y.size()), wa, wb, y.data());
    for (size_t i = 0; i < y.size(); ++i)
      wrong += y[i] != quant::SaturateRound<TO>(static_cast<float>(a[i]) * wa + static_cast<float>(b[i]) * wb);
  };
  for (float wa : {0.37f, 1.5f, 3e7f})
    for (float wb : {-0.61f, 2.25f}) {
      check_add(s8.data(), s8.data(), wa, wb, int8_t{});
      check_add(s8.data(), u8.data(), wa, wb, uint8_t{});
      check_add(u8.data(), s8.data(), wa, wb, int32_t{});
      check_add(u8.data(), u8.data(), wa, wb, int32_t{});
      check_add(s8.data(), u8.data(), wa, wb, int32_t{});
    }
  const float scale[2] = {0.43f, -1.7f}, shift[2] = {3.5f, -20.25f};
  const int64_t inner = 50;  // 2 planes of 50: a vector of 32 and a tail each
  std::vector<int8_t> y(100);
  quant::ScaleShiftLevels(s8.data(), 1, 2, inner, 0.5f, scale, shift, y.data());
  for (int64_t i = 0; i < 100; ++i)
    wrong += y[size_t(i)] != quant::SaturateRound<int8_t>(static_cast<float>(s8[size_t(i)]) * scale[i / inner] + shift[i / inner]);
  const float to_int8 = 127.5f / 255.5f;
  quant::ScaleShiftLevels(u8.data(), 1, 2, inner, to_int8, scale, shift, y.data());
  for (int64_t i = 0; i < 100; ++i) {
    const float level = static_cast<float>(quant::SaturateRound<int8_t>(static_cast<float>(u8[size_t(i)]) * to_int8));
    wrong += y[size_t(i)] != quant::SaturateRound<int8_t>(level * scale[i / inner] + shift[i / inner]);
  }
  CHECK(wrong == 0);
}
