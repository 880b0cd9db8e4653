// _cvimresize (mx.image.imresize, resize_short, ImageIter's augmenters): resizes a (height,
// width, channels) image as OpenCV's cv::resize, which MXNet calls: nearest (0), bilinear (1),
// bicubic (2) and area (3) interpolation, each with OpenCV's sample positions and border rule.
// float32 and float64 images compute in float coefficients as OpenCV does; uint8 images in
// OpenCV's fixed point (weights in 1/2048), so results match cv2 to within one unit.
#include <cfloat>
#include <cmath>
#include <vector>

#include <symbind/ops/image/cv_image.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

enum Interp { kNearest = 0, kLinear = 1, kCubic = 2, kArea = 3 };

struct CvResizeParam : Parameter<CvResizeParam> {
  int w = 0, h = 0, interp = kLinear;
  static void Declare(ParamDeclarer<CvResizeParam>& d) {
    d.field("w", &CvResizeParam::w).lower_bound(1).describe("Width of resized image.");
    d.field("h", &CvResizeParam::h).lower_bound(1).describe("Height of resized image.");
    d.field("interp", &CvResizeParam::interp).set_default(kLinear)
        .describe("Interpolation method (default=cv2.INTER_LINEAR): 0 nearest, 1 bilinear, 2 bicubic, 3 area.");
  }
};

// Along one axis, each output position reads `taps` source positions (clamped into the
// image) with float weights.
struct AxisTaps {
  int taps = 0;
  std::vector<int64_t> index;  // out * taps
  std::vector<float> weight;   // out * taps
};

// OpenCV's bicubic weights (a = -0.75) for fraction x.
void CubicWeights(float x, float* w) {
  constexpr float a = -0.75f;
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = 1.f - w[0] - w[1] - w[2];
}

// The taps of output positions 0..out-1 reading an axis of length n. `area_upscale`: INTER_AREA
// where some axis grows, which OpenCV runs as bilinear with its own fractions.
AxisTaps MakeTaps(int64_t n, int64_t out, int interp, bool area_upscale) {
  AxisTaps t;
  const double inv_scale = static_cast<double>(out) / static_cast<double>(n), scale = 1.0 / inv_scale;
  if (interp == kNearest) {
    t.taps = 1;
    for (int64_t o = 0; o < out; ++o) {
      t.index.push_back(std::min<int64_t>(static_cast<int64_t>(std::floor(o * scale)), n - 1));
      t.weight.push_back(1.f);
    }
    return t;
  }
  if (interp == kArea && !area_upscale) {  // every source cell the output cell overlaps, by its share
    int64_t most = 0;
    std::vector<std::vector<std::pair<int64_t, float>>> cells(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
      const double lo = o * scale, hi = std::min(static_cast<double>(n), (o + 1) * scale);
      for (int64_t s = static_cast<int64_t>(std::floor(lo)); s < n && s < hi; ++s) {
        const double overlap = std::min(hi, s + 1.0) - std::max(lo, static_cast<double>(s));
        if (overlap > 1e-9) cells[static_cast<size_t>(o)].push_back({s, static_cast<float>(overlap / (hi - lo))});
      }
      most = std::max<int64_t>(most, static_cast<int64_t>(cells[static_cast<size_t>(o)].size()));
    }
    t.taps = static_cast<int>(most);
    for (auto& c : cells) {
      for (auto& sw : c) {
        t.index.push_back(sw.first);
        t.weight.push_back(sw.second);
      }
      for (size_t k = c.size(); k < static_cast<size_t>(most); ++k) {
        t.index.push_back(c.back().first);
        t.weight.push_back(0.f);
      }
    }
    return t;
  }
  t.taps = interp == kCubic ? 4 : 2;
  for (int64_t o = 0; o < out; ++o) {
    int64_t s;
    float f;
    if (area_upscale) {
      s = static_cast<int64_t>(std::floor(o * scale));
      f = static_cast<float>((o + 1) - (s + 1) * inv_scale);
      f = f <= 0 ? 0.f : f - std::floor(f);
    } else {
      f = static_cast<float>((o + 0.5) * scale - 0.5);
      s = static_cast<int64_t>(std::floor(f));
      f -= static_cast<float>(s);
    }
    if (interp == kCubic) {
      float w[4];
      CubicWeights(f, w);
      for (int k = 0; k < 4; ++k) {
        t.index.push_back(std::min(std::max<int64_t>(s - 1 + k, 0), n - 1));
        t.weight.push_back(w[k]);
      }
      continue;
    }
    if (s < 0) s = 0, f = 0.f;
    if (s >= n - 1) s = n - 1, f = 0.f;
    t.index.push_back(s);
    t.index.push_back(std::min(s + 1, n - 1));
    t.weight.push_back(1.f - f);
    t.weight.push_back(f);
  }
  return t;
}

