// The layout, shape inference and kernels of MXNet's interleaved multi-head attention ops
// (_contrib_interleaved_matmul_{selfatt,encdec}_{qk,valatt}). A projection is
// (seq_length, batch_size, heads * parts * head_dim): per head, `parts` slices of head_dim side
// by side (q, k, v for self-attention; k, v for encoder-decoder keys_values; one for queries and
// for the weighted values). Head h of batch item b is matrix i = b * heads + h of a batch, a
// seq_length x head_dim matrix whose rows lie one sequence step apart. Attention maps are
// (batch_size * heads, query length, key length): matrix i belongs to the same head.
#pragma once
#include <cmath>
#include <initializer_list>
#include <string>

#include <symbind/ops/kernels/gemm_batched.h>
#include <symbind/ops/op_util.h>

namespace symbind::attention {

struct InterleavedParam : Parameter<InterleavedParam> {
  int heads;
  static void Declare(ParamDeclarer<InterleavedParam>& d) {
    d.field("heads", &InterleavedParam::heads).lower_bound(1).describe("Set number of heads");
  }
};

// Where an op reads its head matrices: input `input`, a projection holding `parts` slices of
// head_dim per head, of which it reads slice `part`.
struct Slice {
  size_t input;
  int parts, part;
};

inline int64_t HeadsOf(const NodeAttrs& attrs) { return attrs.param<InterleavedParam>().heads; }

// --- Shapes, inferred both ways (unknown dims are -1 and propagate) -----------------------

inline int64_t Dim(const TShape& s, int i) { return s.ndim_known() ? s[i] : TShape::kUnknownDim; }

inline int64_t FirstKnown(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    if (d >= 0) return d;
  return TShape::kUnknownDim;
}

inline int64_t Times(int64_t a, int64_t b) {
  return a < 0 || b < 0 ? TShape::kUnknownDim : CheckedMul(a, b, "attention shape");
}

// An input or output of an attention op as its errors name it.
struct Operand {
  std::string op, name, layout;  // layout e.g. "(seq_length, batch_size, heads * 3 * head_dim)"
};

// A projection's dims: (length, batch_size, heads * parts * head_dim).
struct ProjectionDims {
  int64_t length, batch, head_dim;
};
// An attention map's dims: (batch_size * heads, q_length, k_length).
struct MapDims {
  int64_t batch, q_length, k_length;
};

inline Operand ProjectionOperand(const NodeAttrs& attrs, const std::string& name, const char* length, int parts) {
  return {attrs.op->name, name,
          StrCat("(", length, ", batch_size, heads * ", parts == 1 ? std::string() : StrCat(parts, " * "), "head_dim)")};
}

inline Operand MapOperand(const NodeAttrs& attrs, const std::string& name, bool self_attention) {
  return {attrs.op->name, name,
          self_attention ? "(batch_size * heads, seq_length, seq_length)" : "(batch_size * heads, query_length, key_length)"};
}

inline std::string InputName(const NodeAttrs& attrs, size_t i) { return attrs.op->ListArguments(attrs)[i]; }

// Throws ShapeError unless `s` is 3-D (or of unknown rank).
inline void CheckRank3(const TShape& s, const Operand& o) {
  if (s.ndim_known() && s.ndim() != 3)
    throw ShapeError(StrCat(o.op, ": ", o.name, " must be 3-D ", o.layout, ", got shape ", s));
}

// s[axis] / divisor when it is known; ShapeError when the divisor does not divide it.
inline int64_t DivideDim(const TShape& s, int axis, int64_t divisor, const Operand& o, const std::string& divisor_name) {
  const int64_t v = Dim(s, axis);
  if (v < 0) return TShape::kUnknownDim;
  if (v % divisor != 0)
    throw ShapeError(StrCat(o.op, ": ", o.name, " must be ", o.layout, ", so its dim ", axis,
                            " must be a multiple of ", divisor_name, " = ", divisor, "; got shape ", s));
  return v / divisor;
}

inline ProjectionDims ReadProjection(const TShape& s, int64_t heads, int parts, const Operand& o) {
  CheckRank3(s, o);
  return {Dim(s, 0), Dim(s, 1), DivideDim(s, 2, parts * heads, o, parts == 1 ? "heads" : StrCat(parts, " * heads"))};
}

inline MapDims ReadMaps(const TShape& s, int64_t heads, const Operand& o) {
  CheckRank3(s, o);
  return {DivideDim(s, 0, heads, o, "heads"), Dim(s, 1), Dim(s, 2)};
}

inline TShape ProjectionShape(int64_t length, int64_t batch, int64_t head_dim, int64_t heads, int parts) {
  return TShape({length, batch, Times(head_dim, parts * heads)});
}

inline TShape MapsShape(int64_t batch, int64_t heads, int64_t q_length, int64_t k_length) {
  return TShape({Times(batch, heads), q_length, k_length});
}

// The qk ops: queries from slice q, keys from slice k (of the same input in self-attention,
// whose queries and keys share one length), scores (batch_size * heads, q_length, k_length).
inline InferShapeFn ScoresShape(Slice q, Slice k) {
  return [q, k](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
    const bool self = q.input == k.input;
    const int64_t heads = HeadsOf(attrs);
    const ProjectionDims qd = ReadProjection((*in)[q.input], heads, q.parts,
                                             ProjectionOperand(attrs, InputName(attrs, q.input), self ? "seq_length" : "query_length", q.parts));
    const ProjectionDims kd = ReadProjection((*in)[k.input], heads, k.parts,
                                             ProjectionOperand(attrs, InputName(attrs, k.input), self ? "seq_length" : "key_length", k.parts));
    const MapDims sd = ReadMaps((*out)[0], heads, MapOperand(attrs, "output", self));
    int64_t q_length = FirstKnown({qd.length, sd.q_length}), k_length = FirstKnown({kd.length, sd.k_length});
    if (self) q_length = k_length = FirstKnown({q_length, k_length});
    const int64_t batch = FirstKnown({qd.batch, kd.batch, sd.batch}), head_dim = FirstKnown({qd.head_dim, kd.head_dim});
    ShapeAssignCheck(in, q.input, ProjectionShape(q_length, batch, head_dim, heads, q.parts));
    if (!self) ShapeAssignCheck(in, k.input, ProjectionShape(k_length, batch, head_dim, heads, k.parts));
    ShapeAssignCheck(out, 0, MapsShape(batch, heads, q_length, k_length));
  };
}

// The valatt ops: values from slice v, attention maps (input 1) (batch_size * heads, q_length,
// k_length), output (q_length, batch_size, heads * head_dim). In self-attention the values'
// projection also holds the queries: one length.
inline InferShapeFn WeightedShape(Slice v, bool self) {
  return [v, self](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
    const int64_t heads = HeadsOf(attrs);
    const ProjectionDims vd = ReadProjection((*in)[v.input], heads, v.parts,
                                             ProjectionOperand(attrs, InputName(attrs, v.input), self ? "seq_length" : "key_length", v.parts));
    const MapDims ad = ReadMaps((*in)[1], heads, MapOperand(attrs, InputName(attrs, 1), self));
    const ProjectionDims od =
        ReadProjection((*out)[0], heads, 1, ProjectionOperand(attrs, "output", self ? "seq_length" : "query_length", 1));
    int64_t q_length = FirstKnown({ad.q_length, od.length}), k_length = FirstKnown({vd.length, ad.k_length});
    if (self) q_length = k_length = FirstKnown({q_length, k_length});
    const int64_t batch = FirstKnown({vd.batch, ad.batch, od.batch}), head_dim = FirstKnown({vd.head_dim, od.head_dim});
    ShapeAssignCheck(in, v.input, ProjectionShape(k_length, batch, head_dim, heads, v.parts));
    ShapeAssignCheck(in, 1, MapsShape(batch, heads, q_length, k_length));
    ShapeAssignCheck(out, 0, ProjectionShape(q_length, batch, head_dim, heads, 1));
  };
}

// --- Kernels ----------------------------------------------------------------------------

// The matrices of one batch: matrix i at data + i * stride, rows x cols, rows ld apart.
struct Matrices {
  float* data;
  int64_t rows, cols, ld, stride;
};

// The head matrices of slice `s` of the projection `a` (seq, batch, heads * parts * head_dim).
inline Matrices HeadPart(const NDArray& a, int64_t heads, const Slice& s) {
  const TShape& shape = a.shape();
  const int64_t head_dim = shape[2] / (heads * s.parts);
  return {a.fdata() + s.part * head_dim, shape[0], head_dim, shape[1] * shape[2], s.parts * head_dim};
}

// The attention maps of `a` shaped (batch * heads, query length, key length).
inline Matrices Maps(const NDArray& a) {
  const TShape& s = a.shape();
  return {a.fdata(), s[1], s[2], s[2], s[1] * s[2]};
}

// C_i = alpha * op(A_i) op(B_i) + beta * C_i for the `batch` matrices of C.
inline void BatchProduct(bool trans_a, bool trans_b, float alpha, const Matrices& A, const Matrices& B,
                         float beta, const Matrices& C, int64_t batch) {
  const int64_t depth = trans_a ? A.rows : A.cols;
  GemmStridedBatched(trans_a, trans_b, batch, C.rows, C.cols, depth, alpha, A.data, A.ld, A.stride, B.data, B.ld,
                     B.stride, beta, C.data, C.ld, C.stride);
}

// 1 / sqrt(head_dim): queries are scaled before their product with the keys. (With no head
// dims every score is an empty sum, 0, and must not become 0 * inf.)
inline float QueryScale(int64_t head_dim) {
  return head_dim > 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))) : 1.0f;
}

