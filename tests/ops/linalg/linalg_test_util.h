// Helpers for the linear-algebra op tests: small dense matrices in double with naive
// references written as plain loops, batches of them as NDArrays, and a float64 gradient check
// against central differences (tighter than op_test_util.h's float32 one).
#pragma once
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

namespace symbind::test::la {

// A row-major matrix of doubles.
struct Dense {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Dense() = default;
  Dense(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  double operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

inline Dense Eye(int64_t n) {
  Dense e(n, n);
  for (int64_t i = 0; i < n; ++i) e(i, i) = 1;
  return e;
}

inline Dense Transposed(const Dense& a) {
  Dense t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

inline Dense MatMul(const Dense& a, const Dense& b) {
  REQUIRE(a.cols == b.rows);
  Dense c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.cols; ++k) s += a(i, k) * b(k, j);
      c(i, j) = s;
    }
  return c;
}

// s * a + t * b (b may be empty: s * a).
inline Dense Combine(double s, const Dense& a, double t = 0, const Dense& b = Dense()) {
  Dense c = a;
  for (size_t i = 0; i < c.v.size(); ++i) c.v[i] = s * a.v[i] + (b.v.empty() ? 0.0 : t * b.v[i]);
  return c;
}

// The lower (or upper) triangle, zeros elsewhere.
inline Dense TriangleOf(const Dense& a, bool lower) {
  Dense t(a.rows, a.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j)
      if (lower ? j <= i : j >= i) t(i, j) = a(i, j);
  return t;
}

inline Dense RandomDense(int64_t r, int64_t c, uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Dense a(r, c);
  for (double& x : a.v) x = dist(rng);
  return a;
}

// A symmetric positive definite matrix: R R^T + n I.
inline Dense RandomSpd(int64_t n, uint64_t seed) {
  Dense r = RandomDense(n, n, seed);
  return Combine(1, MatMul(r, Transposed(r)), static_cast<double>(n), Eye(n));
}

// A triangular matrix with a diagonal in [1, 2] (well conditioned).
inline Dense RandomTriangle(int64_t n, uint64_t seed, bool lower) {
  Dense t = TriangleOf(RandomDense(n, n, seed), lower);
  for (int64_t i = 0; i < n; ++i) t(i, i) = 1.0 + std::fabs(t(i, i));
  return t;
}

// The inverse by Gauss-Jordan elimination with partial pivoting.
inline Dense NaiveInverse(Dense a) {
  const int64_t n = a.rows;
  Dense inv = Eye(n);
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::fabs(a(i, k)) > std::fabs(a(p, k))) p = i;
    for (int64_t j = 0; j < n; ++j) {
      std::swap(a(k, j), a(p, j));
      std::swap(inv(k, j), inv(p, j));
    }
    const double d = a(k, k);
    for (int64_t j = 0; j < n; ++j) {
      a(k, j) /= d;
      inv(k, j) /= d;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i == k) continue;
      const double f = a(i, k);
      for (int64_t j = 0; j < n; ++j) {
        a(i, j) -= f * a(k, j);
        inv(i, j) -= f * inv(k, j);
      }
    }
  }
  return inv;
}

// The determinant by Laplace expansion along the first row.
inline double NaiveDet(const Dense& a) {
  const int64_t n = a.rows;
  if (n == 0) return 1;
  if (n == 1) return a(0, 0);
  double det = 0;
  for (int64_t j = 0; j < n; ++j) {
    Dense minor(n - 1, n - 1);
    for (int64_t i = 1; i < n; ++i)
      for (int64_t k = 0, c = 0; k < n; ++k)
        if (k != j) minor(i - 1, c++) = a(i, k);
    det += (j % 2 == 0 ? 1 : -1) * a(0, j) * NaiveDet(minor);
  }
  return det;
}

// A batch of equal-sized matrices as an array of `shape` (whose last two dims are theirs).
inline NDArray Stack(const std::vector<Dense>& batch, const TShape& shape, DType t = DType::kFloat64) {
  std::vector<double> all;
  for (const Dense& d : batch) all.insert(all.end(), d.v.begin(), d.v.end());
  REQUIRE(static_cast<int64_t>(all.size()) == shape.Size());
  NDArray a(shape, t);
  ConvertElements(all.data(), DType::kFloat64, a.raw_data(), t, all.size());
  return a;
}
inline NDArray Stack(const Dense& d, DType t = DType::kFloat64) { return Stack({d}, TShape({d.rows, d.cols}), t); }

inline std::vector<double> Doubles(const NDArray& a) {
  std::vector<double> v(static_cast<size_t>(a.Size()));
  ConvertElements(a.raw_data(), a.dtype(), v.data(), DType::kFloat64, v.size());
  return v;
}

