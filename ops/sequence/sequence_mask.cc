// SequenceMask: sets the steps at or past each sequence's length to `value` (time on axis 0 or
// 1); without use_sequence_length it is the identity. The gradient passes where the data was
// kept and is zero where it was masked; sequence_length gets none (MXNet defines none).
#include <symbind/ops/sequence/sequence_util.h>

namespace symbind {

namespace {
using namespace sequence_detail;

struct SequenceMaskParam : Parameter<SequenceMaskParam> {
  bool use_sequence_length;
  float value;
  int axis;
  static void Declare(ParamDeclarer<SequenceMaskParam>& d) {
    DeclareUseSequenceLength(d);
    d.field("value", &SequenceMaskParam::value).set_default(0.0f).allow_non_finite()
        .describe("The value to be used as a mask.");
    d.field("axis", &SequenceMaskParam::axis).set_default(0)
        .describe("The sequence axis. Only values of 0 and 1 are currently supported.");
  }
};

// Writes f(index, kept) for every element, kept = the step is inside its sequence.
template <typename F>
void ForEachMasked(const NodeAttrs& attrs, const std::vector<NDArray>& in, float* out, OpReq req,
                   const F& f) {
  const auto& p = attrs.param<SequenceMaskParam>();
  const SequenceLayout l(in[0].shape(), p.axis);
  const std::vector<int64_t> len = SequenceLengths(attrs, in, p.use_sequence_length, l, 0, /*clamp=*/true);
  for (int64_t t = 0; t < l.T; ++t)
    for (int64_t n = 0; n < l.N; ++n) {
      const int64_t at = l.Offset(t, n);
      const bool kept = t < len[static_cast<size_t>(n)];
      for (int64_t i = at; i < at + l.inner; ++i) {
        const float v = f(i, kept);
        if (req == OpReq::kAdd) out[i] += v;
        else out[i] = v;
      }
    }
}
}  // namespace

SYMBIND_REGISTER_OP(SequenceMask)
    .describe("Sets all elements outside the sequence to a constant value: for batch entry n, the "
              "steps t >= sequence_length[n] along the time axis (0 or 1) become `value`.")
    .set_params<SequenceMaskParam>()
    .set_arguments([](const NodeAttrs& a) { return SequenceArguments(a.param<SequenceMaskParam>().use_sequence_length); })
    .set_any_dtype_inputs({"sequence_length"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<SequenceMaskParam>();
      ShapeAssignCheck(in, 0, (*out)[0]);
      if (!(*in)[0].ndim_known()) return;
      CheckSequenceShape("SequenceMask", *in, p.axis, 2, p.use_sequence_length, in);
      ShapeAssignCheck(out, 0, (*in)[0]);
    })
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      InferSequenceType(attrs.param<SequenceMaskParam>().use_sequence_length, in, out);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const float* x = in[0].fdata();
      const float value = attrs.param<SequenceMaskParam>().value;
      ForEachMasked(attrs, in, out[0].fdata(), req[0], [&](int64_t i, bool kept) { return kept ? x[i] : value; });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req.size() > 1) ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      const float* dy = a.out_grads[0].fdata();
      ForEachMasked(attrs, a.inputs, a.in_grads[0].fdata(), a.req[0],
                    [&](int64_t i, bool kept) { return kept ? dy[i] : 0.0f; });
    });

}  // namespace symbind
