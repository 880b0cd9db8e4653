// MXNet's interleaved multi-head attention ops (_contrib_interleaved_matmul_{selfatt,encdec}_
// {qk,valatt}) against naive loops over the documented layout, gradients by finite differences
// (write, add, and an input left out), shapes inferred both ways, dtypes, and the shape errors.
#include <cmath>

#include <symbind/core/graph.h>
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Matrix (b, h) of part `part` of a projection shaped (seq, batch, heads * parts * head_dim),
// read element by element as the layout documents it: seq x head_dim, row-major.
std::vector<double> HeadMatrix(const NDArray& x, int64_t heads, int64_t parts, int64_t part, int64_t b, int64_t h) {
  const TShape& s = x.shape();
  const int64_t head_dim = s[2] / (heads * parts);
  std::vector<double> m;
  for (int64_t l = 0; l < s[0]; ++l)
    for (int64_t d = 0; d < head_dim; ++d) m.push_back(x.GetFlat((l * s[1] + b) * s[2] + (h * parts + part) * head_dim + d));
  return m;
}

// A (m x k) times B (k x n), or times B^T for B stored n x k.
std::vector<double> NaiveProduct(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t n,
                                 int64_t k, bool transpose_b) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        c[static_cast<size_t>(i * n + j)] += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(transpose_b ? j * k + p : p * n + j)];
  return c;
}

// scores[b * heads + h] = Q K^T / sqrt(head_dim) for the head's queries and keys.
NDArray NaiveScores(const NDArray& q, int64_t q_parts, int64_t q_part, const NDArray& k, int64_t k_parts,
                    int64_t k_part, int64_t heads) {
  const int64_t lq = q.shape()[0], lk = k.shape()[0], batch = q.shape()[1];
  const int64_t head_dim = q.shape()[2] / (heads * q_parts);
  std::vector<float> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (double v : NaiveProduct(HeadMatrix(q, heads, q_parts, q_part, b, h), HeadMatrix(k, heads, k_parts, k_part, b, h),
                                   lq, lk, head_dim, true))
        out.push_back(static_cast<float>(v / std::sqrt(static_cast<double>(head_dim))));
  return NDArray(TShape({batch * heads, lq, lk}), out);
}

// out[i][b][h * head_dim + d] = (A V)[i][d] for the head's attention A and values V.
NDArray NaiveWeighted(const NDArray& att, const NDArray& v, int64_t v_parts, int64_t v_part, int64_t heads) {
  const int64_t lq = att.shape()[1], lk = att.shape()[2], batch = v.shape()[1];
  const int64_t head_dim = v.shape()[2] / (heads * v_parts);
  NDArray out(TShape({lq, batch, heads * head_dim}));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      std::vector<double> a;
      for (int64_t e = 0; e < lq * lk; ++e) a.push_back(att.GetFlat((b * heads + h) * lq * lk + e));
      const std::vector<double> o = NaiveProduct(a, HeadMatrix(v, heads, v_parts, v_part, b, h), lq, head_dim, lk, false);
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t d = 0; d < head_dim; ++d)
          out.SetFlat((i * batch + b) * heads * head_dim + h * head_dim + d, static_cast<float>(o[static_cast<size_t>(i * head_dim + d)]));
    }
  return out;
}

KwArgs Heads(int h) { return {{"heads", std::to_string(h)}}; }

// Shapes of `op`'s arguments and output inferred from `known` (by argument name).
ShapeInferResult Infer(const std::string& op, int heads, const std::map<std::string, TShape>& known) {
  std::map<std::string, TShape> full;
  for (auto& kv : known) full["op_" + kv.first] = kv.second;
  return InferShapePartial(SingleOpSymbol(op, Heads(heads)), full);
}
}  // namespace

