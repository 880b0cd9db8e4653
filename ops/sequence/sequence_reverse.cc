// SequenceReverse: per batch entry, reverses the first sequence_length[n] steps along axis 0;
// the padding after them stays in place (MXNet's ReverseKernel). The gradient is the same
// permutation applied to the output gradient.
#include <symbind/ops/sequence/sequence_util.h>

namespace symbind {

namespace {
using namespace sequence_detail;

struct SequenceReverseParam : Parameter<SequenceReverseParam> {
  bool use_sequence_length;
  int axis;
  static void Declare(ParamDeclarer<SequenceReverseParam>& d) {
    DeclareUseSequenceLength(d);
    d.field("axis", &SequenceReverseParam::axis).set_default(0)
        .describe("The sequence axis. Only 0 is currently supported.");
  }
};

// dst at step t of entry n = src at the step it came from (req applied).
void Reverse(const NodeAttrs& attrs, const std::vector<NDArray>& in, const float* src, float* dst, OpReq req) {
  const auto& p = attrs.param<SequenceReverseParam>();
  const SequenceLayout l(in[0].shape(), 0);
  const std::vector<int64_t> len = SequenceLengths(attrs, in, p.use_sequence_length, l, 0);
  for (int64_t n = 0; n < l.N; ++n) {
    const int64_t valid = len[static_cast<size_t>(n)];
    for (int64_t t = 0; t < l.T; ++t) {
      const int64_t from = t < valid ? valid - 1 - t : t;
      AssignWithReq(dst + l.Offset(t, n), src + l.Offset(from, n), l.inner, req);
    }
  }
}
}  // namespace

SYMBIND_REGISTER_OP(SequenceReverse)
    .describe("Reverses the elements of each sequence along axis 0: for batch entry n the first "
              "sequence_length[n] steps (or all) are reversed, the padding after them is kept.")
    .set_params<SequenceReverseParam>()
    .set_arguments([](const NodeAttrs& a) { return SequenceArguments(a.param<SequenceReverseParam>().use_sequence_length); })
    .set_any_dtype_inputs({"sequence_length"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<SequenceReverseParam>();
      if (p.axis != 0)
        throw ShapeError(StrCat("SequenceReverse: only axis 0 is supported (as in MXNet), got ", p.axis));
      ShapeAssignCheck(in, 0, (*out)[0]);
      if (!(*in)[0].ndim_known()) return;
      CheckSequenceShape("SequenceReverse", *in, 0, 2, p.use_sequence_length, in);
      ShapeAssignCheck(out, 0, (*in)[0]);
    })
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      InferSequenceType(attrs.param<SequenceReverseParam>().use_sequence_length, in, out);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      Reverse(attrs, in, in[0].fdata(), out[0].fdata(), req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req.size() > 1) ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      Reverse(attrs, a.inputs, a.out_grads[0].fdata(), a.in_grads[0].fdata(), a.req[0]);
    });

}  // namespace symbind
