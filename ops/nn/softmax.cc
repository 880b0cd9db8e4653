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
// - softmax's use_length (softmax only): each row's first `length` entries along the axis; past
//   them output and gradient are 0, and `length` gets a zero gradient. MXNet reads lengths
//   outside [0, n] out of bounds; here they are an error.
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
        .describe("Whether to use the length input as a mask over the data input (softmax only).");
  }
};

const SoftmaxParam& SP(const NodeAttrs& a) { return a.param<SoftmaxParam>(); }

// The temperature softmax divides by: negated for softmin.
template <bool kMin>
double Temperature(const SoftmaxParam& p) { return (kMin ? -1.0 : 1.0) * (p.temperature ? *p.temperature : 1.0); }

bool UseLength(const NodeAttrs& a) { return SP(a).use_length.value_or(false); }

// MXNet's softmax takes a second input `length` with use_length; log_softmax and softmin do not.
template <bool kWithLength>
std::vector<std::string> SoftmaxArguments(const NodeAttrs& a) {
  if (!UseLength(a)) return {"data"};
  if (!kWithLength)
    throw ParamError(StrCat("Operator ", a.op ? a.op->name : std::string("softmax"), " (node '", a.name,
                            "'): use_length=True (masking by a `length` input) is only for softmax"));
  return {"data", "length"};
}

// `length` has data's shape without the softmax axis ((1,) for 1-D data), as MXNet's.
void InferSoftmaxShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int axis = NormalizeAxis(SP(attrs).axis, d.ndim(), attrs.op->name.c_str());
  if (!UseLength(attrs)) return;
  std::vector<int64_t> dims;
  for (int i = 0; i < d.ndim(); ++i)
    if (i != axis) dims.push_back(d[i]);
  if (dims.empty()) dims.push_back(1);
  ShapeAssignCheck(in, 1, TShape(dims));
}

// Output and data share a type (or the output takes `dtype`); `length` keeps its own, an
// integer type (checked by the kernel).
void InferSoftmaxType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = SP(attrs);
  if (p.dtype) {
    TypeAssignCheck(out, 0, *p.dtype);
    if ((*in)[0] < 0) (*in)[0] = *p.dtype;
    return;
  }
  TypeAssignCheck(out, 0, (*in)[0]);
  TypeAssignCheck(in, 0, (*out)[0]);
}

// Each row's valid length along the axis (rows in AxisLayout order: outer, then inner), from an
// int32 or int64 `length`, each in [0, n].
std::vector<int64_t> RowLengths(const NodeAttrs& attrs, const NDArray& length, const AxisLayout& l) {
  const DType t = length.dtype();
  if (t != DType::kInt32 && t != DType::kInt64)
    throw TypeError(StrCat("softmax (node '", attrs.name, "'): input 'length' must be int32 or int64, got ",
                           DTypeName(t)));
  const int64_t rows = l.outer * l.inner;
  if (length.Size() != rows)
    throw ShapeError(StrCat("softmax (node '", attrs.name, "'): input 'length' has ", length.Size(),
                            " elements, expected one per row (", rows, ")"));
  std::vector<int64_t> lengths(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t v = t == DType::kInt32 ? length.data<int32_t>()[r] : length.data<int64_t>()[r];
    if (v < 0 || v > l.n)
      throw IndexError(StrCat("softmax (node '", attrs.name, "'): length[", r, "] = ", v, " is outside [0, ", l.n,
                              "], the size of the softmax axis"));
    lengths[static_cast<size_t>(r)] = v;
  }
  return lengths;
}

// Softmax of x / temperature over each row's first lengths[row] entries; 0 past them.
template <typename T>
void MaskedSoftmax(const T* x, T* y, const AxisLayout& l, const std::vector<int64_t>& lengths, double temperature) {
  const T inv_t = static_cast<T>(1.0 / temperature);
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner), len = lengths[static_cast<size_t>(g)];
      for (int64_t k = len; k < l.n; ++k) y[base + k * l.inner] = 0;
      if (len == 0) continue;
      T m = x[base] * inv_t;
      for (int64_t k = 1; k < len; ++k) m = std::max(m, x[base + k * l.inner] * inv_t);
      T sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += y[base + k * l.inner] = std::exp(x[base + k * l.inner] * inv_t - m);
      for (int64_t k = 0; k < len; ++k) y[base + k * l.inner] /= sum;
    }
  });
}

