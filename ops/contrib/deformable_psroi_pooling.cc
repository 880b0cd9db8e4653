// _contrib_DeformablePSROIPooling: position-sensitive ROI pooling whose bins move by learned
// offsets (Deformable ConvNets, arXiv:1703.06211). Each bin averages sample_per_part^2
// bilinear samples; the hidden top_count output keeps each bin's count for the backward.
#include <cmath>
#include <vector>

#include <symbind/ops/contrib/roi_util.h>

namespace symbind {

namespace {
struct DeformablePSROIPoolingParam : Parameter<DeformablePSROIPoolingParam> {
  float spatial_scale;
  int64_t output_dim;
  int64_t group_size;
  int64_t pooled_size;
  int64_t part_size;
  int64_t sample_per_part;
  float trans_std;
  bool no_trans;
  // MXNet reads part_size 0 as pooled_size.
  int64_t part() const { return part_size > 0 ? part_size : pooled_size; }
  static void Declare(ParamDeclarer<DeformablePSROIPoolingParam>& d) {
    using P = DeformablePSROIPoolingParam;
    roi::DeclareSpatialScale(d);
    d.field("output_dim", &P::output_dim).lower_bound(1).describe("fix output dim: the output's channels");
    d.field("group_size", &P::group_size).lower_bound(1).describe("fix group size: position-sensitive groups per side");
    d.field("pooled_size", &P::pooled_size).lower_bound(1).describe("fix pooled size: bins per side");
    d.field("part_size", &P::part_size).set_default(0).lower_bound(0).describe("fix part size: offset parts per side of trans (0: pooled_size)");
    d.field("sample_per_part", &P::sample_per_part).set_default(1).lower_bound(1)
        .describe("fix samples per part: bilinear samples per side of a bin");
    d.field("trans_std", &P::trans_std).set_default(0.0f).set_range(0.0, 1.0)
        .describe("fix transition std: the offsets' scale, times the region's size");
    d.field("no_trans", &P::no_trans).set_default(false)
        .describe("Whether to disable trans parameter.");
  }
};

constexpr const char* kOp = "DeformablePSROIPooling";

void InferShapeDeformablePSROIPooling(const NodeAttrs& attrs, std::vector<TShape>* in,
                                      std::vector<TShape>* out) {
  const auto& p = attrs.param<DeformablePSROIPoolingParam>();
  TShape o;
  if (!roi::PsOutputShape(kOp, (*in)[0], (*in)[1], p.output_dim, p.group_size, p.pooled_size, &o)) return;
  if (!p.no_trans && (*in)[2].ndim_known()) {
    // (num_rois, 2 * num_classes, part_size, part_size): an (x, y) offset per class and part.
    const TShape& t = (*in)[2];
    const int64_t part = p.part();
    auto bad = [&](const std::string& why) {
      return ShapeError(StrCat(kOp, ": trans should be (num_rois, 2 * num_classes, part_size, part_size) = (",
                               o[0], ", 2 * num_classes, ", part, ", ", part, "), got ", t, ": ", why));
    };
    if (t.ndim() != 4) throw bad("not 4D");
    if (t[0] >= 0 && o[0] >= 0 && t[0] != o[0]) throw bad("one row per roi");
    if ((t[2] >= 0 && t[2] != part) || (t[3] >= 0 && t[3] != part)) throw bad("part_size x part_size parts");
    if (t[1] >= 0 && (t[1] < 2 || t[1] % 2 != 0 || p.output_dim % (t[1] / 2) != 0))
      throw bad(StrCat("2 * num_classes channels with num_classes dividing output_dim = ", p.output_dim));
  }
  ShapeAssignCheck(out, 0, o);
  ShapeAssignCheck(out, 1, o);
}

// What one bin (r, c, ph, pw) samples: sample_per_part^2 points from (h0, w0) in steps of
// (step_h, step_w), in data channel `channel`; `trans` indexes its x offset (-1: no offsets).
struct Bin {
  int64_t channel = 0, trans = -1;
  float h0 = 0, w0 = 0, step_h = 0, step_w = 0;
};

struct Geometry {
  int64_t H, W, P, G, part, classes, per_class, spp;
  float trans_std;
};

Bin BinOf(const Geometry& s, const roi::PsRegion& g, const float* trans, int64_t r, int64_t c, int64_t ph,
          int64_t pw) {
  Bin b;
  const float bin_h = g.h / static_cast<float>(s.P), bin_w = g.w / static_cast<float>(s.P);
  b.step_h = bin_h / static_cast<float>(s.spp);
  b.step_w = bin_w / static_cast<float>(s.spp);
  b.channel = roi::PsSourceChannel(c, ph, pw, s.G, s.P);
  float tx = 0.0f, ty = 0.0f;
  if (trans) {
    auto part_of = [&](int64_t v) {
      const float at = std::floor(static_cast<float>(v) / static_cast<float>(s.P) * static_cast<float>(s.part));
      return std::min(static_cast<int64_t>(at), s.part - 1);  // float rounding must not reach past the parts
    };
    const int64_t cls = c / s.per_class;
    b.trans = ((r * s.classes + cls) * 2 * s.part + part_of(ph)) * s.part + part_of(pw);
    tx = trans[b.trans] * s.trans_std;
    ty = trans[b.trans + s.part * s.part] * s.trans_std;
  }
  b.w0 = static_cast<float>(pw) * bin_w + g.x;
  b.w0 += tx * g.w;
  b.h0 = static_cast<float>(ph) * bin_h + g.y;
  b.h0 += ty * g.h;
  return b;
}

// Sample (ih, iw) of a bin: false when it lies beyond half a pixel outside the image (or is
// NaN); else the point clamped into the image, its corner pixels (floor and ceil) and the
// fractions past the top-left one.
struct Sample {
  int64_t y0, y1, x0, x1;
  float fy, fx;
};
bool SampleAt(const Geometry& s, const Bin& b, int64_t ih, int64_t iw, Sample* out) {
  float w = b.w0 + static_cast<float>(iw) * b.step_w;
  float h = b.h0 + static_cast<float>(ih) * b.step_h;
  const double wd = w, hd = h;
  if (s.H <= 0 || s.W <= 0) return false;  // an empty image: the clamp below has no pixel to land on
  if (!(wd >= -0.5 && wd <= static_cast<double>(s.W) - 0.5 && hd >= -0.5 && hd <= static_cast<double>(s.H) - 0.5))
    return false;
  w = std::min(std::max(w, 0.0f), static_cast<float>(s.W - 1));
  h = std::min(std::max(h, 0.0f), static_cast<float>(s.H - 1));
  out->x0 = static_cast<int64_t>(std::floor(w));
  out->x1 = static_cast<int64_t>(std::ceil(w));
  out->y0 = static_cast<int64_t>(std::floor(h));
  out->y1 = static_cast<int64_t>(std::ceil(h));
  out->fx = w - static_cast<float>(out->x0);
  out->fy = h - static_cast<float>(out->y0);
  return true;
}

Geometry GeometryOf(const DeformablePSROIPoolingParam& p, const TShape& data, const std::vector<NDArray>& in) {
  const int64_t classes = p.no_trans ? 1 : in[2].shape()[1] / 2;
  return Geometry{data[2], data[3], p.pooled_size, p.group_size, p.part(), classes, p.output_dim / classes,
                  p.sample_per_part, p.trans_std};
}

void ForwardDeformablePSROIPooling(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                   const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<DeformablePSROIPoolingParam>();
  const TShape& d = in[0].shape();
  const Geometry s = GeometryOf(p, d, in);
  const int64_t DC = d[1], R = in[1].shape()[0], C = p.output_dim, P = p.pooled_size;
  const std::vector<roi::PsRegion> regions = roi::PsRegions(kOp, in[1], d[0], p.spatial_scale, -0.5);
  const float* x = in[0].fdata();
  const float* trans = p.no_trans ? nullptr : in[2].fdata();
  float* y = out[0].fdata();
  float* count_out = out[1].fdata();
  ParallelFor(R * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t rc = b; rc < e; ++rc) {
      const int64_t r = rc / C, c = rc % C;
      const roi::PsRegion& g = regions[static_cast<size_t>(r)];
      for (int64_t ph = 0; ph < P; ++ph)
        for (int64_t pw = 0; pw < P; ++pw) {
          float sum = 0.0f;
          int64_t count = 0;
          if (g.batch >= 0) {
            const Bin bin = BinOf(s, g, trans, r, c, ph, pw);
            const float* plane = x + (g.batch * DC + bin.channel) * s.H * s.W;
            Sample t;
            for (int64_t ih = 0; ih < s.spp; ++ih)
              for (int64_t iw = 0; iw < s.spp; ++iw) {
                if (!SampleAt(s, bin, ih, iw, &t)) continue;
                sum += (1 - t.fx) * (1 - t.fy) * plane[t.y0 * s.W + t.x0] +
                       (1 - t.fx) * t.fy * plane[t.y1 * s.W + t.x0] + t.fx * (1 - t.fy) * plane[t.y0 * s.W + t.x1] +
                       t.fx * t.fy * plane[t.y1 * s.W + t.x1];
                ++count;
              }
          }
          const float v = count == 0 ? 0.0f : sum / static_cast<float>(count);
          const int64_t o = (rc * P + ph) * P + pw;
          if (req[0] != OpReq::kNull) y[o] = req[0] == OpReq::kAdd ? y[o] + v : v;
          count_out[o] = static_cast<float>(count);  // hidden: the backward reads it as written
        }
    }
  });
}