// Attention matrices of a call: batch_size (dim 1 of every projection) times heads.
inline int64_t HeadCount(const NDArray& projection, int64_t heads) { return projection.shape()[1] * heads; }

inline float BetaFor(OpReq req) { return req == OpReq::kAdd ? 1.0f : 0.0f; }

// Gradient i's array prepared for accumulation (zeroed under kWrite: the parts of an interleaved
// gradient that no product writes are zero), or null when nobody asked for it.
inline const NDArray* GradToAccumulate(const BackwardArgs& a, size_t i) {
  if (a.req[i] == OpReq::kNull) return nullptr;
  ZeroWithReq(a.in_grads[i], a.req[i]);
  return &a.in_grads[i];
}

// The qk ops: scores_i = Q_i K_i^T / sqrt(head_dim), output (batch * heads, q_len, k_len).
inline ForwardFn ScoresForward(Slice q, Slice k) {
  return [q, k](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    if (req[0] == OpReq::kNull) return;
    const int64_t heads = HeadsOf(attrs);
    const Matrices queries = HeadPart(in[q.input], heads, q);
    BatchProduct(false, true, QueryScale(queries.cols), queries, HeadPart(in[k.input], heads, k), BetaFor(req[0]),
                 Maps(out[0]), HeadCount(in[q.input], heads));
  };
}