TEST_CASE("_contrib_interleaved_matmul_selfatt_qk and _valatt against naive loops", "[ops][contrib][attention]") {
  struct Dims { int64_t seq, batch, heads, head_dim; };
  for (Dims t : {Dims{4, 2, 3, 5}, Dims{1, 1, 1, 1}, Dims{7, 3, 2, 8}, Dims{33, 2, 4, 16}}) {
    INFO("seq " << t.seq << " batch " << t.batch << " heads " << t.heads << " head_dim " << t.head_dim);
    const NDArray qkv = RandomArray(TShape({t.seq, t.batch, t.heads * 3 * t.head_dim}), 1);
    const NDArray scores = Invoke("_contrib_interleaved_matmul_selfatt_qk", Heads(static_cast<int>(t.heads)), {qkv})[0];
    RequireClose(scores, NaiveScores(qkv, 3, 0, qkv, 3, 1, t.heads), 1e-5f, 1e-4f, "scores");
    const NDArray att = RandomArray(scores.shape(), 2);
    const NDArray weighted =
        Invoke("_contrib_interleaved_matmul_selfatt_valatt", Heads(static_cast<int>(t.heads)), {qkv, att})[0];
    RequireClose(weighted, NaiveWeighted(att, qkv, 3, 2, t.heads), 1e-5f, 1e-4f, "weighted values");
  }
}

TEST_CASE("_contrib_interleaved_matmul_encdec_qk and _valatt against naive loops", "[ops][contrib][attention]") {
  struct Dims { int64_t q_len, k_len, batch, heads, head_dim; };
  for (Dims t : {Dims{4, 6, 2, 3, 5}, Dims{1, 1, 1, 1, 1}, Dims{9, 2, 3, 2, 8}, Dims{17, 40, 2, 4, 16}}) {
    INFO("q_len " << t.q_len << " k_len " << t.k_len << " batch " << t.batch << " heads " << t.heads);
    const KwArgs heads = Heads(static_cast<int>(t.heads));
    const NDArray q = RandomArray(TShape({t.q_len, t.batch, t.heads * t.head_dim}), 3);
    const NDArray kv = RandomArray(TShape({t.k_len, t.batch, t.heads * 2 * t.head_dim}), 4);
    const NDArray scores = Invoke("_contrib_interleaved_matmul_encdec_qk", heads, {q, kv})[0];
    RequireClose(scores, NaiveScores(q, 1, 0, kv, 2, 0, t.heads), 1e-5f, 1e-4f, "scores");
    const NDArray att = RandomArray(scores.shape(), 5);
    const NDArray weighted = Invoke("_contrib_interleaved_matmul_encdec_valatt", heads, {kv, att})[0];
    RequireClose(weighted, NaiveWeighted(att, kv, 2, 1, t.heads), 1e-5f, 1e-4f, "weighted values");
  }
}

TEST_CASE("interleaved attention ops: gradients by finite differences", "[ops][contrib][attention][grad]") {
  const NDArray qkv = RandomArray(TShape({3, 2, 12}), 6);  // 2 heads of 2 dims
  const NDArray att = RandomArray(TShape({4, 3, 3}), 7);
  CheckGradients("_contrib_interleaved_matmul_selfatt_qk", Heads(2), {{"queries_keys_values", qkv}});
  CheckGradients("_contrib_interleaved_matmul_selfatt_valatt", Heads(2), {{"queries_keys_values", qkv}, {"attention", att}});
  const NDArray q = RandomArray(TShape({2, 2, 4}), 8), kv = RandomArray(TShape({3, 2, 8}), 9);
  const NDArray enc_att = RandomArray(TShape({4, 2, 3}), 10);
  CheckGradients("_contrib_interleaved_matmul_encdec_qk", Heads(2), {{"queries", q}, {"keys_values", kv}});
  CheckGradients("_contrib_interleaved_matmul_encdec_valatt", Heads(2), {{"keys_values", kv}, {"attention", enc_att}});
  // One gradient not asked for: the other is still right (and the missing one untouched).
  for (const char* skip : {"keys_values", "attention"}) {
    GradCheckOptions opt;
    opt.no_grad = {skip};
    CheckGradients("_contrib_interleaved_matmul_encdec_valatt", Heads(2), {{"keys_values", kv}, {"attention", enc_att}}, opt);
  }
  GradCheckOptions opt;
  opt.no_grad = {"queries"};
  CheckGradients("_contrib_interleaved_matmul_encdec_qk", Heads(1), {{"queries", q}, {"keys_values", kv}}, opt);
}