void BackwardDeformablePSROIPooling(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<DeformablePSROIPoolingParam>();
  if (a.req[1] == OpReq::kWrite || a.req[1] == OpReq::kWriteInplace) a.in_grads[1].Fill(0.0f);
  const bool want_data = a.req[0] != OpReq::kNull;
  const bool want_trans = !p.no_trans && a.req[2] != OpReq::kNull;
  if (want_data && a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
  if (want_trans && a.req[2] != OpReq::kAdd) a.in_grads[2].Fill(0.0f);
  if (!want_data && !want_trans) return;
  const TShape& d = a.inputs[0].shape();
  const Geometry s = GeometryOf(p, d, a.inputs);
  const int64_t DC = d[1], R = a.inputs[1].shape()[0], C = p.output_dim, P = p.pooled_size;
  const std::vector<roi::PsRegion> regions = roi::PsRegions(kOp, a.inputs[1], d[0], p.spatial_scale, -0.5);
  const float* x = a.inputs[0].fdata();
  const float* trans = p.no_trans ? nullptr : a.inputs[2].fdata();
  const float* dy = a.out_grads[0].fdata();
  const float* counts = a.outputs[1].fdata();
  float* dx = want_data ? a.in_grads[0].fdata() : nullptr;
  float* dtrans = want_trans ? a.in_grads[2].fdata() : nullptr;
  // Output channels read disjoint data channels, and the channels of one class share its
  // offsets: parallel over classes when the offsets get a gradient, else over channels.
  const int64_t unit = want_trans ? s.per_class : 1;
  ParallelFor(C / unit, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b * unit; c < e * unit; ++c)
      for (int64_t r = 0; r < R; ++r) {
        const roi::PsRegion& g = regions[static_cast<size_t>(r)];
        if (g.batch < 0) continue;
        for (int64_t ph = 0; ph < P; ++ph)
          for (int64_t pw = 0; pw < P; ++pw) {
            const int64_t o = ((r * C + c) * P + ph) * P + pw;
            if (!(counts[o] > 0.0f)) continue;
            const float share = dy[o] / counts[o];
            const Bin bin = BinOf(s, g, trans, r, c, ph, pw);
            const int64_t base = (g.batch * DC + bin.channel) * s.H * s.W;
            Sample t;
            for (int64_t ih = 0; ih < s.spp; ++ih)
              for (int64_t iw = 0; iw < s.spp; ++iw) {
                if (!SampleAt(s, bin, ih, iw, &t)) continue;
                const int64_t i00 = base + t.y0 * s.W + t.x0, i01 = base + t.y1 * s.W + t.x0;
                const int64_t i10 = base + t.y0 * s.W + t.x1, i11 = base + t.y1 * s.W + t.x1;
                if (dx) {
                  dx[i00] += (1 - t.fx) * (1 - t.fy) * share;
                  dx[i01] += (1 - t.fx) * t.fy * share;
                  dx[i10] += t.fx * (1 - t.fy) * share;
                  dx[i11] += t.fx * t.fy * share;
                }
                if (!dtrans) continue;
                // MXNet differentiates the interpolation at the clamped point (and gives 0
                // along an axis where the point sits on a pixel).
                const float gx = x[i11] * t.fy + x[i10] * (1 - t.fy) - x[i01] * t.fy - x[i00] * (1 - t.fy);
                const float gy = x[i11] * t.fx + x[i01] * (1 - t.fx) - x[i10] * t.fx - x[i00] * (1 - t.fx);
                dtrans[bin.trans] += gx * (s.trans_std * share * g.w);
                dtrans[bin.trans + s.part * s.part] += gy * (s.trans_std * share * g.h);
              }
          }
      }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_DeformablePSROIPooling)
    .describe("Deformable position-sensitive region of interest pooling (Deformable ConvNets, "
              "https://arxiv.org/abs/1703.06211). Each region [batch_index, x1, y1, x2, y2] has "
              "its corners rounded, the far one made inclusive (+1), then scaled by spatial_scale "
              "and moved by -0.5 (sides below 0.1 become 0.1); it is split into pooled_size x "
              "pooled_size bins. Bin (ph, pw) of output channel c moves by trans * trans_std times "
              "the region's size (the offsets of c's class, num_classes = trans channels / 2, at "
              "part (floor(ph / pooled_size * part_size), likewise pw); none with no_trans) and "
              "averages sample_per_part^2 bilinear samples of data channel (c * group_size + gh) * "
              "group_size + gw; samples beyond half a pixel outside the image are left out, the "
              "others clamped into it. The hidden second output top_count holds each bin's sample "
              "count (a bin without samples gives 0). Regions with a negative batch index give 0; "
              "a batch index past the data or a non-finite coordinate is an error. Differentiable "
              "with respect to data and trans (MXNet's gradient: the interpolation's slope at the "
              "clamped point); the rois get a zero gradient.")
    .set_params<DeformablePSROIPoolingParam>()
    .set_arguments([](const NodeAttrs& a) {
      return a.param<DeformablePSROIPoolingParam>().no_trans ? std::vector<std::string>{"data", "rois"}
                                                              : std::vector<std::string>{"data", "rois", "trans"};
    })
    .add_argument_doc("data", roi::kDataDoc)
    .add_argument_doc("rois", roi::kRoisDoc)
    .add_argument_doc("trans", "transition parameter: (num_rois, 2 * num_classes, part_size, part_size) "
                               "offsets, x then y for each class")
    .set_outputs({"output", "top_count"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferShapeDeformablePSROIPooling)
    .set_forward(ForwardDeformablePSROIPooling)
    .set_backward(BackwardDeformablePSROIPooling);

}  // namespace symbind
