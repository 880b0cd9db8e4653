// Cast: converts every element to another dtype (the gradient is cast back). amp_cast and
// amp_multicast, MXNet's mixed-precision casts, convert only float32/float16/bfloat16 inputs and
// pass the other dtypes through.
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct CastParam : Parameter<CastParam> {
  int dtype;
  static void Declare(ParamDeclarer<CastParam>& d) {
    AddDTypeEnums(d.field("dtype", &CastParam::dtype), true)
        .describe("Output data type.");
  }
};

struct AMPCastParam : Parameter<AMPCastParam> {
  int dtype;
  static void Declare(ParamDeclarer<AMPCastParam>& d) {
    AddDTypeEnums(d.field("dtype", &AMPCastParam::dtype), false).describe("Output data type.");
  }
};

struct AMPMultiCastParam : Parameter<AMPMultiCastParam> {
  int num_outputs;
  bool cast_narrow;
  static void Declare(ParamDeclarer<AMPMultiCastParam>& d) {
    d.field("num_outputs", &AMPMultiCastParam::num_outputs).lower_bound(1)
        .describe("Number of input/output pairs to be casted to the widest type.");
    d.field("cast_narrow", &AMPMultiCastParam::cast_narrow).set_default(false)
        .describe("Whether to cast to the narrowest type");
  }
};

// The dtypes AMP casts between; others pass through unchanged.
bool IsAMPFloat(int t) {
  return t == static_cast<int>(DType::kFloat32) || t == static_cast<int>(DType::kFloat16) ||
         t == static_cast<int>(DType::kBFloat16);
}

// dst (per req) = src converted to dst's dtype. Adding goes through double.
void ConvertWithReq(const NDArray& dst, const NDArray& src, OpReq req) {
  if (req == OpReq::kNull) return;
  size_t n = static_cast<size_t>(src.Size());
  if (req != OpReq::kAdd) {
    ConvertElements(src.raw_data(), src.dtype(), dst.raw_data(), dst.dtype(), n);
    return;
  }
  std::vector<double> a(n), b(n);
  ConvertElements(src.raw_data(), src.dtype(), a.data(), DType::kFloat64, n);
  ConvertElements(dst.raw_data(), dst.dtype(), b.data(), DType::kFloat64, n);
  for (size_t i = 0; i < n; ++i) b[i] += a[i];
  ConvertElements(b.data(), DType::kFloat64, dst.raw_data(), dst.dtype(), n);
}

}  // namespace

namespace {
// Cast and amp_cast: the output is the input converted to the output's dtype, and the gradient
// is cast back to the input's type.
void ForwardConvert(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  ConvertWithReq(out[0], in[0], req[0]);
}
void BackwardConvert(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  ConvertWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
}
}  // namespace

SYMBIND_REGISTER_OP(Cast)
    .set_monitor_numbered_inputs()
    .add_alias("cast")
    .describe("Casts all elements of the input to a new type.")
    .set_params<CastParam>()
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, attrs.param<CastParam>().dtype);
      (void)in;  // any input type
    })
    .set_forward(ForwardConvert)
    .set_backward(BackwardConvert);

SYMBIND_REGISTER_OP(amp_cast)
    .set_monitor_numbered_inputs()
    .describe("Cast function between low precision float/FP32 used by AMP. It casts only between low "
              "precision float/FP32 and does not do anything for other types.")
    .set_params<AMPCastParam>()
    .add_argument_doc("data", "The input.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      const int t = (*in)[0];
      if (t < 0) return;
      TypeAssignCheck(out, 0, IsAMPFloat(t) ? attrs.param<AMPCastParam>().dtype : t);
    })
    .set_forward(ForwardConvert)
    .set_backward(BackwardConvert);

// Casts the AMP-float inputs to the widest of their dtypes (float32 if any is), or with
// cast_narrow to the narrowest (float16 or bfloat16 if any is).
SYMBIND_REGISTER_OP(amp_multicast)
    .describe("Cast function used by AMP, that casts its inputs to the common widest type. It casts only "
              "between low precision float/FP32 and does not do anything for other types.")
    .set_params<AMPMultiCastParam>()
    .set_key_var_num_args("num_outputs")
    .set_arguments([](const NodeAttrs& a) { return NumberedNames("data_", a.param<AMPMultiCastParam>().num_outputs); })
    .set_numbered_outputs("output", [](const NodeAttrs& a) { return a.param<AMPMultiCastParam>().num_outputs; })
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      for (size_t i = 0; i < in->size(); ++i) {
        ShapeAssignCheck(out, i, (*in)[i]);
        ShapeAssignCheck(in, i, (*out)[i]);
      }
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      const bool narrow = attrs.param<AMPMultiCastParam>().cast_narrow;
      for (int t : *in)
        if (t < 0) return;
      int target = narrow ? static_cast<int>(DType::kFloat32) : (*in)[0];
      for (size_t i = 0; i < in->size(); ++i) {
        const int t = (*in)[i];
        if (!narrow && t == static_cast<int>(DType::kFloat32)) target = t;
        else if (narrow && (t == static_cast<int>(DType::kFloat16) || t == static_cast<int>(DType::kBFloat16)))
          target = t;
      }
      for (size_t i = 0; i < in->size(); ++i) TypeAssignCheck(out, i, IsAMPFloat((*in)[i]) ? target : (*in)[i]);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      for (size_t i = 0; i < in.size(); ++i) ConvertWithReq(out[i], in[i], req[i]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      for (size_t i = 0; i < a.in_grads.size(); ++i) ConvertWithReq(a.in_grads[i], a.out_grads[i], a.req[i]);
    });

}  // namespace symbind
