// _contrib_box_encode: regression targets of matched anchors (Faster R-CNN / SSD training).
#include <cmath>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
void CheckShapes(const std::vector<TShape>& in) {
  auto fail = [&](const std::string& why) {
    throw ShapeError(StrCat("_contrib_box_encode: ", why, "; got samples ", in[0], ", matches ", in[1], ", anchors ",
                            in[2], ", refs ", in[3]));
  };
  const TShape &s = in[0], &m = in[1], &a = in[2], &r = in[3];
  if (s.ndim() != 2 || m.ndim() != 2 || a.ndim() != 3 || r.ndim() != 3 || a[2] != 4 || r[2] != 4)
    fail("samples and matches must be (B, N), anchors (B, N, 4) and refs (B, M, 4)");
  if (s != m || a[0] != s[0] || a[1] != s[1] || r[0] != s[0]) fail("the batch and anchor counts disagree");
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_box_encode)
    .add_alias("box_encode")
    .describe(R"(Encodes bounding boxes as regression targets of their anchors. For anchor n of
batch b, matched (matches[b, n]) to reference box refs[b, matches[b, n]], both in corner format
and taken as centers and sizes: targets = ((ref_x - a_x) / a_w, (ref_y - a_y) / a_h,
log(ref_w / a_w), log(ref_h / a_h)), minus means and divided by stds, where samples[b, n] > 0.5
(a positive sample), else 0; masks are 1 there, else 0. Zero gradient.)")
    .set_arguments({"samples", "matches", "anchors", "refs", "means", "stds"})
    .add_argument_doc("samples", "(B, N) value +1 (positive), -1 (negative), 0 (ignore)")
    .add_argument_doc("matches", "(B, N) value range [0, M)")
    .add_argument_doc("anchors", "(B, N, 4) encoded in corner")
    .add_argument_doc("refs", "(B, M, 4) encoded in corner")
    .add_argument_doc("means", "(4,) Mean value to be subtracted from encoded values")
    .add_argument_doc("stds", "(4,) Std value to be divided from encoded values")
    .set_outputs({"targets", "masks"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(in, 4, TShape({4}));
      ShapeAssignCheck(in, 5, TShape({4}));
      for (size_t k = 0; k < 4; ++k)
        if (!(*in)[k].is_known()) return;
      CheckShapes(*in);
      ShapeAssignCheck(out, 0, (*in)[2]);
      ShapeAssignCheck(out, 1, (*in)[2]);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const int64_t batches = in[2].shape()[0], n = in[2].shape()[1], m = in[3].shape()[1];
      const float *samples = in[0].fdata(), *matches = in[1].fdata(), *anchors = in[2].fdata(), *refs = in[3].fdata();
      const float *means = in[4].fdata(), *stds = in[5].fdata();
      std::vector<float> targets(static_cast<size_t>(batches * n * 4)), masks(targets.size());
      for (int64_t i = 0; i < batches * n; ++i) {
        const bool positive = samples[i] > 0.5f;
        float* t = targets.data() + i * 4;
        std::fill(masks.begin() + i * 4, masks.begin() + i * 4 + 4, positive ? 1.0f : 0.0f);
        if (!positive) {
          std::fill(t, t + 4, 0.0f);
          continue;
        }
        const double match = std::floor(static_cast<double>(matches[i]));
        if (!(match >= 0 && match < static_cast<double>(m)))
          throw IndexError(StrCat("_contrib_box_encode: match ", matches[i], " of a positive sample is outside [0, ",
                                  m, ") (refs has ", m, " boxes)"));
        const float* r = refs + ((i / n) * m + static_cast<int64_t>(match)) * 4;
        const float* a = anchors + i * 4;
        const float rw = r[2] - r[0], rh = r[3] - r[1], rx = r[0] + rw * 0.5f, ry = r[1] + rh * 0.5f;
        const float aw = a[2] - a[0], ah = a[3] - a[1], ax = a[0] + aw * 0.5f, ay = a[1] + ah * 0.5f;
        t[0] = ((rx - ax) / aw - means[0]) / stds[0];
        t[1] = ((ry - ay) / ah - means[1]) / stds[1];
        t[2] = (std::log(rw / aw) - means[2]) / stds[2];
        t[3] = (std::log(rh / ah) - means[3]) / stds[3];
      }
      MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return targets[static_cast<size_t>(i)]; });
      MapWithReq(out[1].fdata(), out[1].Size(), req[1], [&](int64_t i) { return masks[static_cast<size_t>(i)]; });
    })
    .set_zero_gradient();

}  // namespace symbind