TEST_CASE("interleaved attention ops: one projection feeding both ops sums its gradients", "[ops][contrib][attention][grad]") {
  // The self-attention block as models use it: scores, then the values they weight, both
  // reading one projection; its gradient is the sum of both ops' gradients.
  Symbol qkv = Symbol::Variable("qkv");
  Symbol scores = Symbol::Create("_contrib_interleaved_matmul_selfatt_qk", "qk", Heads(2), {{"queries_keys_values", qkv}});
  Symbol out = Symbol::Create("_contrib_interleaved_matmul_selfatt_valatt", "valatt", Heads(2),
                              {{"queries_keys_values", qkv}, {"attention", scores}});
  const NDArray x = RandomArray(TShape({3, 2, 12}), 11);
  auto exec = SimpleBind(out, Context::CPU(), {{"qkv", x}}, {}, {{"qkv", OpReq::kWrite}});
  exec->Forward(true);
  const NDArray head = RandomArray(exec->outputs()[0].shape(), 12);
  exec->Backward({head});
  const NDArray grad = exec->grad_arrays()[0].Copy();
  const std::vector<double> want = NumericGradient(
      [](const NDArray& input) {
        const NDArray s = Invoke("_contrib_interleaved_matmul_selfatt_qk", Heads(2), {input})[0];
        return Invoke("_contrib_interleaved_matmul_selfatt_valatt", Heads(2), {input, s})[0];
      },
      x, head);
  for (int64_t i = 0; i < x.Size(); ++i) {
    INFO("element " << i);
    CHECK(grad.GetFlat(i) == Approx(want[static_cast<size_t>(i)]).margin(2e-3).epsilon(2e-2));
  }
}

TEST_CASE("interleaved attention ops: shapes inferred both ways", "[ops][contrib][attention]") {
  // From the inputs.
  ShapeInferResult r = Infer("_contrib_interleaved_matmul_selfatt_qk", 3, {{"queries_keys_values", TShape({7, 2, 45})}});
  CHECK(r.out_shapes[0] == TShape({6, 7, 7}));
  r = Infer("_contrib_interleaved_matmul_encdec_qk", 3, {{"queries", TShape({5, 2, 15})}, {"keys_values", TShape({7, 2, 30})}});
  CHECK(r.out_shapes[0] == TShape({6, 5, 7}));
  // The attention maps from the projection, and the projection from the output.
  r = Infer("_contrib_interleaved_matmul_selfatt_valatt", 3, {{"queries_keys_values", TShape({7, 2, 45})}});
  CHECK(r.arg_shapes[1] == TShape({6, 7, 7}));
  CHECK(r.out_shapes[0] == TShape({7, 2, 15}));
  Symbol out = Symbol::Create("_contrib_interleaved_matmul_selfatt_valatt", "op", Heads(3),
                              {{"queries_keys_values", Symbol::Variable("qkv")}, {"attention", Symbol::Variable("att")}});
  Symbol sum = Symbol::Create("elemwise_add", "add", {}, {{"lhs", out}, {"rhs", Symbol::Variable("y")}});
  r = InferShape(sum, {{"y", TShape({7, 2, 15})}});
  CHECK(r.arg_shapes[0] == TShape({7, 2, 45}));
  CHECK(r.arg_shapes[1] == TShape({6, 7, 7}));
  out = Symbol::Create("_contrib_interleaved_matmul_encdec_valatt", "op", Heads(3),
                       {{"keys_values", Symbol::Variable("kv")}, {"attention", Symbol::Variable("att")}});
  sum = Symbol::Create("elemwise_add", "add", {}, {{"lhs", out}, {"rhs", Symbol::Variable("y")}});
  r = InferShape(sum, {{"y", TShape({5, 2, 15})}, {"kv", TShape({8, 2, 30})}});
  CHECK(r.arg_shapes[1] == TShape({6, 5, 8}));
  // Only what the output says: seq and batch of the projection, not its width.
  Symbol scores = Symbol::Create("_contrib_interleaved_matmul_selfatt_qk", "op", Heads(3),
                                 {{"queries_keys_values", Symbol::Variable("qkv")}});
  sum = Symbol::Create("elemwise_add", "add", {}, {{"lhs", scores}, {"rhs", Symbol::Variable("y")}});
  r = InferShapePartial(sum, {{"y", TShape({6, 7, 7})}});
  CHECK(r.arg_shapes[0] == TShape({7, 2, TShape::kUnknownDim}));
}

