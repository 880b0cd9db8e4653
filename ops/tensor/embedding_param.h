// Embedding's parameters and shapes, shared by Embedding (take.cc) and
// _contrib_quantized_embedding (ops/quantization/quantized_embedding.cc).
#pragma once
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

struct EmbeddingParam : Parameter<EmbeddingParam> {
  int64_t input_dim;
  int64_t output_dim;
  int dtype;
  bool sparse_grad;
  bool deterministic;
  static void Declare(ParamDeclarer<EmbeddingParam>& d) {
    d.field("input_dim", &EmbeddingParam::input_dim).lower_bound(1)
        .describe("Vocabulary size of the input indices.");
    d.field("output_dim", &EmbeddingParam::output_dim).lower_bound(1)
        .describe("Dimension of the embedding vectors.");
    AddDTypeEnums(d.field("dtype", &EmbeddingParam::dtype), false)
        .set_default(static_cast<int>(DType::kFloat32))
        .describe("Data type of weight.");
    d.field("sparse_grad", &EmbeddingParam::sparse_grad).set_default(false)
        .describe("Compute row sparse gradient in the backward calculation. If set to True, the "
                  "grad's storage type is row_sparse. (Accepted; symbind computes a dense "
                  "gradient.)");
    d.field("deterministic", &EmbeddingParam::deterministic).set_default(false)
        .describe("contrib.SparseEmbedding's switch for a deterministic gradient. (Accepted; "
                  "symbind's gradient is always deterministic.)");
  }
};

// Inputs 0 (indices, any shape) and 1 (the weight, input_dim x output_dim), output 0 (the
// indices' shape plus output_dim).
inline void InferEmbeddingShapes(const EmbeddingParam& p, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(in, 1, TShape({p.input_dim, p.output_dim}));
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  std::vector<int64_t> o = d.dims();
  o.push_back(p.output_dim);
  ShapeAssignCheck(out, 0, TShape(o));
}

}  // namespace symbind
