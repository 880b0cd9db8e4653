// Integer GEMM for quantized layers: int8 weights times int8 or uint8 data, summed exactly in
// int32 (MXNet's quantized convolution and FullyConnected, as oneDNN's u8s8s32 and s8s8s32
// primitives compute them, without their output scaling).
//
//   GemmInt8(filters, pixels, depth, w, depth, columns, pixels, acc, pixels);  // acc = w * columns
//
// Every sum is exact, so results are the same bits for any thread count and any blocking.
#pragma once
#include <cstdint>
#include <vector>

#include <symbind/ops/kernels/im2col.h>
#include <symbind/ops/kernels/quantize_round.h>

namespace symbind {

// C (M x N) = A (M x K) * B (K x N); rows lda, ldb, ldc elements apart. Sums that leave int32
// wrap as two's complement (they cannot for K < 65536 with int8 times uint8).
void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const uint8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc);
void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const int8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc);

// A (the weights, M x K) packed once for the packed kernels of GemmInt8 (AVX2 vpmaddubsw, or
// AVX512-VNNI vpdpbusd, chosen at packing): 4-byte k-quads per row, rows interleaved in blocks,
// 128 times each row's sum (the data enters those kernels shifted by 128), and, for AVX2, the
// weights of -128, which its sign trick cannot take: they are packed as -127 and their last level
// subtracted after the sums (vpdpbusd takes -128 as it is). On AVX2, narrow weights (each aligned
// pair of a row within 128 in magnitude, after halving where all are even: quant's even weight
// levels) run a faster tile with no sign trick, the sums as exact. Not usable (usable() false) on
// CPUs without AVX2: GemmInt8 on the unpacked weights serves those.
//
//   PackedInt8A w = PackedInt8A::Pack(filters, depth, weights, depth);  // once per node
//   if (w.usable()) GemmInt8(w, pixels, columns, pixels, acc, pixels);
struct PackedInt8A {
  static PackedInt8A Pack(int64_t M, int64_t K, const int8_t* A, int64_t lda);
  // A convolution's filters (M x channels x taps, contiguous) for GemmInt8 over its rearranged
  // image (GemmInt8CanReadPaddedImages): depth runs over taps, then each tap's channels, padded
  // with zero weights to a multiple of 4. Usable only that way.
  static PackedInt8A PackTapMajor(int64_t M, int64_t channels, int64_t taps, const int8_t* A);
  bool usable() const { return rows >= 0; }
  int64_t rows = -1, depth = 0;
  int64_t image_channels = 0;    // PackTapMajor's channels (0: packed by Pack)
  bool vnni = false;             // packed for the VNNI kernel
  // For the AVX2 kernel: narrow weights, which it multiplies with unsigned data as they are (no
  // aligned pair's magnitudes sum past 128), packed divided by 2^shift (1 where all are even).
  bool narrow = false;
  int shift = 0;
  std::vector<int32_t> quads;    // [row block][quad][row in block]
  std::vector<int32_t> offsets;  // 128 * sum of each row (two's complement), padded to the block
  // Depths of the -128 weights, row by row: row m's at [minus128_rows[m], minus128_rows[m + 1]);
  // both empty when there are none.
  std::vector<int32_t> minus128, minus128_rows;
};
// Whether the packed GemmInt8 runs faster on even weights (CPUs with AVX2 but without VNNI, where
// halved they are narrow: PackedInt8A), so that layers quantizing float weights themselves may
// choose even levels (quant::ConvInt8EvenWeights).
bool GemmInt8PrefersEvenWeights();

// With `levels`, the packed GemmInt8 requantizes each block of C as soon as its sums are final
// (quant::Int8Levels, rows and columns as C's), while they are in registers (VNNI) or in cache;
// C then holds nothing useful.
void GemmInt8(const PackedInt8A& A, int64_t N, const uint8_t* B, int64_t ldb, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels = nullptr);
void GemmInt8(const PackedInt8A& A, int64_t N, const int8_t* B, int64_t ldb, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels = nullptr);

// C (M x out pixels) = A times the columns of a 2-D convolution at column stride 1 or 2 (im2col's rows:
// channel, kernel row, kernel column; zeros on the padding), read from its image (channels x H x W
// levels) as they are packed, never stored. Only where GemmInt8ReadsImages (VNNI weights).
bool GemmInt8ReadsImages(const PackedInt8A& A, const conv::ConvGeom& g);
// Whether weights packed on this CPU would (the VNNI kernel, these strides and kernel sizes).
bool GemmInt8CanReadImages(const conv::ConvGeom& g);
// Whether this CPU runs a convolution of this geometry (2-D, stride 1 or 2, any padding, dilation
// or window but 1x1) over its image rearranged once into channel quads (split by stride phase),
// with no column packing: weights packed by PackTapMajor.
bool GemmInt8CanReadPaddedImages(const conv::ConvGeom& g);
void GemmInt8(const PackedInt8A& A, const uint8_t* image, const conv::ConvGeom& g, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels = nullptr);
void GemmInt8(const PackedInt8A& A, const int8_t* image, const conv::ConvGeom& g, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels = nullptr);

// C = A times B (K x N) held as channel quads, the VNNI tile's own layout, so nothing is packed:
// the bytes of rows 4q..4q+3 of column n at quads + q * plane_bytes + 4 * n, as unsigned levels
// (int8 data flipped by x ^ 0x80: `flipped`, whose offset the sums take off). The tiles read
// whole groups of 32 columns: plane_bytes at least Int8QuadPlaneBytes(N) and the buffer that long
// past the last quad's plane (what lies past N and past K is read and multiplied by nothing
// stored). Only for weights Pack made for VNNI (GemmInt8ReadsQuads).
int64_t Int8QuadPlaneBytes(int64_t N);
inline bool GemmInt8ReadsQuads(const PackedInt8A& A) { return A.usable() && A.vnni && A.image_channels == 0; }
void GemmInt8Quads(const PackedInt8A& A, int64_t N, const uint8_t* quads, int64_t plane_bytes, bool flipped,
                   int32_t* C, int64_t ldc, const quant::Int8Levels* levels = nullptr);

// C (M x N) = A (M x K) * B^T with B (N x K), all rows contiguous: FullyConnected's layout (data
// rows times weight rows).
void GemmInt8NT(int64_t M, int64_t N, int64_t K, const uint8_t* A, const int8_t* B, int32_t* C);
void GemmInt8NT(int64_t M, int64_t N, int64_t K, const int8_t* A, const int8_t* B, int32_t* C);

}  // namespace symbind
