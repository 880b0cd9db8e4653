// shape_array and size_array (MXNet 1.9.1's elemwise_unary_op_basic): the input's shape as a
// 1-D int64 array, and its element count as an int64 array of shape (1,). The input may be of
// any dtype. Not differentiable (MXNet: zero gradient).
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

constexpr int kInt64 = static_cast<int>(DType::kInt64);

void InferTypeInt64(const NodeAttrs&, std::vector<int>*, std::vector<int>* out) {
  TypeAssignCheck(out, 0, kInt64);
}
}  // namespace

SYMBIND_REGISTER_OP(shape_array)
    .set_monitor_numbered_inputs()
    .add_alias("_npx_shape_array")
    .describe("Returns a 1-D int64 array containing the shape of the data.")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      if ((*in)[0].ndim_known()) ShapeAssignCheck(out, 0, TShape({(*in)[0].ndim()}));
    })
    .set_infer_type(InferTypeInt64)
    .set_dtype_generic()  // reads only the shape
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      std::vector<double> dims(in[0].shape().dims().begin(), in[0].shape().dims().end());
      WriteValuesWithReq(dims, out[0], req[0]);
    })
    .set_zero_gradient();

SYMBIND_REGISTER_OP(size_array)
    .set_monitor_numbered_inputs()
    .describe("Returns a 1-D int64 array of shape (1,) containing the size of the data.")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, TShape({1}));
    })
    .set_infer_type(InferTypeInt64)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      WriteValuesWithReq({static_cast<double>(in[0].Size())}, out[0], req[0]);
    })
    .set_zero_gradient();

}  // namespace symbind
