// FullyConnected: out = data * weight^T + bias.

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/nn/fully_connected_param.h>
#include <symbind/ops/op_util.h>
namespace symbind {

namespace {
// y (batch x hidden) = x W^T + b with bfloat16 products (Precision::kBfloat16): W packed once per
// node; one image is one GEMM column, more go through x^T and a transposed result.
void ForwardFCBf16(const OpContext& ctx, const float* x, const NDArray& weight, const float* bias, float* y,
                   int64_t batch, int64_t features, int64_t hidden) {
  const auto packed = DerivedForm<PackedBf16A>(NodeDerivedWeights(ctx, 0, weight), weight.fdata(), {hidden, features},
                                               [&](const float* w) { return PackedBf16A(w, hidden, features, features); });
  GemmEpilogue epilogue;
  epilogue.bias = bias;
  if (batch == 1) return GemmBf16(*packed, 1, x, 1, y, 1, epilogue);
  const ScratchBuffer xt(features * batch), yt(hidden * batch);
  for (int64_t k = 0; k < features; ++k)
    for (int64_t i = 0; i < batch; ++i) xt.data()[k * batch + i] = x[i * features + k];
  GemmBf16(*packed, batch, xt.data(), batch, yt.data(), batch, epilogue);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < hidden; ++j) y[i * hidden + j] = yt.data()[j * batch + i];
}

void ForwardFC(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FullyConnectedParam>();
  const auto batch_features = FlatDims(in[0].shape(), p.flatten);
  const auto batch = batch_features.first;
  const auto features = batch_features.second;
  float* y = out[0].fdata();
  float beta = req[0] == OpReq::kAdd ? 1.0f : 0.0f;
  if (req[0] == OpReq::kNull) return;
  if (ctx.precision == Precision::kBfloat16 && req[0] != OpReq::kAdd && batch > 0 && features > 0)
    return ForwardFCBf16(ctx, in[0].fdata(), in[1], p.no_bias ? nullptr : in[2].fdata(), y, batch, features,
                         p.num_hidden);
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
    .set_create_state(CreateDerivedWeightsState(1))  // the bf16 weights (Precision::kBfloat16)
    .set_backward(BackwardFC);

}  // namespace symbind
