// Helpers shared by the ONNX tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>

#include <symbind/core/ndarray.h>

namespace symbind::onnx_test {

// The element at `i` of a numeric array as double.
inline double ValueAt(const NDArray& a, int64_t i) {
  switch (a.dtype()) {
    case DType::kFloat32: return a.data<float>()[i];
    case DType::kFloat64: return a.data<double>()[i];
    case DType::kInt64: return static_cast<double>(a.data<int64_t>()[i]);
    case DType::kInt32: return a.data<int32_t>()[i];
    case DType::kInt8: return a.data<int8_t>()[i];
    case DType::kUint8: return a.data<uint8_t>()[i];
    case DType::kBool: return a.data<bool>()[i] ? 1 : 0;
    case DType::kFloat16: return HalfToFloat(static_cast<const uint16_t*>(a.raw_data())[i]);
    default: throw Error("onnx_test: no comparison for dtype " + std::string(DTypeName(a.dtype())));
  }
}

// max |got - want| / max |want| (max |want| taken as at least 1e-6); infinity when the sizes
// differ or a value is NaN in one array only.
inline double RelativeError(const NDArray& got, const NDArray& want) {
  if (got.Size() != want.Size()) return INFINITY;
  double diff = 0, scale = 1e-6;
  for (int64_t i = 0; i < want.Size(); ++i) {
    const double g = ValueAt(got, i), w = ValueAt(want, i);
    if (std::isnan(g) || std::isnan(w)) {
      if (std::isnan(g) != std::isnan(w)) return INFINITY;
      continue;
    }
    if (std::isinf(w) || std::isinf(g)) {
      if (g != w) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::fabs(g - w));
    scale = std::max(scale, std::fabs(w));
  }
  return diff / scale;
}

}  // namespace symbind::onnx_test
