// SequenceLast: per batch entry, the step sequence_length[n] - 1 (or the last step) along the
// time axis (0 or 1); the output drops that axis. The gradient scatters back to that step.
#include <symbind/ops/sequence/sequence_util.h>

namespace symbind {

namespace {
using namespace sequence_detail;

struct SequenceLastParam : Parameter<SequenceLastParam> {
  bool use_sequence_length;
  int axis;
  static void Declare(ParamDeclarer<SequenceLastParam>& d) {
    DeclareUseSequenceLength(d);
    d.field("axis", &SequenceLastParam::axis).set_default(0)
        .describe("The sequence axis. Only values of 0 and 1 are currently supported.");
  }
};

// Calls f(offset of the last valid step of entry n in the data, n).
template <typename F>
void ForEachLast(const NodeAttrs& attrs, const std::vector<NDArray>& in, const F& f) {
  const auto& p = attrs.param<SequenceLastParam>();
  const SequenceLayout l(in[0].shape(), p.axis);
  // A length of 0 has no last step (MXNet would read before the array).
  const std::vector<int64_t> len = SequenceLengths(attrs, in, p.use_sequence_length, l, 1);
  for (int64_t n = 0; n < l.N; ++n) f(l.Offset(len[static_cast<size_t>(n)] - 1, n), n, l.inner);
}
}  // namespace

SYMBIND_REGISTER_OP(SequenceLast)
    .describe("Takes the last element of each sequence: for batch entry n, step sequence_length[n] - "
              "1 along the time axis (0 or 1), or the last step; the output drops the time axis.")
    .set_params<SequenceLastParam>()
    .set_arguments([](const NodeAttrs& a) { return SequenceArguments(a.param<SequenceLastParam>().use_sequence_length); })
    .set_any_dtype_inputs({"sequence_length"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<SequenceLastParam>();
      const TShape& d = (*in)[0];
      if (!d.ndim_known()) return;
      CheckSequenceShape("SequenceLast", *in, p.axis, 2, p.use_sequence_length, in);
      std::vector<int64_t> o = d.dims();
      o.erase(o.begin() + p.axis);
      ShapeAssignCheck(out, 0, TShape(o));
    })
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      InferSequenceType(attrs.param<SequenceLastParam>().use_sequence_length, in, out);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const float* x = in[0].fdata();
      float* y = out[0].fdata();
      ForEachLast(attrs, in, [&](int64_t at, int64_t n, int64_t inner) {
        AssignWithReq(y + n * inner, x + at, inner, req[0]);
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req.size() > 1) ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      const float* dy = a.out_grads[0].fdata();
      float* dx = a.in_grads[0].fdata();
      ZeroWithReq(a.in_grads[0], a.req[0]);
      ForEachLast(attrs, a.inputs, [&](int64_t at, int64_t n, int64_t inner) {
        for (int64_t i = 0; i < inner; ++i) dx[at + i] += dy[n * inner + i];
      });
    });

}  // namespace symbind
