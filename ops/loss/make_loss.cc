// MakeLoss and make_loss: custom-loss heads (identity forward, constant gradient).
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

enum MakeLossNorm { kNull, kBatch, kValid };

struct MakeLossParam : Parameter<MakeLossParam> {
  float grad_scale;
  float valid_thresh;
  int normalization;
  static void Declare(ParamDeclarer<MakeLossParam>& d) {
    d.field("grad_scale", &MakeLossParam::grad_scale).set_default(1.0f)
        .describe("Gradient scale as a supplement to unary and binary operators");
    d.field("valid_thresh", &MakeLossParam::valid_thresh).set_default(0.0f)
        .describe("clip each element in the array to 0 when it is less than ``valid_thresh``. "
                  "This is used when ``normalization`` is set to ``'valid'``.");
    d.field("normalization", &MakeLossParam::normalization)
        .add_enum("null", kNull).add_enum("batch", kBatch).add_enum("valid", kValid)
        .set_default(kNull)
        .describe("If this is set to null, the output gradient will not be normalized. If this is "
                  "set to batch, the output gradient will be divided by the batch size. If this is "
                  "set to valid, the output gradient will be divided by the number of valid input "
                  "elements.");
  }
};

// The identity in the input's own dtype, so that float64 losses (MXNet's check_numeric_gradient
// wraps every symbol in make_loss) keep their precision.
void ForwardCopyInDType(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                        const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  ComputeInDType(attrs.op->name.c_str(), in, req, out, [](auto tag, const auto& ins, const auto& reqs, const auto& outs) {
    using T = decltype(tag);
    const T* x = ins[0].template data<T>();
    MapWithReq(outs[0].template data<T>(), outs[0].Size(), reqs[0], [&](int64_t i) { return x[i]; });
  });
}

void FillGrad(const BackwardArgs& a, float value) {
  MapWithReq(InGradOrNull(a, 0), a.in_grads[0].Size(), a.req[0], [&](int64_t) { return value; });
}

}  // namespace

SYMBIND_REGISTER_OP(MakeLoss)
    .describe("Make your own loss function in network construction: the output is the input, and "
              "the gradient is grad_scale (normalised by batch or by the count of elements above "
              "valid_thresh).")
    .set_params<MakeLossParam>()
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      if ((*in)[0].ndim_known()) ShapeAssignCheck(out, 0, (*in)[0]);
    })
    .set_is_loss()
    .set_dtype_generic()
    .set_forward(ForwardCopyInDType)
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<MakeLossParam>();
      if (a.req[0] == OpReq::kNull) return;
      float scale = p.grad_scale;
      if (p.normalization == kBatch) {
        scale /= static_cast<float>(a.inputs[0].shape()[0]);
      } else if (p.normalization == kValid) {
        const float* x = a.inputs[0].fdata();
        int64_t valid = 0;
        for (int64_t i = 0; i < a.inputs[0].Size(); ++i) valid += x[i] > p.valid_thresh;
        scale /= static_cast<float>(std::max<int64_t>(valid, 1));
      }
      FillGrad(a, scale);
    });

// The gradient is ones whatever the head gradient (MXNet's ones_like FGradient).
SYMBIND_REGISTER_OP(make_loss)
    .set_monitor_numbered_inputs()
    .describe("Make your own loss function in network construction: identity forward, a gradient "
              "of ones.")
    .set_outputs({"loss"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[0]);
      ShapeAssignCheck(in, 0, (*out)[0]);
    })
    .set_is_loss()
    .set_dtype_generic()
    .set_forward(ForwardCopyInDType)
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      if (a.req[0] != OpReq::kNull) FillGrad(a, 1.0f);
    });

}  // namespace symbind
