// softmax, log_softmax, softmin and SoftmaxActivation.
//
// MXNet facts matched here:
// - softmax/log_softmax compute on x / temperature; the gradient carries the 1 / temperature.
//   softmin is softmax of -x / temperature: softmax at temperature -T, gradient included.
// - `dtype` sets the output type (float16/float32/float64); compute stays float32 here.
// - SoftmaxActivation mode=instance applies softmax over the LAST axis with all leading axes
//   flattened (MXNet's FlatTo2D), which for the usual (N, K) input is "per instance".
//   MXNet's backward for instance mode treats axis 1 as the class axis, which disagrees with
//   its own forward for inputs of rank > 2; the gradient here matches the forward instead.
#include <cmath>

#include <symbind/ops/kernels/softmax.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct SoftmaxParam : Parameter<SoftmaxParam> {
  int axis;
  std::optional<double> temperature;
  std::optional<int> dtype;
  std::optional<bool> use_length;
  static void Declare(ParamDeclarer<SoftmaxParam>& d) {
    d.field("axis", &SoftmaxParam::axis).set_default(-1)
        .describe("The axis along which to compute softmax.");
    d.field("temperature", &SoftmaxParam::temperature).set_default(std::nullopt)
        .require([](const std::optional<double>& t) { return !t || (std::isfinite(*t) && *t != 0); },
                 "a finite, non-zero number (softmax divides by it)")
        .describe("Temperature parameter in softmax");
    d.field("dtype", &SoftmaxParam::dtype)
        .add_enum("float16", static_cast<int>(DType::kFloat16))
        .add_enum("float32", static_cast<int>(DType::kFloat32))
        .add_enum("float64", static_cast<int>(DType::kFloat64))
        .set_default(std::nullopt)
        .describe("DType of the output in case this can't be inferred. Defaults to the same as "
                  "input's dtype if not defined (dtype=None).");
    d.field("use_length", &SoftmaxParam::use_length).set_default(std::optional<bool>(false))
        .describe("Whether to use the length input as a mask over the data input. (Not supported "
                  "by symbind: must be False.)");
  }
};

const SoftmaxParam& SP(const NodeAttrs& a) { return a.param<SoftmaxParam>(); }

// The temperature softmax divides by: negated for softmin.
template <bool kMin>
double Temperature(const SoftmaxParam& p) { return (kMin ? -1.0 : 1.0) * (p.temperature ? *p.temperature : 1.0); }

std::vector<std::string> SoftmaxArguments(const NodeAttrs& a) {
  if (SP(a).use_length.value_or(false))
    throw ParamError(StrCat("Operator ", a.op ? a.op->name : std::string("softmax"), " (node '", a.name,
                            "'): use_length=True (masking by a `length` input) is not supported"));
  return {"data"};
}

void InferSoftmaxShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  SameShape(attrs, in, out);
  if ((*in)[0].ndim_known()) NormalizeAxis(SP(attrs).axis, (*in)[0].ndim(), attrs.op->name.c_str());
}

void InferSoftmaxType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = SP(attrs);
  if (!p.dtype) return InferSameType(attrs, in, out);
  TypeAssignCheck(out, 0, *p.dtype);
  if ((*in)[0] < 0) (*in)[0] = *p.dtype;
}

AxisLayout SoftmaxLayout(const NodeAttrs& attrs, const TShape& s) {
  return LayoutAround(s, NormalizeAxis(SP(attrs).axis, s.ndim(), attrs.op->name.c_str()));
}

// A float32 view of `a`: the array itself, or a converted copy for other dtypes.
NDArray AsFloat(const NDArray& a) { return a.dtype() == DType::kFloat32 ? a : a.AsType(DType::kFloat32); }

template <bool kLog, bool kMin>
void SoftmaxForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const AxisLayout l = SoftmaxLayout(attrs, in[0].shape());
  if (in[0].dtype() == DType::kFloat64 && out[0].dtype() == DType::kFloat64) {
    SoftmaxAlong(in[0].data<double>(), out[0].data<double>(), l, Temperature<kMin>(SP(attrs)), kLog);
    return;
  }
  const NDArray x = AsFloat(in[0]);
  if (out[0].dtype() == DType::kFloat32) {
    SoftmaxAlong(x.fdata(), out[0].fdata(), l, Temperature<kMin>(SP(attrs)), kLog);
    return;
  }
  NDArray tmp(out[0].shape());
  SoftmaxAlong(x.fdata(), tmp.fdata(), l, Temperature<kMin>(SP(attrs)), kLog);
  NDArray dst = out[0];
  tmp.CopyTo(&dst);
}

