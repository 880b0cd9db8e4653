// Rounding to int8 / uint8 levels, as oneDNN rounds (clamp to the type's range, then half to
// even; NaN gives 0): one element (SaturateRound), or whole arrays scaled first (ScaleRound),
// on AVX2 where the CPU has it, with the same results as the scalar code; and relu on levels.
//
//   ScaleRound(sums, n, scale, levels);  // levels[i] = SaturateRound<int8_t>(float(sums[i]) * scale)
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <symbind/ops/kernels/gemm.h>

namespace symbind {
namespace quant {

// x within int32's range as floats hold it: -2^31 and the largest float below 2^31.
inline float ClampToInt32(float x) { return std::min(std::max(x, -2147483648.0f), 2147483520.0f); }

// x clamped to T's range, then rounded half to even (oneDNN's saturate-and-round); NaN gives 0.
template <typename T>
inline T SaturateRound(float x) {
  if (std::isnan(x)) return T(0);
  if constexpr (std::is_same_v<T, int32_t>) {
    return static_cast<T>(std::nearbyint(ClampToInt32(x)));
  } else {
    x = std::min(std::max(x, static_cast<float>(std::numeric_limits<T>::lowest())),
                 static_cast<float>(std::numeric_limits<T>::max()));
    // Half to even without a libm call (nearbyint is one on SSE2): adding 1.5 * 2^23 leaves no
    // fraction bits for |x| <= 2^22, so the sum rounds as the FPU does, to nearest even.
    constexpr float kShift = 12582912.0f;
    return static_cast<T>((x + kShift) - kShift);
  }
}

// q[i] = SaturateRound<T>(x[i] * scale) for i < n, in parallel chunks (float32 data quantized,
// or int32 sums requantized; the product is rounded to float first, as the scalar code does).
void ScaleRound(const float* x, int64_t n, float scale, int8_t* q);
void ScaleRound(const float* x, int64_t n, float scale, uint8_t* q);
void ScaleRound(const int32_t* x, int64_t n, float scale, int8_t* q);
void ScaleRound(const int32_t* x, int64_t n, float scale, uint8_t* q);
// q[i] = SaturateRound<T>(float(x[i] + bias) * scale), the int32 add wrapping: a plane of sums
// with its channel's bias, requantized in one pass.
void ScaleRound(const int32_t* x, int64_t n, int32_t bias, float scale, int8_t* q);
void ScaleRound(const int32_t* x, int64_t n, int32_t bias, float scale, uint8_t* q);
// Levels of one quantized type rescaled to another's (a quantized Concat's inputs).
void ScaleRound(const int8_t* x, int64_t n, float scale, int8_t* q);
void ScaleRound(const int8_t* x, int64_t n, float scale, uint8_t* q);
void ScaleRound(const uint8_t* x, int64_t n, float scale, int8_t* q);
void ScaleRound(const uint8_t* x, int64_t n, float scale, uint8_t* q);

// q[i] = SaturateRound<T>(act(x[i] * step) * scale): levels dequantized, through relu / clip /
// leaky, and quantized again (_fused_quantized_act).
void ActScaleRound(const int8_t* x, int64_t n, float step, const FusedActivation& act, float scale, int8_t* q);
void ActScaleRound(const int8_t* x, int64_t n, float step, const FusedActivation& act, float scale, uint8_t* q);
void ActScaleRound(const uint8_t* x, int64_t n, float step, const FusedActivation& act, float scale, int8_t* q);
void ActScaleRound(const uint8_t* x, int64_t n, float step, const FusedActivation& act, float scale, uint8_t* q);

// A quantized BatchNorm's planes: for each of outer x channels planes of `inner` levels (channel
// c = plane % channels), y = SaturateRound<int8_t>(level * scale[c] + shift[c]) (multiply, then add),
// with level = x for int8 data and SaturateRound<int8_t>(x * to_int8) for uint8. With `relu`, the
// quantized relu of that (ReluLevels: max(y, 0)) in the same pass.
void ScaleShiftLevels(const int8_t* x, int64_t outer, int64_t channels, int64_t inner, float to_int8,
                      const float* scale, const float* shift, int8_t* y, bool relu = false);
void ScaleShiftLevels(const uint8_t* x, int64_t outer, int64_t channels, int64_t inner, float to_int8,
                      const float* scale, const float* shift, int8_t* y, bool relu = false);

// y[i] = SaturateRound<TO>(a[i] * wa + b[i] * wb) (both products, then their sum): a quantized
// elemwise_add's sum on the output's levels, or int32 sums (with `a_bias` added first, wrapping)
// plus a quantized sum input on a fused convolution's. TA: int8_t, uint8_t or int32_t (a_bias
// only with int32_t); TB: int8_t or uint8_t; TO: those or int32_t.
template <typename TA, typename TB, typename TO>
void AddScaledLevels(const TA* a, const TB* b, int64_t n, float wa, float wb, TO* y, int32_t a_bias = 0);

// Where int32 sums become levels (a fused convolution's output stage): row m of the sums (an
// output channel) plus bias[m], times scale[m], plus sum_scale times the sum input's level (rows
// ld_sum apart) when `sum` is set, saturated and rounded to uint8 or int8 levels at
// out + m * ld_out: SaturateRound<T>(float(x + bias[m]) * scale[m] [+ float(s) * sum_scale]),
// ScaleRound's and AddScaledLevels' formulas, with the same bits.
struct Int8Levels {
  const int32_t* bias = nullptr;
  const float* scale = nullptr;
  void* out = nullptr;
  int64_t ld_out = 0;
  bool out_unsigned = false;
  const void* sum = nullptr;
  int64_t ld_sum = 0;
  bool sum_unsigned = false;
  float sum_scale = 0;
};
// Rows [m0, m1) and columns [n0, n1) of the sums C (rows ldc apart, row 0 being levels' row 0)
// to levels, serially (a GEMM's finished block, on the thread that summed it).
void RequantizeBlock(const Int8Levels& levels, const int32_t* C, int64_t ldc, int64_t m0, int64_t m1, int64_t n0,
                     int64_t n1);

// Row 0 of `levels` (bias[0], scale[0], out; no sum input) from n float sums that hold integers
// exactly (a float kernel's sums of level products, below 2^24): the levels RequantizeBlock makes
// of the same sums as int32, without storing them.
void RequantizeFloatSums(const Int8Levels& levels, const float* sums, int64_t n);

// y[i] = min(max(x[i], 0), 127): relu on levels, as int8 (uint8 levels above 127 saturate).
void ReluLevels(const int8_t* x, int64_t n, int8_t* y);
void ReluLevels(const uint8_t* x, int64_t n, int8_t* y);

}  // namespace quant
}  // namespace symbind
