// FullyConnected: out = data * weight^T + bias.

#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/op_util.h>
namespace symbind {

namespace {
struct FullyConnectedParam : Parameter<FullyConnectedParam> {
  int num_hidden;
  bool no_bias;
  bool flatten;
  static void Declare(ParamDeclarer<FullyConnectedParam>& d) {
    d.field("num_hidden", &FullyConnectedParam::num_hidden).lower_bound(1)
        .describe("Number of hidden nodes of the output.");
    d.field("no_bias", &FullyConnectedParam::no_bias).set_default(false)
        .describe("Whether to disable bias parameter.");
    d.field("flatten", &FullyConnectedParam::flatten).set_default(true)
        .describe("Whether to collapse all but the first axis of the input data tensor.");
  }
};

// (batch, input features) of the data as the op sees it.
std::pair<int64_t, int64_t> FlatDims(const TShape& s, bool flatten) {
  if (flatten) return {s[0], s.ProdDims(1, s.ndim())};
  return {s.ProdDims(0, s.ndim() - 1), s[s.ndim() - 1]};
}

void InferShapeFC(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<FullyConnectedParam>();
  const TShape& d = (*in)[0];
  if (!p.no_bias) ShapeAssignCheck(in, 2, TShape({p.num_hidden}));
  if (d.ndim_known()) {
    if (d.ndim() < 1) throw ShapeError("FullyConnected needs data of rank >= 1");
    int64_t features = -1;
    if (p.flatten) {
      bool known = true;
      for (int i = 1; i < d.ndim(); ++i) known &= d[i] >= 0;
      if (known) features = d.ProdDims(1, d.ndim());
      ShapeAssignCheck(out, 0, TShape({d[0], p.num_hidden}));
    } else {
      features = d[d.ndim() - 1];
      TShape o = d;
      o[o.ndim() - 1] = p.num_hidden;
      ShapeAssignCheck(out, 0, o);
    }
    ShapeAssignCheck(in, 1, TShape({p.num_hidden, features}));
    // Leading dims unknown in data flow back from a known output (MXNet's batch inference).
    const TShape& o = (*out)[0];
    if (o.ndim_known()) {
      TShape filled = (*in)[0];
      const int lead = p.flatten ? 1 : filled.ndim() - 1;
      for (int i = 0; i < lead && i < o.ndim(); ++i)
        if (filled[i] < 0) filled[i] = o[i];
      ShapeAssignCheck(in, 0, filled);
    }
  } else if ((*out)[0].ndim_known() && p.flatten) {
    // The batch size flows back from the output (MXNet infers data's first dim this way).
    const TShape& o = (*out)[0];
    const TShape& w = (*in)[1];
    if (w.ndim() == 2 && w[1] >= 0) ShapeAssignCheck(in, 0, TShape({o[0], w[1]}));
  }
}

void ForwardFC(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FullyConnectedParam>();
  const auto batch_features = FlatDims(in[0].shape(), p.flatten);
  const auto batch = batch_features.first;
  const auto features = batch_features.second;
  float* y = out[0].fdata();
  float beta = req[0] == OpReq::kAdd ? 1.0f : 0.0f;
  if (req[0] == OpReq::kNull) return;
  Gemm(false, true, batch, p.num_hidden, features, 1.0f, in[0].fdata(), features, in[1].fdata(),
       features, beta, y, p.num_hidden);
  if (!p.no_bias) {
    const float* b = in[2].fdata();
    ParallelFor(batch, std::max<int64_t>(1, kElementwiseGrain / p.num_hidden), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < p.num_hidden; ++j) y[r * p.num_hidden + j] += b[j];
    });
  }
}

void BackwardFC(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<FullyConnectedParam>();
  const auto batch_features = FlatDims(a.inputs[0].shape(), p.flatten);
  const auto batch = batch_features.first;
  const auto features = batch_features.second;
  const float* dy = a.out_grads[0].fdata();
  auto beta = [&](size_t i) { return a.req[i] == OpReq::kAdd ? 1.0f : 0.0f; };
  if (a.req[0] != OpReq::kNull)  // d data = dy * W
    Gemm(false, false, batch, features, p.num_hidden, 1.0f, dy, p.num_hidden,
         a.inputs[1].fdata(), features, beta(0), a.in_grads[0].fdata(), features);
  if (a.req[1] != OpReq::kNull)  // d W = dy^T * data
    Gemm(true, false, p.num_hidden, features, batch, 1.0f, dy, p.num_hidden, a.inputs[0].fdata(),
         features, beta(1), a.in_grads[1].fdata(), features);
  if (!p.no_bias && a.req[2] != OpReq::kNull) {
    std::vector<float> db(static_cast<size_t>(p.num_hidden), 0.0f);
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t j = 0; j < p.num_hidden; ++j) db[static_cast<size_t>(j)] += dy[r * p.num_hidden + j];
    AssignWithReq(a.in_grads[2].fdata(), db.data(), p.num_hidden, a.req[2]);
  }
}
}  // namespace

SYMBIND_REGISTER_OP(FullyConnected)
    .describe("Applies a linear transformation: Y = X W^T + b.")
    .set_params<FullyConnectedParam>()
    .set_arguments([](const NodeAttrs& a) {
      return a.param<FullyConnectedParam>().no_bias
                 ? std::vector<std::string>{"data", "weight"}
                 : std::vector<std::string>{"data", "weight", "bias"};
    })
    .add_argument_doc("data", "Input data: (batch, ...), flattened to (batch, input_dim) unless flatten is False.")
    .add_argument_doc("weight", "Weight matrix: (num_hidden, input_dim).")
    .add_argument_doc("bias", "Bias parameter: (num_hidden,); absent when no_bias.")
    .set_infer_shape(InferShapeFC)
    .set_mac_count(OutputWeightRowMacs)
    .set_forward(ForwardFC)
    .set_backward(BackwardFC);

}  // namespace symbind
