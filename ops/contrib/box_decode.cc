// _contrib_box_decode: boxes from regression offsets relative to anchors (the inverse of
// box_encode, as a detector's output layer applies it).
#include <cmath>

#include <symbind/ops/contrib/box_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct BoxDecodeParam : Parameter<BoxDecodeParam> {
  float std0, std1, std2, std3, clip;
  int format;
  static void Declare(ParamDeclarer<BoxDecodeParam>& d) {
    d.field("std0", &BoxDecodeParam::std0).set_default(1.0f).describe("value to be divided from the 1st encoded values");
    d.field("std1", &BoxDecodeParam::std1).set_default(1.0f).describe("value to be divided from the 2nd encoded values");
    d.field("std2", &BoxDecodeParam::std2).set_default(1.0f).describe("value to be divided from the 3rd encoded values");
    d.field("std3", &BoxDecodeParam::std3).set_default(1.0f).describe("value to be divided from the 4th encoded values");
    d.field("clip", &BoxDecodeParam::clip).set_default(-1.0f)
        .describe("If larger than 0, bounding box target will be clipped to this value.");
    box::BoxFormatField(d.field("format", &BoxDecodeParam::format), box::kCenter, "The anchors' box");
  }
};
}  // namespace

SYMBIND_REGISTER_OP(_contrib_box_decode)
    .add_alias("box_decode")
    .describe(R"(Decodes bounding boxes from offsets relative to anchors: for offsets (dx, dy, dw,
dh) of data (B, N, 4) and anchor n of anchors (1, N, 4) (format: how the anchors are given) with
center (a_x, a_y) and size (a_w, a_h): x = dx * std0 * a_w + a_x, y = dy * std1 * a_h + a_y,
w = exp(min(dw * std2, clip)) * a_w, h = exp(min(dh * std3, clip)) * a_h (no clip unless
clip > 0); the output is (x - w/2, y - h/2, x + w/2, y + h/2), corner format. Zero gradient.)")
    .set_params<BoxDecodeParam>()
    .set_arguments({"data", "anchors"})
    .add_argument_doc("data", "(B, N, 4) predicted bbox offset")
    .add_argument_doc("anchors", "(1, N, 4) encoded in corner or center")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape &d = (*in)[0], &a = (*in)[1];
      if (!d.is_known() || !a.is_known()) return;
      if (d.ndim() != 3 || d[2] != 4 || a.ndim() != 3 || a[2] != 4 || a[1] != d[1] || a.Size() != d[1] * 4)
        throw ShapeError(StrCat("_contrib_box_decode: data must be (B, N, 4) and anchors (1, N, 4); got data ", d,
                                ", anchors ", a));
      ShapeAssignCheck(out, 0, d);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<BoxDecodeParam>();
      const int64_t n = in[0].shape()[1];
      const float *x = in[0].fdata(), *anchors = in[1].fdata();
      std::vector<float> boxes(static_cast<size_t>(in[0].Size()));
      for (int64_t i = 0; i < in[0].Size() / 4; ++i) {
        const float* a = anchors + (i % n) * 4;
        float ax = a[0], ay = a[1], aw = a[2], ah = a[3];
        if (p.format == box::kCorner) {
          aw -= ax;
          ah -= ay;
          ax += aw * 0.5f;
          ay += ah * 0.5f;
        }
        const float* v = x + i * 4;
        const float ox = v[0] * p.std0 * aw + ax, oy = v[1] * p.std1 * ah + ay;
        float dw = v[2] * p.std2, dh = v[3] * p.std3;
        if (p.clip > 0) {
          dw = std::min(dw, p.clip);
          dh = std::min(dh, p.clip);
        }
        const float ow = std::exp(dw) * aw * 0.5f, oh = std::exp(dh) * ah * 0.5f;
        float* o = boxes.data() + i * 4;
        o[0] = ox - ow;
        o[1] = oy - oh;
        o[2] = ox + ow;
        o[3] = oy + oh;
      }
      MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return boxes[static_cast<size_t>(i)]; });
    })
    .set_zero_gradient();

}  // namespace symbind
