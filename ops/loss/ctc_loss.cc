// CTCLoss (aliases ctc_loss, _contrib_CTCLoss, _contrib_ctc_loss): the CTC loss of activations
// data (T, N, C) (softmax over C inside) against padded labels (N, L), one loss per batch entry.
//
// MXNet facts matched here (src/operator/nn/ctc_loss-inl.h, ctc_loss.cc):
// - inputs data, label, then data_lengths and label_lengths when use_data_lengths /
//   use_label_lengths are set; lengths and labels are truncated to integers;
// - blank_label "first": class 0 is the blank and label padding is 0; "last": class C - 1 is the
//   blank and padding is -1; without label_lengths a label ends at its first padding value;
// - two outputs, the loss (N) and a hidden gradient (T, N, C) computed in forward; backward
//   multiplies the hidden gradient by the head gradient of the loss. Steps past data_lengths get
//   gradient 0;
// - MXNet registers the output names under a misspelt attribute ("FListOutputNAmes"), so its
//   outputs take nnvm's default names output0 and output1; symbind keeps them.
// Labels outside the classes, equal to the blank, or lengths out of range are errors (MXNet reads
// out of bounds).
#include <symbind/ops/loss/ctc_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
enum BlankLabel { kBlankFirst, kBlankLast };

struct CTCLossParam : Parameter<CTCLossParam> {
  bool use_data_lengths;
  bool use_label_lengths;
  int blank_label;
  static void Declare(ParamDeclarer<CTCLossParam>& d) {
    d.field("use_data_lengths", &CTCLossParam::use_data_lengths).set_default(false)
        .describe("Whether the data lenghts are decided by `data_lengths`. If false, the lengths are "
                  "equal to the max sequence length.");
    d.field("use_label_lengths", &CTCLossParam::use_label_lengths).set_default(false)
        .describe("Whether the label lenghts are decided by `label_lengths`, or derived from "
                  "`padding_mask`. If false, the lengths are derived from the first occurrence of the "
                  "value of `padding_mask`. The value of `padding_mask` is ``0`` when first CTC label "
                  "is reserved for blank, and ``-1`` when last label is reserved for blank. See "
                  "`blank_label`.");
    d.field("blank_label", &CTCLossParam::blank_label)
        .add_enum("first", kBlankFirst).add_enum("last", kBlankLast).set_default(kBlankFirst)
        .describe("Set the label that is reserved for blank label.If \"first\", 0-th label is reserved, "
                  "and label values for tokens in the vocabulary are between ``1`` and "
                  "``alphabet_size-1``, and the padding mask is ``-1``. If \"last\", last label value "
                  "``alphabet_size-1`` is reserved for blank label instead, and label values for tokens "
                  "in the vocabulary are between ``0`` and ``alphabet_size-2``, and the padding mask is "
                  "``0``.");
  }
};

std::vector<std::string> CTCArguments(const NodeAttrs& attrs) {
  const auto& p = attrs.param<CTCLossParam>();
  std::vector<std::string> names{"data", "label"};
  if (p.use_data_lengths) names.push_back("data_lengths");
  if (p.use_label_lengths) names.push_back("label_lengths");
  return names;
}

void InferCTCShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<CTCLossParam>();
  const TShape &d = (*in)[0], &l = (*in)[1];
  if (!d.ndim_known() || !l.ndim_known()) return;
  if (d.ndim() != 3)
    throw ShapeError(StrCat("CTCLoss: data must be (sequence length, batch, alphabet size), got ", d));
  if (l.ndim() != 2) throw ShapeError(StrCat("CTCLoss: label must be (batch, label length), got ", l));
  if (d[1] >= 0 && l[0] >= 0 && d[1] != l[0])
    throw ShapeError(StrCat("CTCLoss: the batch size of data ", d, " and label ", l, " differ"));
  if (d[0] >= 0 && l[1] >= 0 && d[0] < l[1])
    throw ShapeError(StrCat("CTCLoss: the label length ", l[1], " exceeds the sequence length ", d[0]));
  size_t next = 2;
  if (p.use_data_lengths) ShapeAssignCheck(in, next++, TShape({d[1]}));
  if (p.use_label_lengths) ShapeAssignCheck(in, next++, TShape({d[1]}));
  ShapeAssignCheck(out, 0, TShape({d[1]}));
  ShapeAssignCheck(out, 1, d);
}

