#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace symbind {

// Values are MXNet's on-disk type flags.
enum class DType : int32_t {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kBool = 7,
  kBFloat16 = 12,
};

size_t DTypeSize(DType t);
const char* DTypeName(DType t);
// Accepts MXNet names ("float32", "int8", ...); throws symbind::Error otherwise.
DType DTypeFromName(const std::string& name);
// True when `flag` is a type flag symbind knows.
bool IsValidDTypeFlag(int32_t flag);
// float32, float64, float16 and bfloat16: the types gradients and float kernels compute in.
inline bool IsFloatingType(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}

template <typename T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUint8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

// IEEE half and bfloat16 conversions (storage types only; compute is float32).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);

// Converts `n` elements between any two dtypes (through double for exactness on integers).
void ConvertElements(const void* src, DType src_type, void* dst, DType dst_type, size_t n);

}  // namespace symbind