// dQ_i = dS_i K_i / sqrt(head_dim), dK_i = dS_i^T Q_i / sqrt(head_dim), accumulated into the
// gradients asked for: q and k may share one interleaved gradient array.
inline BackwardFn ScoresBackward(Slice q, Slice k) {
  return [q, k](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
    const int64_t heads = HeadsOf(attrs), batch = HeadCount(a.inputs[q.input], heads);
    const NDArray* q_grad = GradToAccumulate(a, q.input);
    const NDArray* k_grad = k.input == q.input ? q_grad : GradToAccumulate(a, k.input);
    const Matrices queries = HeadPart(a.inputs[q.input], heads, q), keys = HeadPart(a.inputs[k.input], heads, k);
    const Matrices d_scores = Maps(a.out_grads[0]);
    const float scale = QueryScale(queries.cols);
    if (q_grad) BatchProduct(false, false, scale, d_scores, keys, 1.0f, HeadPart(*q_grad, heads, q), batch);
    if (k_grad) BatchProduct(true, false, scale, d_scores, queries, 1.0f, HeadPart(*k_grad, heads, k), batch);
  };
}

inline MacCountFn ScoresMacs(Slice q) {
  return [q](const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>& out) {
    return CheckedMul(out[0].Size(), in[q.input][2] / (HeadsOf(attrs) * q.parts), "attention scores");
  };
}

// The valatt ops' output: a projection of one slice per head (no input: `input` is unused).
constexpr Slice kWeightedOutput{0, 1, 0};

// The valatt ops: input 1 holds the attention maps A; out_i = A_i V_i, output
// (q_len, batch, heads * head_dim) with the heads side by side again.
inline ForwardFn WeightedForward(Slice v) {
  return [v](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
             const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    if (req[0] == OpReq::kNull) return;
    const int64_t heads = HeadsOf(attrs);
    BatchProduct(false, false, 1.0f, Maps(in[1]), HeadPart(in[v.input], heads, v), BetaFor(req[0]),
                 HeadPart(out[0], heads, kWeightedOutput), HeadCount(in[v.input], heads));
  };
}

// dA_i = dO_i V_i^T and dV_i = A_i^T dO_i, accumulated into the gradients asked for.
inline BackwardFn WeightedBackward(Slice v) {
  return [v](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
    const int64_t heads = HeadsOf(attrs), batch = HeadCount(a.inputs[v.input], heads);
    const Matrices d_out = HeadPart(a.out_grads[0], heads, kWeightedOutput);
    if (const NDArray* att_grad = GradToAccumulate(a, 1))
      BatchProduct(false, true, 1.0f, d_out, HeadPart(a.inputs[v.input], heads, v), 1.0f, Maps(*att_grad), batch);
    if (const NDArray* v_grad = GradToAccumulate(a, v.input))
      BatchProduct(true, false, 1.0f, Maps(a.inputs[1]), d_out, 1.0f, HeadPart(*v_grad, heads, v), batch);
  };
}

inline int64_t WeightedMacs(const NodeAttrs&, const std::vector<TShape>& in, const std::vector<TShape>& out) {
  return CheckedMul(out[0].Size(), in[1][2], "weighted values");
}

}  // namespace symbind::attention
