// _contrib_quantized_pooling: max or average pooling of int8 or uint8 data (docs/quantization.md).
#include <symbind/ops/nn/pooling_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {
using conv::PoolingParam;

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  // Pooling's own kernels on the levels as floats: a max is exact, an average is the exact
  // window sum divided in float, then rounded half to even as MXNet's integer pooling rounds.
  static const Op& pooling = OpRegistry::Global().Get("Pooling");
  const NDArray levels = in[0].AsType(DType::kFloat32);
  NDArray pooled(out[0].shape());
  pooling.forward(ctx, attrs, {levels}, {OpReq::kWrite}, {pooled});
  const float* v = pooled.fdata();
  WithQuantizedType(out[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* q = out[0].data<T>();
    ParallelFor(out[0].Size(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) q[i] = SaturateRound<T>(v[i]);
    });
  });
  SetRange(out[1], out[2], RangeValue(in[1]), RangeValue(in[2]));
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_pooling)
    .describe(R"(Pooling (max or avg) on quantized data: the output has the data's type and range.
An average is rounded half to even. The parameters are Pooling's.)")
    .set_params<conv::PoolingParam>()
    .set_arguments({"data", "min_data", "max_data"})
    .add_argument_doc("data", "Quantized input data (int8 or uint8): (batch, channel, [depth,] height, width).")
    .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const int type = attrs.param<conv::PoolingParam>().pool_type;
      if (type != conv::kMax && type != conv::kAvg)
        throw ShapeError("quantized pooling supports pool_type 'max' and 'avg' only");
      quant::InferWithFloatShapes(conv::InferShapePool, attrs, 1, in, out);
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      if ((*in)[0] >= 0) TypeAssignCheck(out, 0, (*in)[0]);
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