template <bool kLog, bool kMin>
void SoftmaxBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const AxisLayout l = SoftmaxLayout(attrs, a.inputs[0].shape());
  const NDArray y = AsFloat(a.outputs[0]), dy = AsFloat(a.out_grads[0]);
  SoftmaxAlongBackward(y.fdata(), dy.fdata(), a.in_grads[0].fdata(), l,
                                  Temperature<kMin>(SP(attrs)), kLog, a.req[0]);
}

template <bool kLog, bool kMin = false>
void RegisterSoftmax(const char* name, const char* doc) {
  OpRegistry::Global().Register(name)
      .describe(doc)
      .set_params<SoftmaxParam>()
      .set_arguments(SoftmaxArguments)
      .set_infer_shape(InferSoftmaxShape)
      .set_infer_type(InferSoftmaxType)
      .set_dtype_generic()  // converts other dtypes through float32 (AsFloat)
      .set_forward(SoftmaxForward<kLog, kMin>)
      .set_backward(SoftmaxBackward<kLog, kMin>);
}

SYMBIND_REGISTER_OP_FAMILY(softmax) {
  RegisterSoftmax<false>("softmax",
                         "Applies the softmax function along `axis`: exp(x / T) / sum(exp(x / T)), "
                         "T the temperature (default 1).");
  RegisterSoftmax<true>("log_softmax",
                        "Computes the log softmax along `axis`: x / T - log(sum(exp(x / T))).");
  RegisterSoftmax<false, true>("softmin",
                               "Applies the softmin function along `axis`: exp(-x / T) / sum(exp(-x / T)), "
                               "T the temperature (default 1).");
}

// ---------------------------------------------------------------------------------------------
enum SoftmaxActivationMode { kInstance, kChannel };

struct SoftmaxActivationParam : Parameter<SoftmaxActivationParam> {
  int mode;
  static void Declare(ParamDeclarer<SoftmaxActivationParam>& d) {
    d.field("mode", &SoftmaxActivationParam::mode)
        .add_enum("instance", kInstance).add_enum("channel", kChannel).set_default(kInstance)
        .describe("Specifies how to compute the softmax. If set to ``instance``, it computes softmax "
                  "for each instance. If set to ``channel``, It computes cross channel softmax for "
                  "each position of each instance.");
  }
};

AxisLayout ActivationLayout(const NodeAttrs& attrs, const TShape& s) {
  if (attrs.param<SoftmaxActivationParam>().mode == kChannel) return {s[0], s[1], s.ProdDims(2, s.ndim())};
  return {s.ProdDims(0, s.ndim() - 1), s[s.ndim() - 1], 1};  // MXNet's FlatTo2D
}

void InferSoftmaxActivation(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  SameShape(attrs, in, out);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 1) throw ShapeError("SoftmaxActivation needs data of rank >= 1");
  if (attrs.param<SoftmaxActivationParam>().mode == kChannel && d.ndim() < 3)
    throw ShapeError(StrCat("SoftmaxActivation: input needs at least 3 dimensions when "
                            "mode=channel; got data of shape ", d));
}
}  // namespace

SYMBIND_REGISTER_OP(SoftmaxActivation)
    .describe("Applies softmax activation to input (deprecated in MXNet in favour of softmax). "
              "instance: softmax over the last axis of each row; channel: softmax over axis 1 at "
              "each position.")
    .set_params<SoftmaxActivationParam>()
    .set_infer_shape(InferSoftmaxActivation)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      SoftmaxAlong(in[0].fdata(), out[0].fdata(), ActivationLayout(attrs, in[0].shape()), 1.0, false);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      SoftmaxAlongBackward(a.outputs[0].fdata(), a.out_grads[0].fdata(),
                                      InGradOrNull(a, 0),
                                      ActivationLayout(attrs, a.inputs[0].shape()), 1.0, false, a.req[0]);
    });

}  // namespace symbind
