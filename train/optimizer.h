// Stochastic gradient descent for training loops, with the update rules of MXNet's
// sgd_update and sgd_mom_update operators (it runs those registered kernels, so the apps,
// the benchmarks and the mxnet-cpp layer share one implementation):
//
//   SGD sgd({.lr = 0.05f, .momentum = 0.9f, .wd = 1e-4f});
//   for (...) { exec->Forward(true); exec->Backward(); sgd.Step(*exec); }
//
//   momentum == 0: w = (1 - lr*wd) * w - lr * clip(rescale_grad * g)
//   otherwise:     m = momentum*m - lr*wd*w - lr*clip(rescale_grad * g);  w = w + m
// clip limits to [-clip_gradient, clip_gradient] when clip_gradient >= 0.
#pragma once
#include <map>
#include <string>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>

namespace symbind {

class Executor;

struct SGDOptions {
  float lr = 0.01f;
  float momentum = 0.0f;
  float wd = 0.0f;
  float rescale_grad = 1.0f;
  float clip_gradient = -1.0f;
};

class SGD {
 public:
  explicit SGD(const SGDOptions& options = {});

  // Options may change between updates (learning-rate schedules).
  SGDOptions& options() { return options_; }

  // Updates `weight` in place from `grad`; the momentum of `key` is created on first use.
  // Throws ShapeError when the sizes differ, TypeError when an array is not float32.
  void Update(const std::string& key, const NDArray& weight, const NDArray& grad);

  // Updates every argument of `exec` that has a gradient, keyed by argument name.
  void Step(const Executor& exec);

 private:
  const NodeAttrs& Attrs(bool with_momentum);

  SGDOptions options_;
  SGDOptions parsed_for_[2];
  NodeAttrs attrs_[2];  // sgd_update, sgd_mom_update, parsed for parsed_for_
  std::map<std::string, NDArray> momentum_;
};

}  // namespace symbind
