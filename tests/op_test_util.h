// Shared helpers for operator tests: bind one op, compare with a naive reference, and check
// gradients against central finite differences (in both write and add modes).
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <symbind/executor/executor.h>

namespace symbind::test {

// An array of `shape` filled uniformly in [lo, hi) from `seed`.
inline NDArray RandomArray(const TShape& shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  NDArray a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, dist(rng));
  return a;
}

// A symbol applying `op` to variables named after its arguments and aux states.
inline Symbol SingleOpSymbol(const std::string& op, const KwArgs& params,
                             const std::string& name = "op") {
  return Symbol::Create(op, name, params, {});
}

// Binds the single-op symbol with `inputs` keyed by input name ("data", "weight", ...; aux
// states too). Every argument not in `no_grad` gets a gradient with `req`.
inline std::unique_ptr<Executor> BindSingleOp(const std::string& op, const KwArgs& params,
                                              const std::map<std::string, NDArray>& inputs,
                                              const std::vector<std::string>& no_grad = {},
                                              OpReq req = OpReq::kWrite) {
  Symbol sym = SingleOpSymbol(op, params);
  std::map<std::string, NDArray> args, aux;
  std::map<std::string, OpReq> reqs;
  auto aux_names = sym.ListAuxiliaryStates();
  for (auto& kv : inputs) {
    std::string full = "op_" + kv.first;
    if (std::find(aux_names.begin(), aux_names.end(), full) != aux_names.end()) aux[full] = kv.second;
    else args[full] = kv.second;
  }
  for (auto& name : sym.ListArguments()) {
    std::string short_name = name.substr(3);
    bool skip = std::find(no_grad.begin(), no_grad.end(), short_name) != no_grad.end();
    reqs[name] = skip ? OpReq::kNull : req;
  }
  return SimpleBind(sym, Context::CPU(), args, {}, reqs, aux);
}

// Runs forward (inference by default) and returns output `i`.
inline NDArray RunForward(const std::string& op, const KwArgs& params,
                          const std::map<std::string, NDArray>& inputs, size_t i = 0,
                          bool is_train = false) {
  auto exec = BindSingleOp(op, params, inputs, {}, OpReq::kNull);
  exec->Forward(is_train);
  return exec->outputs()[i].Copy();
}

// Checks every element of `got` against `want` within atol + rtol*|want|.
inline void RequireClose(const NDArray& got, const NDArray& want, float atol = 1e-5f,
                         float rtol = 1e-4f, const std::string& what = "") {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.Size(); ++i) {
    float g = got.GetFlat(i), w = want.GetFlat(i);
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      FAIL(what << " element " << i << ": got " << g << ", want " << w);
    }
  }
}

struct GradCheckOptions {
  std::vector<std::string> no_grad;  // inputs not differentiated (labels, indices)
  float eps = 1e-3f;
  float atol = 2e-3f;
  float rtol = 2e-2f;
  bool is_train = false;
  // Loss from outputs. Default: sum_k outputs[k] * head[k] with fixed random heads, which are
  // then also passed as head gradients. Loss heads set a loss of their own.
  std::function<double(const std::vector<NDArray>&)> loss;
};

