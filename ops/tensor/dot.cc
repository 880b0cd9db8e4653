// dot and batch_dot. dot contracts lhs's last axis with rhs's first (N-D inputs are viewed as
// matrices: lhs (prod of leading dims, last), rhs (first, prod of trailing dims)); transpose_a
// views lhs as (first, rest) transposed and transpose_b views rhs as (leading, last)
// transposed, as MXNet's DotShape. batch_dot multiplies matching matrices of two N-D (N >= 3)
// arrays sharing their leading batch dims.
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/gemm_batched.h>
#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
enum StorageHint { kDefaultStorage = 0, kRowSparseStorage = 1, kCSRStorage = 2 };

struct DotParam : Parameter<DotParam> {
  bool transpose_a;
  bool transpose_b;
  std::optional<int> forward_stype;
  static void Declare(ParamDeclarer<DotParam>& d) {
    d.field("transpose_a", &DotParam::transpose_a).set_default(false)
        .describe("If true then transpose the first input before dot.");
    d.field("transpose_b", &DotParam::transpose_b).set_default(false)
        .describe("If true then transpose the second input before dot.");
    // Accepted for compatibility; every array here is dense.
    d.field("forward_stype", &DotParam::forward_stype)
        .add_enum("default", kDefaultStorage).add_enum("row_sparse", kRowSparseStorage)
        .add_enum("csr", kCSRStorage).set_default(std::nullopt)
        .describe("The desired storage type of the forward output given by user (dense only here).");
  }
};

std::vector<int64_t> DimsRange(const TShape& s, int b, int e) {
  return std::vector<int64_t>(s.dims().begin() + b, s.dims().begin() + e);
}

void InferDotShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<DotParam>();
  const TShape& l = (*in)[0];
  const TShape& r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  if (l.ndim() == 0 || r.ndim() == 0) throw ShapeError("dot: scalar tensor is not supported by this operator.");
  auto mismatch = [&] { return ShapeError(StrCat("dot shape error: ", l, " X ", r)); };
  if (l.ndim() == 1 && r.ndim() == 1) {
    if (p.transpose_a || p.transpose_b) throw ShapeError("dot: cannot transpose vectors");
    if (l[0] >= 0 && r[0] >= 0 && l[0] != r[0]) throw mismatch();
    ShapeAssignCheck(out, 0, TShape({1}));
    return;
  }
  const int ln = l.ndim(), rn = r.ndim();
  // Contracted extent on each side and the dims each side contributes to the output.
  const int64_t lk = p.transpose_a ? l[0] : l[ln - 1];
  const int64_t rk = p.transpose_b ? r[rn - 1] : r[0];
  std::vector<int64_t> o;
  if (ln > 1) {
    auto d = p.transpose_a ? DimsRange(l, 1, ln) : DimsRange(l, 0, ln - 1);
    o.insert(o.end(), d.begin(), d.end());
  }
  if (rn > 1) {
    auto d = p.transpose_b ? DimsRange(r, 0, rn - 1) : DimsRange(r, 1, rn);
    o.insert(o.end(), d.begin(), d.end());
  }
  if (lk >= 0 && rk >= 0 && lk != rk) throw mismatch();
  ShapeAssignCheck(out, 0, TShape(o));
}

// lhs viewed as stored matrix (ma, na), rhs as (mb, nb), as MXNet's DotForward_.
struct DotDims {
  int64_t ma, na, mb, nb, m, n, k;
};

DotDims GetDotDims(const DotParam& p, const TShape& l, const TShape& r) {
  DotDims d{};
  const int64_t ls = l.Size(), rs = r.Size();
  if (p.transpose_a) { d.ma = l[0]; d.na = ls / std::max<int64_t>(d.ma, 1); d.m = d.na; d.k = d.ma; }
  else { d.na = l[l.ndim() - 1]; d.ma = ls / std::max<int64_t>(d.na, 1); d.m = d.ma; d.k = d.na; }
  if (p.transpose_b) { d.nb = r[r.ndim() - 1]; d.mb = rs / std::max<int64_t>(d.nb, 1); d.n = d.mb; }
  else { d.mb = r[0]; d.nb = rs / std::max<int64_t>(d.mb, 1); d.n = d.nb; }
  return d;
}

float Beta(OpReq req) { return req == OpReq::kAdd ? 1.0f : 0.0f; }

// out = op(L) * op(R) for one pair of matrices.
void MatMul(bool ta, bool tb, const DotDims& d, const float* L, const float* R, OpReq req, float* Y) {
  if (req == OpReq::kNull) return;
  Gemm(ta, tb, d.m, d.n, d.k, 1.0f, L, d.na, R, d.nb, Beta(req), Y, d.n);
}

// Gradients of Y = op(L) * op(R) given dY.
void MatMulGrad(bool ta, bool tb, const DotDims& d, const float* L, const float* R,
                const float* dY, OpReq lreq, float* dL, OpReq rreq, float* dR) {
  const int64_t m = d.m, n = d.n, k = d.k;
  if (lreq != OpReq::kNull) {
    if (!ta) Gemm(false, !tb, m, k, n, 1.0f, dY, n, R, d.nb, Beta(lreq), dL, k);  // dY op(R)^T
    else Gemm(tb, true, k, m, n, 1.0f, R, d.nb, dY, n, Beta(lreq), dL, m);        // (dY op(R)^T)^T
  }
  if (rreq != OpReq::kNull) {
    if (!tb) Gemm(!ta, false, k, n, m, 1.0f, L, d.na, dY, n, Beta(rreq), dR, n);  // op(L)^T dY
    else Gemm(true, ta, n, k, m, 1.0f, dY, n, L, d.na, Beta(rreq), dR, k);        // (op(L)^T dY)^T
  }
}

void InferBatchDotShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<DotParam>();
  const TShape& l = (*in)[0];
  const TShape& r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  if (l.ndim() < 3 || r.ndim() < 3 || l.ndim() != r.ndim())
    throw ShapeError(StrCat("batch_dot currently only support N-D*N-D array (N >= 3)", l, " v.s. ", r));
  const int nd = l.ndim();
  // As MXNet: nothing is inferred until lhs's last and rhs's second-last dims are known.
  if (l[nd - 1] < 0 || r[nd - 2] < 0) return;
  const std::string flags = StrCat(" trans_a=", p.transpose_a, " trans_b=", p.transpose_b);
  std::vector<int64_t> o;
  for (int i = 0; i < nd - 2; ++i) {
    if (l[i] >= 0 && r[i] >= 0 && l[i] != r[i])
      throw ShapeError(StrCat("batch_dot shape error (the leading batch dimensions must be equal): ",
                              l, " X ", r, flags));
    o.push_back(l[i] >= 0 ? l[i] : r[i]);
  }
  int64_t lk = p.transpose_a ? l[nd - 2] : l[nd - 1];
  int64_t rk = p.transpose_b ? r[nd - 1] : r[nd - 2];
  if (lk >= 0 && rk >= 0 && lk != rk)
    throw ShapeError(StrCat("batch_dot shape error (shape mismatch): ", l, " X ", r, flags));
  o.push_back(p.transpose_a ? l[nd - 1] : l[nd - 2]);
  o.push_back(p.transpose_b ? r[nd - 2] : r[nd - 1]);
  ShapeAssignCheck(out, 0, TShape(o));
}

// The matrix dims of one batch element and the batch count.
std::pair<DotDims, int64_t> BatchDims(const DotParam& p, const TShape& l, const TShape& r) {
  const int nd = l.ndim();
  int64_t batch = l.ProdDims(0, nd - 2);
  TShape lm({l[nd - 2], l[nd - 1]}), rm({r[nd - 2], r[nd - 1]});
  return {GetDotDims(p, lm, rm), batch};
}
}  // namespace

SYMBIND_REGISTER_OP(dot)
    .describe("Dot product of two arrays. 1-D x 1-D gives the inner product (shape (1,)); "
              "otherwise lhs's last axis is contracted with rhs's first.")
    .set_params<DotParam>()
    .set_arguments({"lhs", "rhs"})
    .add_argument_doc("lhs", "The first input.")
    .add_argument_doc("rhs", "The second input.")
    .set_infer_shape(InferDotShape)
    .set_mac_count([](const NodeAttrs& attrs, const std::vector<TShape>& in,
                      const std::vector<TShape>& out) {
      return CheckedMul(out[0].Size(), GetDotDims(attrs.param<DotParam>(), in[0], in[1]).k, "dot");
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<DotParam>();
      DotDims d = GetDotDims(p, in[0].shape(), in[1].shape());
      MatMul(p.transpose_a, p.transpose_b, d, in[0].fdata(), in[1].fdata(), req[0], out[0].fdata());
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<DotParam>();
      DotDims d = GetDotDims(p, a.inputs[0].shape(), a.inputs[1].shape());
      MatMulGrad(p.transpose_a, p.transpose_b, d, a.inputs[0].fdata(), a.inputs[1].fdata(),
                 a.out_grads[0].fdata(), a.req[0], InGradOrNull(a, 0), a.req[1], InGradOrNull(a, 1));
    });

SYMBIND_REGISTER_OP(batch_dot)
    .describe("Batchwise dot product: out[b] = op(lhs[b]) * op(rhs[b]) over the leading batch dims.")
    .set_params<DotParam>()
    .set_arguments({"lhs", "rhs"})
    .add_argument_doc("lhs", "The first input: (batch..., m, k), or (batch..., k, m) with transpose_a.")
    .add_argument_doc("rhs", "The second input: (batch..., k, n), or (batch..., n, k) with transpose_b.")
    .set_infer_shape(InferBatchDotShape)
    .set_mac_count([](const NodeAttrs& attrs, const std::vector<TShape>& in,
                      const std::vector<TShape>& out) {
      return CheckedMul(out[0].Size(), BatchDims(attrs.param<DotParam>(), in[0], in[1]).first.k,
                        "batch_dot");
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<DotParam>();
      const auto d_batch = BatchDims(p, in[0].shape(), in[1].shape());
      const auto d = d_batch.first;
      const auto batch = d_batch.second;
      if (req[0] == OpReq::kNull) return;
      GemmStridedBatched(p.transpose_a, p.transpose_b, batch, d.m, d.n, d.k, 1.0f, in[0].fdata(), d.na,
                         d.ma * d.na, in[1].fdata(), d.nb, d.mb * d.nb, Beta(req[0]), out[0].fdata(), d.n,
                         d.m * d.n);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<DotParam>();
      const auto d_batch = BatchDims(p, a.inputs[0].shape(), a.inputs[1].shape());
      const auto d = d_batch.first;
      const auto batch = d_batch.second;
      const float* L = a.inputs[0].fdata();
      const float* R = a.inputs[1].fdata();
      const float* dY = a.out_grads[0].fdata();
      float* dL = InGradOrNull(a, 0);
      float* dR = InGradOrNull(a, 1);
      const int64_t ls = d.ma * d.na, rs = d.mb * d.nb;
      ForEachBatchedProduct(batch, d.m, d.n, d.k, [&](int64_t b) {
        MatMulGrad(p.transpose_a, p.transpose_b, d, L + b * ls, R + b * rs, dY + b * d.m * d.n,
                   a.req[0], dL ? dL + b * ls : nullptr, a.req[1], dR ? dR + b * rs : nullptr);
      });
    });

}  // namespace symbind
