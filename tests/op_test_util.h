// Shared helpers for operator tests: bind one op, compare with a naive reference, and check
// gradients against central finite differences (in both write and add modes).
#pragma once
#include <catch2/catch.hpp>

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

}  // namespace symbind::test