TEST_CASE("interleaved attention ops: shape and type errors name the input", "[ops][contrib][attention]") {
  const std::string selfatt_qk = "_contrib_interleaved_matmul_selfatt_qk";
  CHECK_THROWS_WITH(Invoke(selfatt_qk, Heads(2), {NDArray(TShape({4, 12}))}),
                    Catch::Contains("queries_keys_values must be 3-D (seq_length, batch_size, heads * 3 * head_dim), got shape (4,12)"));
  CHECK_THROWS_WITH(Invoke(selfatt_qk, Heads(2), {NDArray(TShape({4, 2, 10}))}),
                    Catch::Contains("must be a multiple of 3 * heads = 6; got shape (4,2,10)"));
  CHECK_THROWS_AS(Invoke(selfatt_qk, Heads(0), {NDArray(TShape({4, 2, 12}))}), ParamError);
  // Attention maps that do not fit the projection: named, with both shapes.
  CHECK_THROWS_WITH(Invoke("_contrib_interleaved_matmul_selfatt_valatt", Heads(2),
                           {NDArray(TShape({4, 2, 12})), NDArray(TShape({4, 4, 5}))}),
                    Catch::Contains("attention") && Catch::Contains("provided (4,4,5), inferred (4,4,4)"));
  CHECK_THROWS_WITH(Invoke("_contrib_interleaved_matmul_selfatt_valatt", Heads(2),
                           {NDArray(TShape({4, 2, 12})), NDArray(TShape({3, 4, 4}))}),
                    Catch::Contains("attention must be (batch_size * heads, seq_length, seq_length), so its dim 0 must be a multiple of heads = 2"));
  CHECK_THROWS_WITH(Invoke("_contrib_interleaved_matmul_encdec_qk", Heads(2),
                           {NDArray(TShape({4, 2, 8})), NDArray(TShape({5, 3, 16}))}),
                    Catch::Contains("keys_values") && Catch::Contains("provided (5,3,16), inferred (5,2,16)"));
  CHECK_THROWS_WITH(Invoke("_contrib_interleaved_matmul_encdec_qk", Heads(2),
                           {NDArray(TShape({4, 2, 8})), NDArray(TShape({5, 2, 8}))}),
                    Catch::Contains("keys_values") && Catch::Contains("provided (5,2,8), inferred (5,2,16)"));
  CHECK_THROWS_WITH(Invoke("_contrib_interleaved_matmul_encdec_valatt", Heads(2),
                           {NDArray(TShape({5, 2, 16})), NDArray(TShape({4, 3, 6}))}),
                    Catch::Contains("attention") && Catch::Contains("provided (4,3,6), inferred (4,3,5)"));
  // Floating dtypes compute through float32 copies (MXNet's CPU kernels are float32 only);
  // integers are refused.
  const NDArray qkv = RandomArray(TShape({4, 2, 12}), 13);
  const NDArray scores64 = Invoke(selfatt_qk, Heads(2), {qkv.AsType(DType::kFloat64)})[0];
  CHECK(scores64.dtype() == DType::kFloat64);
  RequireClose(scores64.AsType(DType::kFloat32), Invoke(selfatt_qk, Heads(2), {qkv})[0], 0, 0);
  CHECK_THROWS_WITH(Invoke(selfatt_qk, Heads(2), {qkv.AsType(DType::kInt32)}),
                    Catch::Contains("queries_keys_values") && Catch::Contains("int32"));
}
