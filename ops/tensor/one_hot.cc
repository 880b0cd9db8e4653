// one_hot (MXNet 1.9.1's indexing_op): out[..., j] = on_value where j == index, off_value
// elsewhere; indices outside [0, depth) give a row of off_value. Indices may be of any dtype
// (truncated to integers); the output takes `dtype`. Not differentiable: the indices get a
// zero gradient, as MXNet's MakeZeroGradNodes.
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct OneHotParam : Parameter<OneHotParam> {
  int64_t depth;
  double on_value;
  double off_value;
  int dtype;
  static void Declare(ParamDeclarer<OneHotParam>& d) {
    d.field("depth", &OneHotParam::depth).lower_bound(0)
        .describe("Depth of the one hot dimension.");
    d.field("on_value", &OneHotParam::on_value).set_default(1.0)
        .describe("The value assigned to the locations represented by indices.");
    d.field("off_value", &OneHotParam::off_value).set_default(0.0)
        .describe("The value assigned to the locations not represented by indices.");
    AddDTypeEnums(d.field("dtype", &OneHotParam::dtype), false)
        .set_default(static_cast<int>(DType::kFloat32))
        .describe("DType of the output");
  }
};
}  // namespace

SYMBIND_REGISTER_OP(one_hot)
    .add_alias("_npx_one_hot")
    .describe("Returns a one-hot array: the indices' shape plus a last axis of `depth`, "
              "on_value at each index and off_value elsewhere.")
    .set_params<OneHotParam>()
    .set_arguments({"indices"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& idx = (*in)[0];
      if (!idx.ndim_known()) return;
      std::vector<int64_t> o = idx.dims();
      o.push_back(attrs.param<OneHotParam>().depth);
      ShapeAssignCheck(out, 0, TShape(o));
    })
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>*, std::vector<int>* out) {
      TypeAssignCheck(out, 0, attrs.param<OneHotParam>().dtype);
    })
    .set_dtype_generic()  // indices of any type in, `dtype` out
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<OneHotParam>();
      std::vector<double> idx = ValuesAsDouble(in[0]);
      std::vector<double> v(static_cast<size_t>(out[0].Size()), p.off_value);
      for (size_t i = 0; i < idx.size(); ++i) {
        int64_t j = TruncateIndex(idx[i]);
        if (j >= 0 && j < p.depth) v[i * static_cast<size_t>(p.depth) + static_cast<size_t>(j)] = p.on_value;
      }
      WriteValuesWithReq(v, out[0], req[0]);
    })
    .set_zero_gradient();

}  // namespace symbind