// Compares analytic gradients of every differentiable argument with central differences of
// the loss, first with req=write, then with req=add on top of random initial gradients.
inline void CheckGradients(const std::string& op, const KwArgs& params,
                           const std::map<std::string, NDArray>& inputs,
                           GradCheckOptions opt = {}) {
  auto exec = BindSingleOp(op, params, inputs, opt.no_grad, OpReq::kWrite);
  exec->Forward(opt.is_train);
  std::vector<NDArray> heads;
  for (size_t k = 0; k < exec->outputs().size(); ++k)
    heads.push_back(RandomArray(exec->outputs()[k].shape(), 1000 + k));
  bool default_loss = !opt.loss;
  std::function<double(const std::vector<NDArray>&)> loss = opt.loss;
  if (default_loss) {
    loss = [heads](const std::vector<NDArray>& outs) {
      double s = 0;
      for (size_t k = 0; k < outs.size(); ++k)
        for (int64_t i = 0; i < outs[k].Size(); ++i)
          s += static_cast<double>(outs[k].GetFlat(i)) * heads[k].GetFlat(i);
      return s;
    };
  }
  exec->Backward(default_loss ? heads : std::vector<NDArray>{});
  auto names = exec->symbol().ListArguments();
  std::vector<NDArray> analytic;
  for (auto& g : exec->grad_arrays()) analytic.push_back(g.is_none() ? g : g.Copy());

  // Aux states may change in training forward; restore them around every evaluation.
  std::vector<NDArray> aux0;
  for (auto& a : exec->aux_arrays()) aux0.push_back(a.Copy());
  auto eval = [&] {
    for (size_t j = 0; j < aux0.size(); ++j) {
      NDArray dst = exec->aux_arrays()[j];  // a handle to the executor's storage
      aux0[j].CopyTo(&dst);
    }
    exec->set_seed(kDefaultSeed);
    exec->Forward(opt.is_train);
    return loss(exec->outputs());
  };
  for (size_t a = 0; a < names.size(); ++a) {
    if (exec->grad_reqs()[a] == OpReq::kNull) continue;
    const NDArray& x = exec->arg_arrays()[a];
    for (int64_t i = 0; i < x.Size(); ++i) {
      float orig = x.GetFlat(i);
      x.SetFlat(i, orig + opt.eps);
      double up = eval();
      x.SetFlat(i, orig - opt.eps);
      double down = eval();
      x.SetFlat(i, orig);
      double numeric = (up - down) / (2.0 * opt.eps);
      double got = analytic[a].GetFlat(i);
      if (!(std::fabs(got - numeric) <= opt.atol + opt.rtol * std::fabs(numeric)))
        FAIL(op << ": gradient of " << names[a] << "[" << i << "] is " << got
                << ", finite differences give " << numeric);
    }
  }
  // req=add: gradients accumulate onto what is there.
  auto exec_add = BindSingleOp(op, params, inputs, opt.no_grad, OpReq::kAdd);
  std::vector<NDArray> initial;
  for (size_t a = 0; a < names.size(); ++a) {
    NDArray g = exec_add->grad_arrays()[a];
    if (g.is_none()) {
      initial.push_back(g);
      continue;
    }
    NDArray r = RandomArray(g.shape(), 77 + a);
    r.CopyTo(&g);
    initial.push_back(r);
  }
  exec_add->Forward(opt.is_train);
  exec_add->Backward(default_loss ? heads : std::vector<NDArray>{});
  for (size_t a = 0; a < names.size(); ++a) {
    if (exec_add->grad_reqs()[a] == OpReq::kNull) continue;
    const NDArray& g = exec_add->grad_arrays()[a];
    for (int64_t i = 0; i < g.Size(); ++i) {
      float want = initial[a].GetFlat(i) + analytic[a].GetFlat(i);
      if (!(std::fabs(g.GetFlat(i) - want) <= 1e-4f + 1e-4f * std::fabs(want)))
        FAIL(op << ": req=add gradient of " << names[a] << "[" << i << "] is " << g.GetFlat(i)
                << ", want " << want);
    }
  }
}

// --- Inputs and references shared by the op tests ---------------------------------------

// Central differences (step eps) of sum(f(x) * head) for each element of x: the gradient a
// backward with head gradient `head` must give, for what no single bound op computes
// (imperative-only ops, compositions of ops).
inline std::vector<double> NumericGradient(const std::function<NDArray(const NDArray&)>& f, const NDArray& x,
                                           const NDArray& head, float eps = 1e-3f) {
  auto loss = [&](const NDArray& at) {
    const NDArray y = f(at);
    double s = 0;
    for (int64_t i = 0; i < y.Size(); ++i) s += static_cast<double>(y.GetFlat(i)) * head.GetFlat(i);
    return s;
  };
  std::vector<double> g(static_cast<size_t>(x.Size()));
  for (int64_t i = 0; i < x.Size(); ++i) {
    NDArray up = x.Copy(), down = x.Copy();
    up.SetFlat(i, x.GetFlat(i) + eps);
    down.SetFlat(i, x.GetFlat(i) - eps);
    g[static_cast<size_t>(i)] = (loss(up) - loss(down)) / (2.0 * eps);
  }
  return g;
}

// Values in [lo, hi) with |x| >= 0.05, so finite differences stay clear of a kink at 0.
inline NDArray AwayFromZero(const TShape& s, uint64_t seed, float lo = -2.0f, float hi = 2.0f) {
  NDArray a = RandomArray(s, seed, lo, hi);
  for (int64_t i = 0; i < a.Size(); ++i)
    if (std::fabs(a.GetFlat(i)) < 0.05f) a.SetFlat(i, a.GetFlat(i) < 0 ? -0.3f : 0.3f);
  return a;
}

// Inputs spread apart so max windows have no ties and finite differences cross no kink.
inline NDArray DistinctArray(const TShape& s, uint64_t seed) {
  NDArray a(s);
  std::vector<int64_t> perm(static_cast<size_t>(a.Size()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, 0.1f * static_cast<float>(perm[static_cast<size_t>(i)]) - 1.0f);
  return a;
}

// Values on a grid (k * 0.1 + offset): distinct operands stay >= 0.05 apart, so no tie sits
// within a finite-difference step of a kink.
inline NDArray GridArray(const TShape& shape, uint64_t seed, double offset, int lo = -9, int hi = 9) {
  NDArray a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, static_cast<float>(dist(rng) * 0.1 + offset));
  return a;
}

// f applied to every element of x (a naive reference for element-wise ops).
inline NDArray MapNaive(const NDArray& x, const std::function<double(double)>& f) {
  NDArray y(x.shape());
  for (int64_t i = 0; i < x.Size(); ++i) y.SetFlat(i, static_cast<float>(f(x.GetFlat(i))));
  return y;
}

// The sum of every element, in double.
inline double Sum(const NDArray& a) {
  double s = 0;
  for (int64_t i = 0; i < a.Size(); ++i) s += a.GetFlat(i);
  return s;
}