// Matrix b of an array seen as a batch of (rows, cols) matrices.
inline Dense MatrixOf(const NDArray& a, int64_t b, int64_t rows, int64_t cols) {
  const std::vector<double> v = Doubles(a);
  Dense d(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) d.v[static_cast<size_t>(i)] = v[static_cast<size_t>(b * rows * cols + i)];
  return d;
}

// Every element of `got` within tol * (1 + |want|) of the concatenated `want` matrices.
inline void RequireNear(const NDArray& got, const std::vector<Dense>& want, double tol, const std::string& what = "") {
  std::vector<double> w;
  for (const Dense& d : want) w.insert(w.end(), d.v.begin(), d.v.end());
  const std::vector<double> g = Doubles(got);
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::fabs(g[i] - w[i]) <= tol * (1 + std::fabs(w[i]))))
      FAIL(what << " element " << i << ": got " << g[i] << ", want " << w[i]);
}
inline void RequireNear(const NDArray& got, const Dense& want, double tol, const std::string& what = "") {
  RequireNear(got, std::vector<Dense>{want}, tol, what);
}

inline KwArgs Flags(std::initializer_list<std::pair<const char*, bool>> flags, KwArgs more = {}) {
  for (auto& f : flags) more[f.first] = f.second ? "True" : "False";
  return more;
}

struct Grad64Options {
  // Perturb each symmetric pair (i, j), (j, i) of input `symmetric` together, for ops that read one
  // triangle of a symmetric input and return a symmetric gradient (potrf, syevd): the pair's
  // finite difference is then g_ij + g_ji (g_ii on the diagonal).
  std::string symmetric;
  double eps = 1e-6;
  double tol = 1e-6;
  int64_t matrix_size = 0;  // the symmetric input's matrix size
};

// Gradients of every input of `op` (float64 arrays) against central differences of
// loss = sum_k out_k * head_k over the visible outputs, in float64.
inline void CheckGradients64(const std::string& op, const KwArgs& params, const std::map<std::string, NDArray>& inputs,
                             const Grad64Options& opt = {}) {
  auto exec = BindSingleOp(op, params, inputs);
  exec->Forward(true);
  std::vector<NDArray> heads;
  for (size_t k = 0; k < exec->outputs().size(); ++k) {
    const NDArray& o = exec->outputs()[k];
    NDArray h(o.shape(), DType::kFloat64);
    std::mt19937_64 rng(500 + k);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (int64_t i = 0; i < h.Size(); ++i) h.data<double>()[i] = dist(rng);
    heads.push_back(h);
  }
  exec->Backward(heads);
  const auto names = exec->symbol().ListArguments();
  std::vector<std::vector<double>> analytic;
  for (auto& g : exec->grad_arrays()) analytic.push_back(Doubles(g));
  auto loss = [&] {
    exec->Forward(true);
    double s = 0;
    for (size_t k = 0; k < heads.size(); ++k) {
      const std::vector<double> o = Doubles(exec->outputs()[k]);
      for (size_t i = 0; i < o.size(); ++i) s += o[i] * heads[k].data<double>()[i];
    }
    return s;
  };
  for (size_t a = 0; a < names.size(); ++a) {
    double* x = exec->arg_arrays()[a].data<double>();
    const bool pairs = names[a] == "op_" + opt.symmetric;
    const int64_t n = opt.matrix_size;
    for (int64_t i = 0; i < exec->arg_arrays()[a].Size(); ++i) {
      // With pairs: only the lower triangle's elements, each with its mirror.
      int64_t mirror = i;
      if (pairs) {
        const int64_t r = (i % (n * n)) / n, c = i % n;
        if (c > r) continue;
        mirror = i - r * n - c + c * n + r;
      }
      const double orig = x[i];
      const double orig_m = x[mirror];
      x[i] = orig + opt.eps;
      if (mirror != i) x[mirror] = orig_m + opt.eps;
      const double up = loss();
      x[i] = orig - opt.eps;
      if (mirror != i) x[mirror] = orig_m - opt.eps;
      const double down = loss();
      x[i] = orig;
      x[mirror] = orig_m;
      const double numeric = (up - down) / (2 * opt.eps);
      double got = analytic[a][static_cast<size_t>(i)];
      if (mirror != i) got += analytic[a][static_cast<size_t>(mirror)];
      if (!(std::fabs(got - numeric) <= opt.tol * (1 + std::fabs(numeric))))
        FAIL(op << ": gradient of " << names[a] << "[" << i << "] is " << got << ", finite differences give " << numeric);
    }
  }
}

}  // namespace symbind::test::la
