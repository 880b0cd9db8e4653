// _contrib_quantized_pooling: max or average pooling of int8 or uint8 data (docs/quantization.md).
#include <cstring>

#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/isa_variants.h>
#include <symbind/ops/nn/pooling_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {
using conv::PoolingParam;

// Whether every window of `g` holds at least one input element in each dimension.
bool WindowsNonEmpty(const conv::ConvGeom& g) {
  for (int i = 0; i < 3; ++i)
    for (int64_t o = 0; o < g.out[i]; ++o) {
      const int64_t start = o * g.s[i] - g.p[i];
      if (std::max<int64_t>(start, 0) >= std::min(start + g.k[i], g.in[i])) return false;
    }
  return true;
}

// Max pooling on the levels themselves: each window's largest element inside the input
// (padding never wins, as in Pooling).
template <typename T>
void MaxPoolLevels(const T* x, T* y, int64_t planes, const conv::ConvGeom& g) {
  ParallelFor(planes, GrainFor(g.out_size() * g.k_size()), [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      const T* src = x + plane * g.in_size();
      T* dst = y + plane * g.out_size();
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t d0 = std::max<int64_t>(od * g.s[0] - g.p[0], 0), d1 = std::min(od * g.s[0] - g.p[0] + g.k[0], g.in[0]);
        for (int64_t oy = 0; oy < g.out[1]; ++oy) {
          const int64_t y0 = std::max<int64_t>(oy * g.s[1] - g.p[1], 0), y1 = std::min(oy * g.s[1] - g.p[1] + g.k[1], g.in[1]);
          for (int64_t ox = 0; ox < g.out[2]; ++ox) {
            const int64_t x0 = std::max<int64_t>(ox * g.s[2] - g.p[2], 0), x1 = std::min(ox * g.s[2] - g.p[2] + g.k[2], g.in[2]);
            T best = std::numeric_limits<T>::lowest();
            for (int64_t d = d0; d < d1; ++d)
              for (int64_t yy = y0; yy < y1; ++yy) {
                const T* row = src + (d * g.in[1] + yy) * g.in[2];
                for (int64_t xx = x0; xx < x1; ++xx) best = std::max(best, row[xx]);
              }
            *dst++ = best;
          }
        }
      }
    }
  });
}

// The 2-D case, separably: per output row, the elementwise maximum of its window's input rows,
// then the maximum of every K consecutive columns of that (both loops the compiler vectorises),
// which the windows inside the row pick; windows clipped at the edges take their maximum
// directly. Scalars by value: a byte store may alias anything reached through a pointer (a
// lambda's captures too), which kept every bound reloaded and the loops scalar.
template <typename T>
__attribute__((always_inline)) inline void MaxPoolPlaneBody(const T* src, T* dst, int64_t H, int64_t W, int64_t OH,
                                                            int64_t OW, int64_t KH, int64_t KW, int64_t SH, int64_t SW,
                                                            int64_t PH, int64_t PW, T* col, T* win) {
  const int64_t starts = std::max<int64_t>(W - KW + 1, 0);
  // Output columns whose window lies inside the row: [inner0, inner1).
  const int64_t inner0 = std::min(OW, (PW + SW - 1) / SW);
  const int64_t inner1 = std::max(inner0, std::min(OW, W - KW + PW < 0 ? 0 : (W - KW + PW) / SW + 1));
  for (int64_t oy = 0; oy < OH; ++oy, dst += OW) {
    const int64_t y0 = std::max<int64_t>(oy * SH - PH, 0), y1 = std::min(oy * SH - PH + KH, H);
    std::copy(src + y0 * W, src + (y0 + 1) * W, col);
    for (int64_t yy = y0 + 1; yy < y1; ++yy) {
      const T* row = src + yy * W;
      for (int64_t i = 0; i < W; ++i) col[i] = std::max(col[i], row[i]);
    }
    std::copy(col, col + starts, win);
    for (int64_t j = 1; j < KW; ++j)
      for (int64_t i = 0; i < starts; ++i) win[i] = std::max(win[i], col[i + j]);
    if (SW == 2) {  // the stride as a constant: the compiler vectorises the pick (byte unpacks)
      const T* picked = win + 2 * inner0 - PW;
      for (int64_t i = 0; i < inner1 - inner0; ++i) dst[inner0 + i] = picked[2 * i];
    } else {
      for (int64_t ox = inner0; ox < inner1; ++ox) dst[ox] = win[ox * SW - PW];
    }
    // The windows the row's ends clip: [0, inner0) and [inner1, OW) (the others picked above).
    for (int64_t side = 0; side < 2; ++side)
      for (int64_t ox = side ? inner1 : 0, end = side ? OW : inner0; ox < end; ++ox) {
        const int64_t x0 = std::max<int64_t>(ox * SW - PW, 0), x1 = std::min(ox * SW - PW + KW, W);
        T best = col[x0];
        for (int64_t i = x0 + 1; i < x1; ++i) best = std::max(best, col[i]);
        dst[ox] = best;
      }
  }
}

