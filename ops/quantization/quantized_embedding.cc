// _contrib_quantized_embedding: Embedding over int8 weights (docs/quantization.md). The rows are
// gathered as they are, so the output keeps the weight's levels and range.
#include <cstring>

#include <symbind/ops/quantization/quantization_util.h>
#include <symbind/ops/tensor/embedding_param.h>

namespace symbind {

SYMBIND_REGISTER_OP(_contrib_quantized_embedding)
    .describe("Maps integer indices to int8 vector representations (embeddings): row data[i] of the int8 "
              "weight, indices clipped to [0, input_dim - 1]; the output's range is the weight's. The "
              "parameters are Embedding's.")
    .set_params<EmbeddingParam>()
    .set_arguments({"data", "weight", "min_weight", "max_weight"})
    .add_argument_doc("data", "The indices, of any type and shape.")
    .add_argument_doc("weight", "The int8 embedding matrix, (input_dim, output_dim).")
    .add_argument_doc("min_weight", "Minimum of the weight's range: float32, shape (1,).")
    .add_argument_doc("max_weight", "Maximum of the weight's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      InferEmbeddingShapes(attrs.param<EmbeddingParam>(), in, out);
      quant::InferRangeShapes(in, 2, out);
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(in, 1, static_cast<int>(DType::kInt8));
      TypeAssignCheck(out, 0, static_cast<int>(DType::kInt8));
      quant::InferRangeTypes(in, 2, out);
    })
    .set_any_dtype_inputs({"data"})
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
                    const std::vector<NDArray>& out) {
      const auto& p = attrs.param<EmbeddingParam>();
      const std::vector<int64_t> rows = ResolveIndices(in[0], p.input_dim, kClip, "quantized_embedding");
      const int8_t* weight = in[1].data<int8_t>();
      int8_t* dst = out[0].data<int8_t>();
      const size_t row_bytes = static_cast<size_t>(p.output_dim);
      ParallelFor(static_cast<int64_t>(rows.size()), GrainFor(p.output_dim), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          std::memcpy(dst + i * p.output_dim, weight + rows[static_cast<size_t>(i)] * p.output_dim, row_bytes);
      });
      quant::SetRange(out[1], out[2], quant::RangeValue(in[2]), quant::RangeValue(in[3]));
    });

}  // namespace symbind
