// MXNet's Nesterov momentum update, and its mixed-precision form stepping the float32 master
// copy weight32. With g = clip(rescale_grad*grad) + wd*weight:
//   mom = momentum*mom
//   weight = weight - mom + (1 + momentum) * (mom - lr*g)
//   mom = mom - lr*g
// mom (and weight32) are updated in place.
#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct NAGMomParam : Parameter<NAGMomParam> {
  float lr, momentum, wd, rescale_grad, clip_gradient;
  static void Declare(ParamDeclarer<NAGMomParam>& d) {
    d.field("lr", &NAGMomParam::lr).describe("Learning rate");
    d.field("momentum", &NAGMomParam::momentum).set_default(0.0f)
        .describe("The decay rate of momentum estimates at each epoch.");
    DeclareWeightDecay(d);
    DeclareRescaleAndClip(d);
  }
};

// Inputs: weight, grad, mom, and with kMixed weight32.
template <bool kMixed>
void NAGMomForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<NAGMomParam>();
  const NDArray weight = kMixed ? in[3] : in[0];
  const NDArray grad = AsFloat32(in[1]);
  float* w = weight.fdata();
  const float* g = grad.fdata();
  float* mom = in[2].fdata();
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    const float step = p.lr * (ClipGradient(p.rescale_grad * g[i], p.clip_gradient) + p.wd * w[i]);
    const float decayed = p.momentum * mom[i];
    const float updated = w[i] - decayed + (1.f + p.momentum) * (decayed - step);
    mom[i] = decayed - step;
    if (kMixed) w[i] = updated;
    return updated;
  });
}

}  // namespace

SYMBIND_REGISTER_OP(nag_mom_update)
    .describe("Update function for Nesterov Accelerated Gradient (NAG) optimizer: with "
              "g = clip(rescale_grad*grad) + wd*weight, mom = momentum*mom; weight = weight - mom "
              "+ (1+momentum)*(mom - lr*g); mom = mom - lr*g. Updates mom in place.")
    .set_params<NAGMomParam>()
    .set_arguments({"weight", "grad", "mom"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mom", "Momentum (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(NAGMomForward<false>);

SYMBIND_REGISTER_OP(mp_nag_mom_update)
    .describe("Update function for multi-precision Nesterov Accelerated Gradient (NAG) optimizer: "
              "nag_mom_update applied to the float32 copy weight32; mom and weight32 are updated "
              "in place.")
    .set_params<NAGMomParam>()
    .set_arguments({"weight", "grad", "mom", "weight32"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mom", "Momentum, float32 (updated in place)")
    .add_argument_doc("weight32", "Weight32: the float32 master copy (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      InferMixedPrecisionType("mp_nag_mom_update", in, out, [](size_t i) { return i >= 2; });
    })
    .set_forward(NAGMomForward<true>);

}  // namespace symbind