// One plane, compiled per instruction set (wider vectors for the row maxima).
#define SYMBIND_MAX_POOL_PLANE(T, name)                                                                            \
  SYMBIND_ISA_VARIANTS(, void, name,                                                                               \
                       (const T* src, T* dst, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, \
                        int64_t SH, int64_t SW, int64_t PH, int64_t PW, T* col, T* win),                           \
                       (src, dst, H, W, OH, OW, KH, KW, SH, SW, PH, PW, col, win),                                 \
                       { MaxPoolPlaneBody(src, dst, H, W, OH, OW, KH, KW, SH, SW, PH, PW, col, win); })
SYMBIND_MAX_POOL_PLANE(int8_t, MaxPoolPlaneLevels)
SYMBIND_MAX_POOL_PLANE(uint8_t, MaxPoolPlaneLevels)
#undef SYMBIND_MAX_POOL_PLANE

SYMBIND_AVX512_INTRINSICS_BEGIN
// 3x3 windows at stride 2 (every window non-empty) on CPUs with VBMI, a row at a time: the
// window rows' maximum, 64 columns per vector, laid into `row` after PW of the type's lowest
// level (which no maximum takes; so is everything past the image's columns), then each output's
// three columns picked out of two loaded vectors by vpermi2b, 63 outputs at a time. `row` holds
// MaxPool3x3Stride2RowBytes bytes. The maxima MaxPoolPlaneBody gives.
int64_t MaxPool3x3Stride2RowBytes(int64_t W, int64_t PW, int64_t OW) { return PW + W + 2 * OW + 256; }
constexpr int64_t kPickedOutputs = 63;  // per pick: columns up to 2 * 62 + 2 = 126 of the two vectors
// vpermi2b's indices of output i's column k (2i + k) for k = 0, 1, 2 (lane 63 unused).
struct PickIndices {
  alignas(64) uint8_t column[3][64] = {};
  constexpr PickIndices() {
    for (int k = 0; k < 3; ++k)
      for (int64_t i = 0; i < kPickedOutputs; ++i) column[k][i] = static_cast<uint8_t>(2 * i + k);
  }
};
constexpr PickIndices kPickIndices;
template <typename T>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i LargerLevels(__m512i a, __m512i b) {
  if constexpr (std::is_same_v<T, int8_t>) return _mm512_max_epi8(a, b);
  return _mm512_max_epu8(a, b);
}
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) void MaxPool3x3Stride2Vbmi(
    const T* src, T* dst, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t PH, int64_t PW, uint8_t* row) {
  constexpr bool kSigned = std::is_same_v<T, int8_t>;
  std::memset(row, kSigned ? 0x80 : 0, size_t(MaxPool3x3Stride2RowBytes(W, PW, OW)));
  const __m512i pick0 = _mm512_load_si512(kPickIndices.column[0]), pick1 = _mm512_load_si512(kPickIndices.column[1]),
                pick2 = _mm512_load_si512(kPickIndices.column[2]);
  for (int64_t oy = 0; oy < OH; ++oy) {
    const int64_t y0 = std::max<int64_t>(2 * oy - PH, 0), y1 = std::min<int64_t>(2 * oy - PH + 3, H);
    for (int64_t x = 0; x < W; x += 64) {
      const __mmask64 m = W - x >= 64 ? ~__mmask64{0} : (__mmask64{1} << (W - x)) - 1;
      __m512i v = _mm512_maskz_loadu_epi8(m, src + y0 * W + x);
      for (int64_t yy = y0 + 1; yy < y1; ++yy) v = LargerLevels<T>(v, _mm512_maskz_loadu_epi8(m, src + yy * W + x));
      _mm512_mask_storeu_epi8(row + PW + x, m, v);
    }
    for (int64_t ox = 0; ox < OW; ox += kPickedOutputs) {
      const __m512i v0 = _mm512_loadu_si512(row + 2 * ox), v1 = _mm512_loadu_si512(row + 2 * ox + 64);
      const __m512i best = LargerLevels<T>(
          LargerLevels<T>(_mm512_permutex2var_epi8(v0, pick0, v1), _mm512_permutex2var_epi8(v0, pick1, v1)),
          _mm512_permutex2var_epi8(v0, pick2, v1));
      const int64_t n = std::min(kPickedOutputs, OW - ox);
      _mm512_mask_storeu_epi8(dst + oy * OW + ox, (__mmask64{1} << n) - 1, best);
    }
  }
}
SYMBIND_AVX512_INTRINSICS_END

