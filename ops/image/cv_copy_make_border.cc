// _cvcopyMakeBorder (mx.image.copyMakeBorder): pads a (height, width, channels) image as
// OpenCV's cv::copyMakeBorder, which MXNet calls: a constant, or the image's edge replicated,
// reflected or wrapped around.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <symbind/ops/image/cv_image.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct CvMakeBorderParam : Parameter<CvMakeBorderParam> {
  int top = 0, bot = 0, left = 0, right = 0, type = cv_image::kConstant;
  double value = 0;
  std::vector<float> values;
  static void Declare(ParamDeclarer<CvMakeBorderParam>& d) {
    d.field("top", &CvMakeBorderParam::top).lower_bound(0).describe("Top margin.");
    d.field("bot", &CvMakeBorderParam::bot).lower_bound(0).describe("Bottom margin.");
    d.field("left", &CvMakeBorderParam::left).lower_bound(0).describe("Left margin.");
    d.field("right", &CvMakeBorderParam::right).lower_bound(0).describe("Right margin.");
    d.field("type", &CvMakeBorderParam::type).set_default(cv_image::kConstant)
        .describe("Filling type (default=cv2.BORDER_CONSTANT): 0 constant, 1 replicate, 2 reflect, 3 wrap, "
                  "4 reflect_101.");
    d.field("value", &CvMakeBorderParam::value).set_default(0.0)
        .describe("(Deprecated! Use ``values`` instead.) Fill with single value.");
    d.field("values", &CvMakeBorderParam::values).set_default({})
        .describe("Fill with value(RGB[A] or gray), up to 4 channels.");
  }
};

// OpenCV's saturate_cast: integers rounded to nearest and clamped to the type's range.
template <typename T>
T SaturateTo(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    const double r = std::nearbyint(v);
    return static_cast<T>(std::min<double>(std::max<double>(r, std::numeric_limits<T>::lowest()),
                                           std::numeric_limits<T>::max()));
  }
}

template <typename T>
void MakeBorder(const T* src, int64_t h, int64_t w, int64_t c, const CvMakeBorderParam& p, T* dst) {
  const int64_t oh = h + p.top + p.bot, ow = w + p.left + p.right;
  std::vector<T> fill(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {  // OpenCV's Scalar: a channel beyond `values` fills with 0
    const double v = p.values.empty() ? p.value
                     : ch < static_cast<int64_t>(p.values.size()) ? p.values[static_cast<size_t>(ch)]
                                                                  : 0.0;
    fill[static_cast<size_t>(ch)] = SaturateTo<T>(v);
  }
  ParallelFor(oh, 16, [&](int64_t y0, int64_t y1) {
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        T* out = dst + (y * ow + x) * c;
        const int64_t sy = y - p.top, sx = x - p.left;
        const bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
        if (!inside && p.type == cv_image::kConstant) {
          std::copy(fill.begin(), fill.end(), out);
          continue;
        }
        const int64_t iy = cv_image::BorderIndex(sy, h, p.type), ix = cv_image::BorderIndex(sx, w, p.type);
        std::copy_n(src + (iy * w + ix) * c, c, out);
      }
  });
}

SYMBIND_REGISTER_OP(_cvcopyMakeBorder)
    .describe("Pad image border with OpenCV. Pads a (height, width, channels) image by top, bot, left and "
              "right rows and columns as OpenCV's cv::copyMakeBorder does.")
    .set_params<CvMakeBorderParam>()
    .set_arguments({"src"})
    .add_argument_doc("src", "source image")
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.ndim_known()) return;
      cv_image::CheckImageShape(s, "_cvcopyMakeBorder");
      const auto& p = attrs.param<CvMakeBorderParam>();
      if (p.type < cv_image::kConstant || p.type > cv_image::kReflect101)
        throw ParamError(StrCat("_cvcopyMakeBorder: type ", p.type,
                                " is not supported; use 0 (constant), 1 (replicate), 2 (reflect), 3 (wrap) or 4 "
                                "(reflect_101)"));
      if (p.values.size() > 4)
        throw ParamError(StrCat("_cvcopyMakeBorder: values holds ", p.values.size(), " numbers, at most 4"));
      if (p.type != cv_image::kConstant && (s[0] == 0 || s[1] == 0) && p.top + p.bot + p.left + p.right > 0)
        throw ShapeError(StrCat("_cvcopyMakeBorder: an empty image ", s, " has no border to repeat"));
      ShapeAssignCheck(out, 0, TShape({s[0] + p.top + p.bot, s[1] + p.left + p.right, s[2]}));
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      cv_image::InferImageType(in, out, {DType::kFloat32, DType::kFloat64, DType::kUint8, DType::kInt32},
                               "_cvcopyMakeBorder");
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      if (req[0] == OpReq::kAdd) throw Error("_cvcopyMakeBorder: writing with req 'add' is not supported");
      const auto& p = attrs.param<CvMakeBorderParam>();
      const TShape& s = in[0].shape();
      switch (in[0].dtype()) {
        case DType::kFloat32: return MakeBorder(in[0].data<float>(), s[0], s[1], s[2], p, out[0].data<float>());
        case DType::kFloat64: return MakeBorder(in[0].data<double>(), s[0], s[1], s[2], p, out[0].data<double>());
        case DType::kUint8: return MakeBorder(in[0].data<uint8_t>(), s[0], s[1], s[2], p, out[0].data<uint8_t>());
        case DType::kInt32: return MakeBorder(in[0].data<int32_t>(), s[0], s[1], s[2], p, out[0].data<int32_t>());
        default:
          throw TypeError(StrCat("_cvcopyMakeBorder: images of dtype ", DTypeName(in[0].dtype()),
                                 " are not supported"));
      }
    });

}  // namespace

}  // namespace symbind
