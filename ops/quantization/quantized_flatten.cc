// _contrib_quantized_flatten: Flatten of int8 or uint8 data (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(_contrib_quantized_flatten)
    .describe("Flattens quantized data to 2-D, (d0, d1*d2*...); type and range pass through.")
    .set_arguments({"data", "min_data", "max_data"})
    .add_argument_doc("data", "Quantized input data (int8 or uint8) of rank >= 1.")
    .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (d.ndim_known()) {
        if (d.ndim() < 1) throw ShapeError("quantized flatten needs data of rank >= 1");
        bool known = true;
        for (int i = 1; i < d.ndim(); ++i) known &= d[i] >= 0;
        ShapeAssignCheck(out, 0, TShape({d[0], known ? d.ProdDims(1, d.ndim()) : -1}));
      }
      quant::InferRangeShapes(in, 1, out);
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      if ((*in)[0] >= 0) TypeAssignCheck(out, 0, (*in)[0]);
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<OpReq>&,
                    const std::vector<NDArray>& out) {
      std::memcpy(out[0].raw_data(), in[0].raw_data(), in[0].bytes());
      quant::SetRange(out[1], out[2], quant::RangeValue(in[1]), quant::RangeValue(in[2]));
    });

}  // namespace symbind