template <typename T>
void MaxPoolPlanarLevels(const T* x, T* y, int64_t planes, const conv::ConvGeom& g) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const bool vbmi_3x3_stride2 = g.k[1] == 3 && g.k[2] == 3 && g.s[1] == 2 && g.s[2] == 2 && ActiveVnniVbmi();
  // Chunks of about 128k window elements (several planes per pair of row buffers).
  ParallelFor(planes, GrainFor(g.out_size() * g.k_size(), int64_t{1} << 17), [&](int64_t p0, int64_t p1) {
    if (vbmi_3x3_stride2) {
      std::vector<uint8_t> row(static_cast<size_t>(MaxPool3x3Stride2RowBytes(W, g.p[2], OW)));
      for (int64_t plane = p0; plane < p1; ++plane)
        MaxPool3x3Stride2Vbmi(x + plane * H * W, y + plane * OH * OW, H, W, OH, OW, g.p[1], g.p[2], row.data());
      return;
    }
    std::vector<T> column(static_cast<size_t>(W)), windows(static_cast<size_t>(W));
    for (int64_t plane = p0; plane < p1; ++plane)
      MaxPoolPlaneLevels(x + plane * H * W, y + plane * OH * OW, H, W, OH, OW, g.k[1], g.k[2], g.s[1], g.s[2], g.p[1],
                         g.p[2], column.data(), windows.data());
  });
}

// Global average pooling: each plane's exact integer sum divided by its size in float, rounded
// half to even (a sum of up to 2^16 levels is exact in float).
template <typename T>
void GlobalAvgPoolLevels(const T* x, T* y, int64_t planes, int64_t size) {
  ParallelFor(planes, GrainFor(size), [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      const T* src = x + plane * size;
      int32_t sum = 0;
      for (int64_t i = 0; i < size; ++i) sum += src[i];
      y[plane] = SaturateRound<T>(static_cast<float>(sum) / static_cast<float>(size));
    }
  });
}

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<PoolingParam>();
  const TShape& d = in[0].shape();
  const conv::ConvGeom g = conv::PoolGeom(p, d, out[0].shape());
  const int64_t planes = d[0] * d[1];
  const bool whole_plane = g.out_size() == 1 && g.k[0] == g.in[0] && g.k[1] == g.in[1] && g.k[2] == g.in[2] &&
                           g.p[0] == 0 && g.p[1] == 0 && g.p[2] == 0;
  if (p.pool_type == conv::kAvg && whole_plane && g.in_size() <= (1 << 16)) {
    WithQuantizedType(in[0].dtype(), [&](auto zero) {
      using T = decltype(zero);
      GlobalAvgPoolLevels(in[0].data<T>(), out[0].data<T>(), planes, g.in_size());
    });
    SetRange(out[1], out[2], RangeValue(in[1]), RangeValue(in[2]));
    return;
  }
  if (p.pool_type == conv::kMax && WindowsNonEmpty(g)) {
    WithQuantizedType(in[0].dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (g.is_planar()) MaxPoolPlanarLevels(in[0].data<T>(), out[0].data<T>(), d[0] * d[1], g);
      else MaxPoolLevels(in[0].data<T>(), out[0].data<T>(), d[0] * d[1], g);
    });
    SetRange(out[1], out[2], RangeValue(in[1]), RangeValue(in[2]));
    return;
  }
  // Otherwise Pooling's own kernels on the levels as floats: an average is the exact window sum
  // divided in float, then rounded half to even as MXNet's integer pooling rounds.
  static const Op& pooling = OpRegistry::Global().Get("Pooling");
  const NDArray levels = in[0].AsType(DType::kFloat32);
  NDArray pooled(out[0].shape());
  pooling.forward(ctx, attrs, {levels}, {OpReq::kWrite}, {pooled});
  const float* v = pooled.fdata();
  WithQuantizedType(out[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* q = out[0].data<T>();
    ParallelFor(out[0].Size(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) q[i] = SaturateRound<T>(v[i]);
    });
  });
  SetRange(out[1], out[2], RangeValue(in[1]), RangeValue(in[2]));
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_pooling)
    .describe(R"(Pooling (max or avg) on quantized data: the output has the data's type and range.
An average is rounded half to even. The parameters are Pooling's.)")
    .set_params<conv::PoolingParam>()
    .set_arguments({"data", "min_data", "max_data"})
    .add_argument_doc("data", "Quantized input data (int8 or uint8): (batch, channel, [depth,] height, width).")
    .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const int type = attrs.param<conv::PoolingParam>().pool_type;
      if (type != conv::kMax && type != conv::kAvg)
        throw ShapeError("quantized pooling supports pool_type 'max' and 'avg' only");
      quant::InferWithFloatShapes(conv::InferShapePool, attrs, 1, in, out);
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      if ((*in)[0] >= 0) TypeAssignCheck(out, 0, (*in)[0]);
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
