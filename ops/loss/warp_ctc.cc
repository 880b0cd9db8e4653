// WarpCTC: MXNet's plugin op (plugin/warpctc) used by CRNN-style OCR models. Forward is the
// softmax over the last axis of data (input_length * batch, alphabet), what inference reads;
// backward is the CTC gradient with respect to data (a loss head: the head gradient is ignored).
//
// MXNet facts matched here (plugin/warpctc/warpctc-inl.h): rows are time-major (row t * N + n is
// step t of sequence n, N = rows / input_length); label holds label_length entries per sequence
// (batch * label_length, inferred as int32), the blank is class 0 and every 0 in a label is
// dropped (padding); every sequence has input_length steps.
#include <symbind/ops/kernels/softmax.h>
#include <symbind/ops/loss/ctc_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct WarpCTCParam : Parameter<WarpCTCParam> {
  int label_length;
  int input_length;
  static void Declare(ParamDeclarer<WarpCTCParam>& d) {
    d.field("label_length", &WarpCTCParam::label_length).set_default(0).describe("Real label length");
    d.field("input_length", &WarpCTCParam::input_length).set_default(0).describe("Input length");
  }
};

void InferWarpCTCShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<WarpCTCParam>();
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 2) throw ShapeError(StrCat("WarpCTC: data must be (input_length * batch, alphabet), got ", d));
  ShapeAssignCheck(out, 0, d);
  if (d[0] < 0) return;
  if (p.input_length <= 0 || d[0] % p.input_length != 0)
    throw ShapeError(StrCat("WarpCTC: input_length ", p.input_length, " must be positive and divide the ",
                            d[0], " rows of data ", d));
  std::vector<int64_t> label(static_cast<size_t>(d.ndim() - 1), 1);
  label[0] = p.label_length * (d[0] / p.input_length);
  ShapeAssignCheck(in, 1, TShape(label));
}

AxisLayout RowsOf(const TShape& s) { return {s.ProdDims(0, s.ndim() - 1), s[s.ndim() - 1], 1}; }
}  // namespace

SYMBIND_REGISTER_OP(WarpCTC)
    .describe("The warp-ctc plugin op: forward is the softmax over the last axis of data "
              "(input_length * batch, alphabet); backward is the CTC loss gradient against label "
              "(label_length per sequence, blank 0, zeros dropped).")
    .set_params<WarpCTCParam>()
    .set_arguments({"data", "label"})
    .set_any_dtype_inputs({"label"})
    .set_is_loss()
    .set_infer_shape(InferWarpCTCShape)
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(in, 0, static_cast<int>(DType::kFloat32));
      if ((*in)[1] < 0) TypeAssignCheck(in, 1, static_cast<int>(DType::kInt32));
      TypeAssignCheck(out, 0, static_cast<int>(DType::kFloat32));
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      std::vector<float> y(static_cast<size_t>(in[0].Size()));
      SoftmaxAlong(in[0].fdata(), y.data(), RowsOf(in[0].shape()), 1.0, false);
      AssignWithReq(out[0].fdata(), y.data(), out[0].Size(), req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<WarpCTCParam>();
      ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      const AxisLayout rows = RowsOf(a.inputs[0].shape());
      const int64_t T = p.input_length, N = rows.outer / T, C = rows.n;
      const std::vector<double> raw = ValuesAsDouble(a.inputs[1]);
      std::vector<std::vector<int64_t>> labels(static_cast<size_t>(N));
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = n * p.label_length; i < (n + 1) * p.label_length; ++i) {
          const double v = raw[static_cast<size_t>(i)];
          if (v == 0) continue;
          if (!(v > 0 && v < static_cast<double>(C)))
            throw Error(StrCat(InOperator(attrs), ": label[", i, "] = ", v, " is not a class (expected 1 to ", C - 1,
                               ", or 0 for padding)"));
          labels[n].push_back(static_cast<int64_t>(v));
        }
      std::vector<float> grad(static_cast<size_t>(a.inputs[0].Size()));
      const float* x = a.inputs[0].fdata();
      ctc_detail::WithCTCTables(attrs, T, p.label_length, [&] {
        ParallelFor(N, 1, [&](int64_t b, int64_t e) {
          for (int64_t n = b; n < e; ++n)
            ctc_detail::CTCLossAndGrad(x + n * C, N * C, T, C, labels[n], 0, grad.data() + n * C);
        });
      });
      AssignWithReq(a.in_grads[0].fdata(), grad.data(), a.inputs[0].Size(), a.req[0]);
    });

}  // namespace symbind
