// Cast: converts every element to another dtype (the gradient is cast back).
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

SYMBIND_REGISTER_OP(Cast)
    .add_alias("cast")
    .describe("Casts all elements of the input to a new type.")
    .set_params<CastParam>()
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, attrs.param<CastParam>().dtype);
      (void)in;  // any input type
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      ConvertWithReq(out[0], in[0], req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      // The gradient is cast back to the input's type.
      ConvertWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
    });

}  // namespace symbind
