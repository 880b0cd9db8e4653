// Embedding and take: rows gathered by index along an axis (indices of any dtype).
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/embedding_param.h>

namespace symbind {

namespace {

// out viewed as (outer, K, inner) = a viewed as (outer, n, inner) at rows idx[0..K).
void TakeRows(const float* a, const std::vector<int64_t>& idx, const AxisLayout& s, float* out,
              OpReq req) {
  int64_t K = static_cast<int64_t>(idx.size());
  if (req == OpReq::kNull) return;
  ParallelFor(s.outer * K, std::max<int64_t>(1, kElementwiseGrain / (s.inner + 1)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / K, k = t % K;
      const float* src = a + (o * s.n + idx[static_cast<size_t>(k)]) * s.inner;
      float* dst = out + t * s.inner;
      if (req == OpReq::kAdd)
        for (int64_t j = 0; j < s.inner; ++j) dst[j] += src[j];
      else
        std::copy(src, src + s.inner, dst);
    }
  });
}

// The gradient of TakeRows: ga[o, idx[k], :] += g[o, k, :], written or added per req.
// Parallel over (outer, column block); each task walks the indices in order (deterministic).
void TakeRowsGrad(const float* g, const std::vector<int64_t>& idx, const AxisLayout& s,
                  const NDArray& ga, OpReq req) {
  if (req == OpReq::kNull) return;
  ZeroWithReq(ga, req);
  float* dst = ga.fdata();
  int64_t K = static_cast<int64_t>(idx.size());
  constexpr int64_t kBlock = 256;
  int64_t blocks = (s.inner + kBlock - 1) / kBlock;
  ParallelFor(s.outer * blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / blocks, j0 = (t % blocks) * kBlock, j1 = std::min(s.inner, j0 + kBlock);
      for (int64_t k = 0; k < K; ++k) {
        const float* src = g + (o * K + k) * s.inner;
        float* row = dst + (o * s.n + idx[static_cast<size_t>(k)]) * s.inner;
        for (int64_t j = j0; j < j1; ++j) row[j] += src[j];
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Embedding (its parameters and shapes: embedding_param.h)
void InferTypeEmbedding(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  // data may be any type; weight and output share the weight type (dtype unless given).
  int t = (*in)[1] >= 0 ? (*in)[1] : ((*out)[0] >= 0 ? (*out)[0] : attrs.param<EmbeddingParam>().dtype);
  TypeAssignCheck(in, 1, t);
  TypeAssignCheck(out, 0, t);
}

// ---------------------------------------------------------------------------------------------
// take
struct TakeParam : Parameter<TakeParam> {
  int axis;
  int mode;
  static void Declare(ParamDeclarer<TakeParam>& d) {
    d.field("axis", &TakeParam::axis).set_default(0)
        .describe("The axis of input array to be taken.For input tensor of rank r, it could be in "
                  "the range of [-r, r-1]");
    d.field("mode", &TakeParam::mode)
        .add_enum("raise", kRaise).add_enum("wrap", kWrap).add_enum("clip", kClip)
        .set_default(kClip)
        .describe("Specify how out-of-bound indices bahave. Default is \"clip\". \"clip\" means "
                  "clip to the range. So, if all indices mentioned are too large, they are "
                  "replaced by the index that addresses the last element along an axis. \"wrap\" "
                  "means to wrap around. \"raise\" means to raise an error when index out of "
                  "range.");
  }
};

void InferShapeTake(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& a = (*in)[0];
  const TShape& idx = (*in)[1];
  if (!a.ndim_known() || !idx.ndim_known()) return;
  if (a.ndim() == 0) throw ShapeError("take: the input array must have at least one dimension");
  int axis = NormalizeAxis(attrs.param<TakeParam>().axis, a.ndim(), "take");
  std::vector<int64_t> o(a.dims().begin(), a.dims().begin() + axis);
  o.insert(o.end(), idx.dims().begin(), idx.dims().end());
  o.insert(o.end(), a.dims().begin() + axis + 1, a.dims().end());
  ShapeAssignCheck(out, 0, TShape(o));
}

}  // namespace

SYMBIND_REGISTER_OP(Embedding)
    .add_alias("_contrib_SparseEmbedding")  // MXNet's deprecated row_sparse-gradient Embedding
    .describe("Maps integer indices to vector representations (embeddings): row data[i] of "
              "weight, indices clipped to [0, input_dim - 1].")
    .set_params<EmbeddingParam>()
    .set_arguments({"data", "weight"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      InferEmbeddingShapes(attrs.param<EmbeddingParam>(), in, out);
    })
    .set_infer_type(InferTypeEmbedding)
    // Indices of any type; a weight of another float type than float32 runs through float32
    // copies (executor/kernel_call.h).
    .set_any_dtype_inputs({"data"})
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<EmbeddingParam>();
      std::vector<int64_t> idx = ResolveIndices(in[0], p.input_dim, kClip, "Embedding");
      AxisLayout s{1, p.input_dim, p.output_dim};
      TakeRows(in[1].fdata(), idx, s, out[0].fdata(), req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<EmbeddingParam>();
      // MXNet computes no gradient for the indices; symbind writes zeros if one is asked for.
      ZeroWithReq(a.in_grads[0], a.req[0]);
      std::vector<int64_t> idx = ResolveIndices(a.inputs[0], p.input_dim, kClip, "Embedding");
      AxisLayout s{1, p.input_dim, p.output_dim};
      TakeRowsGrad(a.out_grads[0].fdata(), idx, s, a.in_grads[1], a.req[1]);
    });

namespace {
// MXNet's take reports an index out of bounds (mode 'raise') as a plain error (MXNetError in
// its Python), where gather_nd and unravel_index raise IndexError.
std::vector<int64_t> TakeIndices(const NDArray& idx, int64_t n, int mode) {
  try {
    return ResolveIndices(idx, n, mode, "take");
  } catch (const IndexError& e) {
    throw Error(e.what());
  }
}
}  // namespace

SYMBIND_REGISTER_OP(take)
    .describe("Takes elements from an input array along an axis, at the given indices.")
    .set_params<TakeParam>()
    .set_arguments({"a", "indices"})
    .set_infer_shape(InferShapeTake)
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"indices"})
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<TakeParam>();
      int axis = NormalizeAxis(p.axis, in[0].shape().ndim(), "take");
      AxisLayout s = LayoutAround(in[0].shape(), axis);
      if (s.n == 0 && in[1].Size() > 0)
        throw Error("take: cannot take indices from an empty axis");
      TakeRows(in[0].fdata(), TakeIndices(in[1], s.n, p.mode), s, out[0].fdata(), req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<TakeParam>();
      int axis = NormalizeAxis(p.axis, a.inputs[0].shape().ndim(), "take");
      AxisLayout s = LayoutAround(a.inputs[0].shape(), axis);
      ZeroWithReq(a.in_grads[1], a.req[1]);  // indices get a zero gradient
      TakeRowsGrad(a.out_grads[0].fdata(), TakeIndices(a.inputs[1], s.n, p.mode), s,
                   a.in_grads[0], a.req[0]);
    });

}  // namespace symbind