// Resamples rows then columns, in T's arithmetic for float images.
template <typename T>
void ResizeFloat(const T* src, int64_t w, int64_t c, const AxisTaps& ty, const AxisTaps& tx, int64_t oh,
                 int64_t ow, T* dst) {
  ParallelFor(oh, 1, [&](int64_t y0, int64_t y1) {
    std::vector<T> row(static_cast<size_t>(ow * c));
    for (int64_t y = y0; y < y1; ++y) {
      T* out = dst + y * ow * c;
      std::fill(out, out + ow * c, T(0));
      for (int ky = 0; ky < ty.taps; ++ky) {
        const size_t yi = static_cast<size_t>(y * ty.taps + ky);
        const T* in = src + ty.index[yi] * w * c;
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t ch = 0; ch < c; ++ch) {
            T sum = 0;
            for (int kx = 0; kx < tx.taps; ++kx) {
              const size_t xi = static_cast<size_t>(x * tx.taps + kx);
              sum += in[tx.index[xi] * c + ch] * static_cast<T>(tx.weight[xi]);
            }
            row[static_cast<size_t>(x * c + ch)] = sum;
          }
        const T wy = static_cast<T>(ty.weight[yi]);
        for (int64_t i = 0; i < ow * c; ++i) out[i] += row[static_cast<size_t>(i)] * wy;
      }
    }
  });
}

int16_t Fixed(float weight) { return static_cast<int16_t>(std::lrint(weight * 2048.f)); }

// uint8: weights in 1/2048 (OpenCV's INTER_RESIZE_COEF_SCALE), rows summed in integers, the
// two passes' scale (2^22) removed as OpenCV's vector code does for `bilinear` (bilinear
// weights, also INTER_AREA's where an axis grows), by rounding in float otherwise.
void ResizeU8(const uint8_t* src, int64_t w, int64_t c, const AxisTaps& ty, const AxisTaps& tx, int64_t oh,
              int64_t ow, bool bilinear, uint8_t* dst) {
  ParallelFor(oh, 1, [&](int64_t y0, int64_t y1) {
    std::vector<int32_t> rows(static_cast<size_t>(ty.taps * ow * c));
    for (int64_t y = y0; y < y1; ++y) {
      for (int ky = 0; ky < ty.taps; ++ky) {
        const uint8_t* in = src + ty.index[static_cast<size_t>(y * ty.taps + ky)] * w * c;
        int32_t* r = rows.data() + ky * ow * c;
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t ch = 0; ch < c; ++ch) {
            int32_t sum = 0;
            for (int kx = 0; kx < tx.taps; ++kx) {
              const size_t xi = static_cast<size_t>(x * tx.taps + kx);
              sum += in[tx.index[xi] * c + ch] * Fixed(tx.weight[xi]);
            }
            r[x * c + ch] = sum;
          }
      }
      uint8_t* out = dst + y * ow * c;
      for (int64_t i = 0; i < ow * c; ++i) {
        int32_t v;
        if (bilinear) {
          // OpenCV's VResizeLinearVec_32s8u: high halves of 16-bit products, then (+2) >> 2.
          const int32_t b0 = Fixed(ty.weight[static_cast<size_t>(y * 2)]);
          const int32_t b1 = Fixed(ty.weight[static_cast<size_t>(y * 2 + 1)]);
          v = ((((rows[static_cast<size_t>(i)] >> 4) * b0) >> 16) +
               (((rows[static_cast<size_t>(ow * c + i)] >> 4) * b1) >> 16) + 2) >> 2;
        } else {
          float sum = 0.f;
          for (int ky = 0; ky < ty.taps; ++ky)
            sum += static_cast<float>(rows[static_cast<size_t>(ky * ow * c + i)]) *
                   (Fixed(ty.weight[static_cast<size_t>(y * ty.taps + ky)]) * (1.f / (2048.f * 2048.f)));
          v = static_cast<int32_t>(std::nearbyint(sum));
        }
        out[i] = static_cast<uint8_t>(std::min(255, std::max(0, v)));
      }
    }
  });
}