// Integer values of a lengths input, each in [0, limit].
std::vector<int64_t> Lengths(const NodeAttrs& attrs, const NDArray& a, int64_t limit, const char* what) {
  std::vector<double> v = ValuesAsDouble(a);
  std::vector<int64_t> out;
  for (size_t n = 0; n < v.size(); ++n) {
    if (!(v[n] >= 0 && v[n] < static_cast<double>(limit) + 1))
      throw Error(StrCat(InOperator(attrs), ": ", what, "[", n, "] = ", v[n], " is out of range (expected 0 to ", limit, ")"));
    out.push_back(static_cast<int64_t>(v[n]));
  }
  return out;
}

void CTCForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<CTCLossParam>();
  const TShape& s = in[0].shape();
  const int64_t T = s[0], N = s[1], C = s[2], L = in[1].shape()[1];
  const int64_t blank = p.blank_label == kBlankFirst ? 0 : C - 1;
  const double padding = p.blank_label == kBlankFirst ? 0 : -1;
  size_t next = 2;
  std::vector<int64_t> data_len(static_cast<size_t>(N), T);
  if (p.use_data_lengths) data_len = Lengths(attrs, in[next++], T, "data_lengths");
  std::vector<int64_t> label_len;
  if (p.use_label_lengths) label_len = Lengths(attrs, in[next++], L, "label_lengths");
  const std::vector<double> raw = ValuesAsDouble(in[1]);
  std::vector<std::vector<int64_t>> labels(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    const double* row = raw.data() + n * L;
    const int64_t len = p.use_label_lengths ? label_len[n]
                                            : std::find(row, row + L, padding) - row;
    for (int64_t i = 0; i < len; ++i) {
      const double v = row[i];
      // A label equal to the blank is computed as MXNet's warp-ctc does (a path cannot skip
      // into it); only values outside the alphabet are refused.
      if (!(v > -1 && v < static_cast<double>(C)))
        throw Error(StrCat(InOperator(attrs), ": label[", n, ", ", i, "] = ", v, " is not a class (alphabet size ",
                           C, ", blank ", blank, ", blank_label ", p.blank_label == kBlankFirst ? "first" : "last",
                           ")"));
      labels[n].push_back(static_cast<int64_t>(v));
    }
  }
  const float* x = in[0].fdata();
  float* grad = out[1].fdata();
  std::vector<float> loss(static_cast<size_t>(N));
  ctc_detail::WithCTCTables(attrs, T, L, [&] {
    ParallelFor(N, 1, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        loss[n] = static_cast<float>(ctc_detail::CTCLossAndGrad(x + n * C, N * C, data_len[n], C, labels[n],
                                                                blank, grad + n * C));
        for (int64_t t = data_len[n]; t < T; ++t) std::fill(grad + (t * N + n) * C, grad + (t * N + n + 1) * C, 0.0f);
      }
    });
  });
  AssignWithReq(out[0].fdata(), loss.data(), N, req[0]);
}

void CTCBackward(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  for (size_t i = 1; i < a.req.size(); ++i) ZeroWithReq(a.in_grads[i], a.req[i]);
  if (a.req[0] == OpReq::kNull) return;
  const TShape& s = a.inputs[0].shape();
  const int64_t NC = s[1] * s[2], C = s[2];
  const float *head = a.out_grads[0].fdata(), *grad = a.outputs[1].fdata();
  MapWithReq(InGradOrNull(a, 0), a.inputs[0].Size(), a.req[0],
             [&](int64_t i) { return head[(i % NC) / C] * grad[i]; });
}
}  // namespace

SYMBIND_REGISTER_OP(CTCLoss)
    .add_alias("ctc_loss")
    .add_alias("_contrib_CTCLoss")
    .add_alias("_contrib_ctc_loss")
    .describe("Connectionist Temporal Classification loss of activations data (sequence length, "
              "batch, alphabet size), softmax applied inside, against padded labels (batch, label "
              "length); one loss per batch entry. A hidden second output holds the gradient.")
    .set_params<CTCLossParam>()
    .set_arguments(CTCArguments)
    .set_outputs({"output0", "output1"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_any_dtype_inputs({"label", "data_lengths", "label_lengths"})
    .set_infer_shape(InferCTCShape)
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      for (size_t i = 1; i < in->size(); ++i)
        if ((*in)[i] < 0) TypeAssignCheck(in, i, (*in)[0]);
      TypeAssignCheck(out, 0, (*in)[0]);
      TypeAssignCheck(out, 1, (*in)[0]);
    })
    .set_forward(CTCForward)
    .set_backward(CTCBackward);

}  // namespace symbind
