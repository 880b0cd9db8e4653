#include "dtype.h"

#include <cstring>
#include <limits>

#include "error.h"

namespace symbind {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kFloat16: return 2;
    case DType::kUint8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt8: return 1;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kBFloat16: return 2;
  }
  throw Error(StrCat("unknown dtype flag ", static_cast<int>(t)));
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kUint8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt8: return "int8";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kBFloat16: return "bfloat16";
  }
  return "unknown";
}

bool IsValidDTypeFlag(int32_t flag) { return (flag >= 0 && flag <= 7) || flag == 12; }

DType DTypeFromName(const std::string& name) {
  static const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                              DType::kUint8,   DType::kInt32,   DType::kInt8,
                              DType::kInt64,   DType::kBool,    DType::kBFloat16};
  for (DType t : all)
    if (name == DTypeName(t)) return t;
  throw Error(StrCat("unknown dtype '", name,
                     "'; expected one of float32, float64, float16, uint8, int32, int8, int64, "
                     "bool, bfloat16"));
}

namespace {
// The bits of a float and back (memcpy: the defined way before C++20's bit_cast).
uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
}  // namespace

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return FloatFromBits(bits);
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // round to nearest even
  return static_cast<uint16_t>(half);
}

float BFloat16ToFloat(uint16_t b) { return FloatFromBits(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBFloat16(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

namespace {
double LoadAsDouble(const void* src, DType t, size_t i) {
  switch (t) {
    case DType::kFloat32: return static_cast<const float*>(src)[i];
    case DType::kFloat64: return static_cast<const double*>(src)[i];
    case DType::kFloat16: return HalfToFloat(static_cast<const uint16_t*>(src)[i]);
    case DType::kUint8: return static_cast<const uint8_t*>(src)[i];
    case DType::kInt32: return static_cast<const int32_t*>(src)[i];
    case DType::kInt8: return static_cast<const int8_t*>(src)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(src)[i]);
    case DType::kBool: return static_cast<const uint8_t*>(src)[i] ? 1.0 : 0.0;
    case DType::kBFloat16: return BFloat16ToFloat(static_cast<const uint16_t*>(src)[i]);
  }
  return 0;
}

// Float to integer as x86's truncating conversions give it (numpy's astype on x86 does the
// same): toward zero; NaN and values out of range give the lowest value; 8-bit types take the
// low byte of the 32-bit result (-2.0 as uint8 is 254). A plain cast of such a value is
// undefined behaviour.
template <typename Int>
Int TruncateLikeX86(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi = -lo;  // 2^(bits-1): the first value out of range
  return v >= lo && v < hi ? static_cast<Int>(v) : std::numeric_limits<Int>::min();
}
template <typename Byte>
Byte LowByte(double v) {
  return static_cast<Byte>(static_cast<uint8_t>(static_cast<uint32_t>(TruncateLikeX86<int32_t>(v)) & 0xffu));
}

void StoreDouble(void* dst, DType t, size_t i, double v) {
  switch (t) {
    case DType::kFloat32: static_cast<float*>(dst)[i] = static_cast<float>(v); break;
    case DType::kFloat64: static_cast<double*>(dst)[i] = v; break;
    case DType::kFloat16: static_cast<uint16_t*>(dst)[i] = FloatToHalf(static_cast<float>(v)); break;
    case DType::kUint8: static_cast<uint8_t*>(dst)[i] = LowByte<uint8_t>(v); break;
    case DType::kInt32: static_cast<int32_t*>(dst)[i] = TruncateLikeX86<int32_t>(v); break;
    case DType::kInt8: static_cast<int8_t*>(dst)[i] = LowByte<int8_t>(v); break;
    case DType::kInt64: static_cast<int64_t*>(dst)[i] = TruncateLikeX86<int64_t>(v); break;
    case DType::kBool: static_cast<uint8_t*>(dst)[i] = v != 0.0; break;
    case DType::kBFloat16:
      static_cast<uint16_t*>(dst)[i] = FloatToBFloat16(static_cast<float>(v));
      break;
  }
}
}  // namespace

void ConvertElements(const void* src, DType src_type, void* dst, DType dst_type, size_t n) {
  if (src_type == dst_type) {
    std::memcpy(dst, src, n * DTypeSize(src_type));
    return;
  }
  for (size_t i = 0; i < n; ++i) StoreDouble(dst, dst_type, i, LoadAsDouble(src, src_type, i));
}

}  // namespace symbind