// A shape seen as (outer, n, inner) around `axis`: element (o, k, i) sits at
// (o * n + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
inline AxisSplit SplitAtAxis(const TShape& s, int axis) {
  AxisSplit a;
  a.n = s[axis];
  for (int i = 0; i < axis; ++i) a.outer *= s[i];
  for (int i = axis + 1; i < s.ndim(); ++i) a.inner *= s[i];
  return a;
}

// Softmax probabilities p[o, c, i] of an (outer, k, inner) layout, as a test-side reference.
inline std::vector<double> NaiveSoftmax(const NDArray& x, int64_t outer, int64_t k, int64_t inner) {
  std::vector<double> p(static_cast<size_t>(x.Size()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double z = 0;
      for (int64_t c = 0; c < k; ++c) z += std::exp(x.GetFlat((o * k + c) * inner + i));
      for (int64_t c = 0; c < k; ++c)
        p[static_cast<size_t>((o * k + c) * inner + i)] = std::exp(x.GetFlat((o * k + c) * inner + i)) / z;
    }
  return p;
}

// Plane (n, c) of an NCHW array at pixel coordinates (y, x), interpolated as the sum over every
// pixel of the tent weights max(0, 1 - |y - i|) * max(0, 1 - |x - j|): bilinear inside, fading
// to zero within one pixel outside. Written without corner arithmetic, so it is a reference for
// the sampling ops; each test applies its op's clamping rule before calling it.
inline double TentInterpolate(const NDArray& x, int64_t n, int64_t c, double y, double xx) {
  const TShape& s = x.shape();
  const int64_t H = s[2], W = s[3];
  double v = 0;
  for (int64_t i = 0; i < H; ++i)
    for (int64_t j = 0; j < W; ++j) {
      const double w = std::max(0.0, 1 - std::fabs(y - i)) * std::max(0.0, 1 - std::fabs(xx - j));
      if (w > 0) v += w * x.GetFlat(((n * s[1] + c) * H + i) * W + j);
    }
  return v;
}

// Gradient-check options for loss heads: a loss of their own, labels not differentiated.
inline GradCheckOptions WithLoss(std::function<double(const std::vector<NDArray>&)> loss,
                                 std::vector<std::string> no_grad = {"label"}) {
  GradCheckOptions opt;
  opt.no_grad = std::move(no_grad);
  opt.loss = std::move(loss);
  opt.is_train = true;
  return opt;
}

// Spatial tuples right-aligned into three slots (d, h, w), the front filled with `fill`.
using Dims3 = std::array<int64_t, 3>;
inline Dims3 Align(const std::vector<int64_t>& v, int64_t fill) {
  Dims3 r = {fill, fill, fill};
  for (size_t i = 0; i < v.size(); ++i) r[3 - v.size() + i] = v[i];
  return r;
}

// An element-wise op on float64 inputs of one shape computed in double: output i against
// ref(values of every input at i) to 1e-12, and each input's gradient against central
// differences of ref (step 1e-6, head gradient 0.5 + 0.1 i) to 1e-8, relative to max(1, |want|).
// A kernel that computes through float32 misses both by about 1e-7.
inline void CheckFloat64Elementwise(const std::string& op, const KwArgs& params,
                                    const std::vector<std::pair<std::string, NDArray>>& inputs,
                                    const std::function<double(const std::vector<double>&)>& ref) {
  std::map<std::string, NDArray> in64;
  for (auto& kv : inputs) in64[kv.first] = kv.second.AsType(DType::kFloat64);
  auto exec = BindSingleOp(op, params, in64);
  exec->Forward(true);
  const NDArray& y = exec->outputs()[0];
  REQUIRE(y.dtype() == DType::kFloat64);
  const int64_t n = y.Size();
  auto at = [&](int64_t i) {
    std::vector<double> v;
    for (auto& kv : inputs) v.push_back(in64.at(kv.first).data<double>()[i]);
    return v;
  };
  auto close = [](double got, double want, double tol) { return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want)); };
  NDArray head(y.shape(), DType::kFloat64);
  for (int64_t i = 0; i < n; ++i) {
    INFO(op << " output " << i);
    CHECK(close(y.data<double>()[i], ref(at(i)), 1e-12));
    head.data<double>()[i] = 0.5 + 0.1 * static_cast<double>(i);
  }
  exec->Backward({head});
  const std::vector<std::string> args = exec->symbol().ListArguments();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto pos = std::find(args.begin(), args.end(), "op_" + inputs[k].first) - args.begin();
    const NDArray& g = exec->grad_arrays()[static_cast<size_t>(pos)];
    REQUIRE(g.dtype() == DType::kFloat64);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> hi = at(i), lo = at(i);
      hi[k] += 1e-6;
      lo[k] -= 1e-6;
      const double want = head.data<double>()[i] * (ref(hi) - ref(lo)) / 2e-6;
      INFO(op << " gradient of " << inputs[k].first << " at " << i << ": " << g.data<double>()[i] << " want " << want);
      CHECK(close(g.data<double>()[i], want, 1e-8));
    }
  }
}

}  // namespace symbind::test