// dx = y * (dy - sum over the row's first len of dy * y) / T there, 0 past them.
template <typename T>
void MaskedSoftmaxBackward(const T* y, const T* dy, T* dx, const AxisLayout& l, const std::vector<int64_t>& lengths,
                           double temperature, OpReq req) {
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner), len = lengths[static_cast<size_t>(g)];
      double s = 0;
      for (int64_t k = 0; k < len; ++k) s += static_cast<double>(dy[base + k * l.inner]) * y[base + k * l.inner];
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        const T v = k < len ? static_cast<T>(y[at] * (dy[at] - s) / temperature) : T(0);
        dx[at] = req == OpReq::kAdd ? static_cast<T>(dx[at] + v) : v;
      }
    }
  });
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
  if (UseLength(attrs)) {
    const std::vector<int64_t> lengths = RowLengths(attrs, in[1], l);
    const double t = Temperature<kMin>(SP(attrs));
    if (in[0].dtype() == DType::kFloat64 && out[0].dtype() == DType::kFloat64)
      return MaskedSoftmax(in[0].data<double>(), out[0].data<double>(), l, lengths, t);
    const NDArray x = AsFloat(in[0]);
    NDArray y = out[0].dtype() == DType::kFloat32 ? out[0] : NDArray(out[0].shape());
    MaskedSoftmax(x.fdata(), y.fdata(), l, lengths, t);
    if (!y.SharesStorageWith(out[0])) {
      NDArray dst = out[0];
      y.CopyTo(&dst);
    }
    return;
  }
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
  if (UseLength(attrs)) ZeroWithReq(a.in_grads[1], a.req[1]);  // lengths are not differentiable
  if (a.req[0] == OpReq::kNull) return;
  const AxisLayout l = SoftmaxLayout(attrs, a.inputs[0].shape());
  if (UseLength(attrs)) {
    const std::vector<int64_t> lengths = RowLengths(attrs, a.inputs[1], l);
    const double t = Temperature<kMin>(SP(attrs));
    if (a.outputs[0].dtype() == DType::kFloat64 && a.out_grads[0].dtype() == DType::kFloat64 &&
        a.in_grads[0].dtype() == DType::kFloat64)
      return MaskedSoftmaxBackward(a.outputs[0].data<double>(), a.out_grads[0].data<double>(),
                                   a.in_grads[0].data<double>(), l, lengths, t, a.req[0]);
    const NDArray y = AsFloat(a.outputs[0]), dy = AsFloat(a.out_grads[0]);
    return MaskedSoftmaxBackward(y.fdata(), dy.fdata(), a.in_grads[0].fdata(), l, lengths, t, a.req[0]);
  }
  const NDArray y = AsFloat(a.outputs[0]), dy = AsFloat(a.out_grads[0]);
  SoftmaxAlongBackward(y.fdata(), dy.fdata(), a.in_grads[0].fdata(), l,
                                  Temperature<kMin>(SP(attrs)), kLog, a.req[0]);
}

template <bool kLog, bool kMin = false>
Op& RegisterSoftmax(const char* name, const char* doc) {
  return OpRegistry::Global().Register(name)
      .describe(doc)
      .set_params<SoftmaxParam>()
      .set_arguments(SoftmaxArguments<!kLog && !kMin>)
      .set_any_dtype_inputs({"length"})
      .set_infer_shape(InferSoftmaxShape)
      .set_infer_type(InferSoftmaxType)
      .set_dtype_generic()  // converts other dtypes through float32 (AsFloat)
      .set_forward(SoftmaxForward<kLog, kMin>)
      .set_backward(SoftmaxBackward<kLog, kMin>);
}

SYMBIND_REGISTER_OP_FAMILY(softmax) {
  RegisterSoftmax<false>("softmax",
                         "Applies the softmax function along `axis`: exp(x / T) / sum(exp(x / T)), "
                         "T the temperature (default 1). With use_length, a second input `length` "
                         "(int32 or int64, data's shape without `axis`) limits each softmax to the "
                         "first `length` entries along `axis`; the others are 0.");
  RegisterSoftmax<true>("log_softmax",
                        "Computes the log softmax along `axis`: x / T - log(sum(exp(x / T))).");
  RegisterSoftmax<false, true>("softmin",
                               "Applies the softmin function along `axis`: exp(-x / T) / sum(exp(-x / T)), "
                               "T the temperature (default 1).")
      .set_monitor_numbered_inputs();  // MXNet names softmax's inputs, not softmin's
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
    .set_monitor_numbered_inputs()
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
