// _contrib_quantized_concat: Concat of int8 or uint8 tensors with their ranges (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>
#include <symbind/ops/tensor/concat_param.h>

namespace symbind {
namespace quant {
namespace {

std::vector<std::string> Arguments(const NodeAttrs& attrs) {
  const int n = attrs.param<ConcatParam>().num_args;
  std::vector<std::string> names = NumberedNames("arg", n);
  for (int i = 0; i < n; ++i) {
    names.push_back(StrCat("arg", i, "_min"));
    names.push_back(StrCat("arg", i, "_max"));
  }
  return names;
}

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  InferWithFloatShapes(InferShapeConcat, attrs, static_cast<size_t>(attrs.param<ConcatParam>().num_args), in, out);
}

// int8 when any input is int8, else uint8 (MXNet's rule).
void InferType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const size_t n = static_cast<size_t>(attrs.param<ConcatParam>().num_args);
  bool all_known = true, any_int8 = false;
  for (size_t i = 0; i < n; ++i) {
    CheckQuantizedType((*in)[i], StrCat("input 'arg", i, "'"));
    all_known &= (*in)[i] >= 0;
    any_int8 |= (*in)[i] == static_cast<int>(DType::kInt8);
  }
  if (any_int8 || all_known) TypeAssignCheck(out, 0, static_cast<int>(any_int8 ? DType::kInt8 : DType::kUint8));
  InferRangeTypes(in, n, out);
}

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const size_t n = static_cast<size_t>(attrs.param<ConcatParam>().num_args);
  // The output's range spans every input's and zero.
  float lo = 0.0f, hi = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, RangeValue(in[n + 2 * i]));
    hi = std::max(hi, RangeValue(in[n + 2 * i + 1]));
  }
  const DType type = out[0].dtype();
  const float out_scale = QuantizeScale(type, lo, hi);
  const int axis = NormalizeAxis(attrs.param<ConcatParam>().dim, out[0].shape().ndim(), "quantized concat");
  const AxisLayout whole = LayoutAround(out[0].shape(), axis);
  const int64_t row = whole.n * whole.inner;
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t width = in[i].shape()[axis] * whole.inner;
    // Each input rescaled to the output's levels (the same levels when the scales agree).
    const float ratio = out_scale / QuantizeScale(in[i].dtype(), RangeValue(in[n + 2 * i]), RangeValue(in[n + 2 * i + 1]));
    WithQuantizedType(type, [&](auto out_zero) {
      using TO = decltype(out_zero);
      TO* y = out[0].data<TO>();
      WithQuantizedType(in[i].dtype(), [&](auto in_zero) {
        using TI = decltype(in_zero);
        const TI* x = in[i].data<TI>();
        // Row by row (one per outer index): ScaleRound splits each row across threads. An input
        // the executor planned in its place (Op::join_axis) is rescaled there, or left as it is
        // when its scale is the output's (MXNet's aligned scales make that the rule).
        for (int64_t o = 0; o < whole.outer; ++o) {
          TO* dst = y + o * row + offset;
          const TI* src = x + o * width;
          const bool placed = static_cast<const void*>(src) == static_cast<const void*>(dst);
          if (std::is_same_v<TI, TO> && ratio == 1.0f) {
            if (!placed) std::memcpy(dst, src, static_cast<size_t>(width));
          } else {
            ScaleRound(src, width, ratio, dst);  // element by element: in place too
          }
        }
      });
    });
    offset += width;
  }
  SetRange(out[1], out[2], lo, hi);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_concat)
    .describe(R"(Concat of quantized tensors: the output's range spans the inputs' ranges and zero,
its type is int8 when any input is int8 (else uint8), and each input is rescaled to the output's
levels (rounded half to even) unless its scale is already the output's. Inputs: the num_args
tensors, then each one's min and max. The parameters are Concat's.)")
    .set_params<ConcatParam>()
    .set_arguments(quant::Arguments)
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape(quant::InferShape)
    .set_infer_type(quant::InferType)
    .set_dtype_generic()
    .set_join_axis([](const NodeAttrs& attrs, int ndim) {
      return NormalizeAxis(attrs.param<ConcatParam>().dim, ndim, "quantized concat");
    })
    .set_join_rewrites_inputs()
    .set_forward(quant::Forward);

}  // namespace symbind
