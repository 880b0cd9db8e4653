// Shared pieces of MXNet's quantized operators (ops/quantization/): the range arithmetic of
// MXNet 1.9.1's CPU kernels (oneDNN's, which MXNet's CPU builds run), the out_type and
// calibration parameters, and the (data, min, max) triples quantized tensors travel as.
// docs/quantization.md states the semantics each op implements.
//
//   const float scale = QuantizeScale(DType::kInt8, min, max);   // 127.5 / max(|min|, |max|)
//   q[i] = SaturateRound<int8_t>(x[i] * scale);                   // clamp, then half to even
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <symbind/ops/kernels/quantize_round.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace quant {

// The quantized level counts oneDNN's scales use: q = x * 127.5 / R for int8, 255.5 / R for uint8.
constexpr float kInt8Range = 127.5f;
constexpr float kUint8Range = 255.5f;
// An int32 q stands for q * R / 2^31 (R: max(|min|, |max|) of its range).
constexpr float kInt32Range = 2147483648.0f;

inline float MaxAbs(float a, float b) { return std::max(std::fabs(a), std::fabs(b)); }

// MXNet's GetQuantizeScale: levels per unit for data of `type` over [min, max]; 2^31 when the
// range is zero (every value then quantizes to 0).
inline float QuantizeScale(DType type, float min, float max) {
  const float r = MaxAbs(min, max);
  if (r == 0.0f) return kInt32Range;
  return (type == DType::kInt8 ? kInt8Range : kUint8Range) / r;
}

// MXNet's QuantizationRangeForMultiplication: the float value of int32 extremes of a product
// of int8 data (R_a / 127) and int8 or uint8 data (R_b / 127 or 255).
inline float ProductRange(float range_a, float range_b, bool b_unsigned) {
  return (range_a / 127.0f) * (range_b / (b_unsigned ? 255.0f : 127.0f)) * kInt32Range;
}

// The int32 bias of a quantized convolution or FullyConnected: the int8 bias, whose range is
// (b_min, b_max), in the units of the int32 sums (data levels times weight levels per unit),
// truncated toward zero as MXNet's quantized FullyConnected converts it.
inline float BiasScale(DType data_type, float d_min, float d_max, float w_min, float w_max, float b_min,
                       float b_max) {
  return QuantizeScale(data_type, d_min, d_max) * QuantizeScale(DType::kInt8, w_min, w_max) * MaxAbs(b_min, b_max) /
         kInt8Range;
}
inline int32_t TruncateToInt32(float v) { return std::isnan(v) ? 0 : static_cast<int32_t>(ClampToInt32(v)); }

// The (min, max) of n values; (0, 0) when there are none.
template <typename T>
std::pair<T, T> MinMax(const T* x, int64_t n) {
  T lo = n ? x[0] : T(0), hi = lo;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  return {lo, hi};
}

// uint8 levels with a zero point (MXNet's _contrib_quantize_asym, the data of its int8 LSTM):
// q = clamp(round_half_even(x * scale + shift), 0, 255) with scale = 255 / (max - min) and
// shift = 255 - max * scale. A range of zero width (constant data) takes scale 1, where MXNet
// divides by zero.
struct AsymmetricLevels {
  float scale, shift;
  static AsymmetricLevels Of(float min, float max) {
    const float scale = max > min ? 255.0f / (max - min) : 1.0f;
    return {scale, 255.0f - max * scale};
  }
  uint8_t Quantize(float x) const { return SaturateRound<uint8_t>(x * scale + shift); }
  float Dequantize(int q) const { return (static_cast<float>(q) - shift) / scale; }
};

// The value of a range input: a float32 array of one element.
inline float RangeValue(const NDArray& a) { return a.data<float>()[0]; }
inline void SetRange(const NDArray& min, const NDArray& max, float lo, float hi) {
  min.data<float>()[0] = lo;
  max.data<float>()[0] = hi;
}
inline TShape RangeShape() { return TShape({1}); }

// Throws TypeError unless `type` is int8 or uint8 (or not yet known).
inline void CheckQuantizedType(int type, const std::string& what) {
  if (type < 0 || type == static_cast<int>(DType::kInt8) || type == static_cast<int>(DType::kUint8)) return;
  throw TypeError(StrCat(what, " must be int8 or uint8 (a quantized tensor), got ",
                         DTypeName(static_cast<DType>(type))));
}

// f(T{}) with T the C++ type of a quantized dtype (int8 or uint8).
template <typename F>
void WithQuantizedType(DType type, const F& f) {
  if (type == DType::kInt8) f(int8_t{});
  else if (type == DType::kUint8) f(uint8_t{});
  else throw TypeError(StrCat("expected int8 or uint8 data, got ", DTypeName(type)));
}

// The out_type of quantize_v2 and requantize.
enum OutType { kAuto = 0, kOutInt8 = 1, kOutUint8 = 2 };

// The optional calibrated range (min_calib_range, max_calib_range) of quantize_v2, requantize
// and the ops that requantize their own output (elemwise add).
struct CalibRangeFields {
  std::optional<float> min_calib_range, max_calib_range;
  bool calibrated() const { return min_calib_range && max_calib_range; }
};
// Declares both fields; `use` says what a given range is used for.
template <typename P>
void DeclareCalibRange(ParamDeclarer<P>& d, const std::string& use) {
  d.template field<std::optional<float>>("min_calib_range", &P::min_calib_range).set_default(std::nullopt)
      .describe("The minimum scalar value in the form of float32 obtained through calibration. If present, it will "
                "be used to " + use + ".");
  d.template field<std::optional<float>>("max_calib_range", &P::max_calib_range).set_default(std::nullopt)
      .describe("The maximum scalar value in the form of float32 obtained through calibration. If present, it will "
                "be used to " + use + ".");
}

// MXNet's GetQuantizeOutputType: out_type, with auto giving uint8 for a calibrated range that
// has no negative values.
inline DType CalibratedOutDType(int out_type, const CalibRangeFields& range) {
  if (out_type == kAuto) return range.calibrated() && *range.min_calib_range >= 0.0f ? DType::kUint8 : DType::kInt8;
  return out_type == kOutUint8 ? DType::kUint8 : DType::kInt8;
}

// out_type (auto, int8 or uint8; int8 by default), held in P::out_type.
template <typename P>
void DeclareOutType(ParamDeclarer<P>& d) {
  d.template field<int>("out_type", &P::out_type)
      .add_enum("auto", kAuto).add_enum("int8", kOutInt8).add_enum("uint8", kOutUint8)
      .set_default(kOutInt8)
      .describe("Output data type. `auto` gives uint8 when calibrated with min_calib_range >= 0, "
                "int8 otherwise.");
}

// _contrib_quantize_v2's and _contrib_requantize's parameters (MXNet's QuantizeV2Param and
// RequantizeParam have the same fields).
struct CalibratedOutParam : CalibRangeFields, Parameter<CalibratedOutParam> {
  int out_type;
  static void Declare(ParamDeclarer<CalibratedOutParam>& d) {
    DeclareOutType(d);
    DeclareCalibRange(d, "quantize the input (or requantize the int32 data) instead of its runtime range");
  }
  DType OutDType() const { return CalibratedOutDType(out_type, *this); }
};

// The parameters of ops that requantize their own output (elemwise add).
struct CalibRangeParam : CalibRangeFields, Parameter<CalibRangeParam> {
  static void Declare(ParamDeclarer<CalibRangeParam>& d) {
    DeclareCalibRange(d, "requantize the int32 output to int8 or uint8");
  }
};

// Ops that pass a quantized tensor's (min, max) through (pooling, flatten, relu): their outputs
// output, min_output, max_output, the ranges of shape (1,).
inline void InferRangeShapes(std::vector<TShape>* in, size_t first_range, std::vector<TShape>* out) {
  for (size_t i = first_range; i < in->size(); ++i) ShapeAssignCheck(in, i, RangeShape());
  for (size_t i = 1; i < out->size(); ++i) ShapeAssignCheck(out, i, RangeShape());
}
// The shapes of an op whose first `tensors` inputs and output 0 are shaped as a float op shapes
// its inputs and output (`infer`, that op's InferShape on the same attributes); the inputs and
// outputs after them are ranges of shape (1,).
template <typename InferFloat>
void InferWithFloatShapes(const InferFloat& infer, const NodeAttrs& attrs, size_t tensors, std::vector<TShape>* in,
                          std::vector<TShape>* out) {
  std::vector<TShape> float_in(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(tensors)), float_out{(*out)[0]};
  infer(attrs, &float_in, &float_out);
  for (size_t i = 0; i < tensors; ++i) ShapeAssignCheck(in, i, float_in[i]);
  ShapeAssignCheck(out, 0, float_out[0]);
  InferRangeShapes(in, tensors, out);
}
// Output 0 shaped as input 0 (both ways), every input and output after them a range of shape (1,).
inline void InferSameShapeAndRanges(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
  InferRangeShapes(in, 1, out);
}
// Inputs 0 and 1 and output 0 of one shape (both ways), every input and output after them a range
// of shape (1,): the quantized elementwise add and mul.
inline void InferPairShapeAndRanges(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  for (size_t i = 0; i < 2; ++i) {
    ShapeAssignCheck(out, 0, (*in)[i]);
    ShapeAssignCheck(in, i, (*out)[0]);
  }
  ShapeAssignCheck(in, 0, (*out)[0]);
  InferRangeShapes(in, 2, out);
}
inline void InferRangeTypes(std::vector<int>* in, size_t first_range, std::vector<int>* out) {
  const int f32 = static_cast<int>(DType::kFloat32);
  for (size_t i = first_range; i < in->size(); ++i) TypeAssignCheck(in, i, f32);
  for (size_t i = 1; i < out->size(); ++i) TypeAssignCheck(out, i, f32);
}
// data, then min_<what>, max_<what> names as MXNet lists them ("min_data", "max_data").
inline const std::vector<std::string>& RangeOutputs() {
  static const std::vector<std::string> names{"output", "min_output", "max_output"};
  return names;
}

// The inputs of _contrib_quantized_conv and _contrib_quantized_fully_connected: data, weight,
// [bias], then the (min, max) of each.
inline std::vector<std::string> QuantizedLayerArguments(bool no_bias) {
  if (no_bias) return {"data", "weight", "min_data", "max_data", "min_weight", "max_weight"};
  return {"data", "weight", "bias", "min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias"};
}
// Their types: int8 or uint8 data, int8 weight and bias, float32 ranges; int32 sums.
inline void InferQuantizedLayerType(bool no_bias, std::vector<int>* in, std::vector<int>* out) {
  CheckQuantizedType((*in)[0], "input 'data'");
  const size_t tensors = no_bias ? 2 : 3;
  for (size_t i = 1; i < tensors; ++i) TypeAssignCheck(in, i, static_cast<int>(DType::kInt8));
  TypeAssignCheck(out, 0, static_cast<int>(DType::kInt32));
  InferRangeTypes(in, tensors, out);
}
// Adds the int8 bias, rescaled to the sums' units (BiasScale), to `planes` planes of `size`
// int32 sums per output channel, and writes the sums' range (MXNet's product range; data
// ranges of int8 data, or uint8 when `uint8_range`).
inline void FinishQuantizedLayer(const std::vector<NDArray>& in, bool no_bias, bool uint8_range, int64_t batch,
                                 int64_t channels, int64_t size, const std::vector<NDArray>& out) {
  const size_t r = no_bias ? 2 : 3;  // first range input
  const float d_min = RangeValue(in[r]), d_max = RangeValue(in[r + 1]);
  const float w_min = RangeValue(in[r + 2]), w_max = RangeValue(in[r + 3]);
  int32_t* y = out[0].data<int32_t>();
  if (!no_bias) {
    const float scale = BiasScale(in[0].dtype(), d_min, d_max, w_min, w_max, RangeValue(in[r + 4]), RangeValue(in[r + 5]));
    const int8_t* b8 = in[2].data<int8_t>();
    std::vector<uint32_t> bias(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c)
      bias[static_cast<size_t>(c)] = static_cast<uint32_t>(TruncateToInt32(static_cast<float>(b8[c]) * scale));
    ParallelFor(batch * channels, GrainFor(size), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        int32_t* plane = y + p * size;
        const uint32_t b = bias[static_cast<size_t>(p % channels)];
        for (int64_t i = 0; i < size; ++i) plane[i] = static_cast<int32_t>(static_cast<uint32_t>(plane[i]) + b);
      }
    });
  }
  const float range = ProductRange(MaxAbs(w_min, w_max), MaxAbs(d_min, d_max), uint8_range);
  SetRange(out[1], out[2], -range, range);
}

}  // namespace quant
}  // namespace symbind