// Nearest neighbour copies elements of any dtype.
template <typename T>
void ResizeNearest(const T* src, int64_t w, int64_t c, const AxisTaps& ty, const AxisTaps& tx, int64_t oh,
                   int64_t ow, T* dst) {
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x)
      std::copy_n(src + (ty.index[static_cast<size_t>(y)] * w + tx.index[static_cast<size_t>(x)]) * c, c,
                  dst + (y * ow + x) * c);
}

void CheckInterp(int interp) {
  if (interp < kNearest || interp > kArea)
    throw ParamError(StrCat("_cvimresize: interp ", interp,
                            " is not supported; use 0 (nearest), 1 (bilinear), 2 (bicubic) or 3 (area)"));
}

SYMBIND_REGISTER_OP(_cvimresize)
    .describe("Resize image with OpenCV. Resizes a (height, width, channels) image to (h, w, channels) as "
              "OpenCV's cv::resize does, with nearest (0), bilinear (1), bicubic (2) or area (3) "
              "interpolation.")
    .set_params<CvResizeParam>()
    .set_arguments({"src"})
    .add_argument_doc("src", "source image")
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.ndim_known()) return;
      cv_image::CheckImageShape(s, "_cvimresize");
      const auto& p = attrs.param<CvResizeParam>();
      CheckInterp(p.interp);
      ShapeAssignCheck(out, 0, TShape({p.h, p.w, s[2]}));
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      const bool nearest = attrs.param<CvResizeParam>().interp == kNearest;
      cv_image::InferImageType(in, out,
                               nearest ? std::vector<DType>{DType::kFloat32, DType::kFloat64, DType::kUint8,
                                                            DType::kInt32}
                                       : std::vector<DType>{DType::kFloat32, DType::kFloat64, DType::kUint8},
                               "_cvimresize");
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      if (req[0] == OpReq::kAdd) throw Error("_cvimresize: writing with req 'add' is not supported");
      const auto& p = attrs.param<CvResizeParam>();
      const TShape& s = in[0].shape();
      const int64_t h = s[0], w = s[1], c = s[2];
      const bool area_upscale = p.interp == kArea && (p.w > w || p.h > h);
      const AxisTaps ty = MakeTaps(h, p.h, p.interp, area_upscale), tx = MakeTaps(w, p.w, p.interp, area_upscale);
      switch (in[0].dtype()) {
        case DType::kFloat32:
          if (p.interp == kNearest) return ResizeNearest(in[0].data<float>(), w, c, ty, tx, p.h, p.w, out[0].data<float>());
          return ResizeFloat(in[0].data<float>(), w, c, ty, tx, p.h, p.w, out[0].data<float>());
        case DType::kFloat64:
          if (p.interp == kNearest)
            return ResizeNearest(in[0].data<double>(), w, c, ty, tx, p.h, p.w, out[0].data<double>());
          return ResizeFloat(in[0].data<double>(), w, c, ty, tx, p.h, p.w, out[0].data<double>());
        case DType::kUint8:
          if (p.interp == kNearest)
            return ResizeNearest(in[0].data<uint8_t>(), w, c, ty, tx, p.h, p.w, out[0].data<uint8_t>());
          return ResizeU8(in[0].data<uint8_t>(), w, c, ty, tx, p.h, p.w, p.interp == kLinear || area_upscale,
                          out[0].data<uint8_t>());
        case DType::kInt32:
          return ResizeNearest(in[0].data<int32_t>(), w, c, ty, tx, p.h, p.w, out[0].data<int32_t>());
        default:
          throw TypeError(StrCat("_cvimresize: images of dtype ", DTypeName(in[0].dtype()), " are not supported"));
      }
    });

}  // namespace

}  // namespace symbind
