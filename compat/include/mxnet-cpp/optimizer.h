// MXNet cpp-package compatibility: optimizers with MXNet's update rules (sgd_update,
// sgd_mom_update, nag_mom_update, adam_update, rmspropalex_update, signsgd/signum_update,
// and the cpp-package's AdaGrad and AdaDelta), state kept per weight index.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/lr_scheduler.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/operator.h"

namespace mxnet {
namespace cpp {

// The state of SGDOptimizer's updates: defined inside libmxnet.so (compat/compat_internal.h).
struct SGDState;

class Optimizer {
 public:
  explicit Optimizer(unsigned begin_num_update = 0);
  virtual ~Optimizer();
  virtual std::string GetType() const = 0;
  // Common parameters: lr, wd, rescale_grad, clip_gradient; per optimizer: momentum, beta1,
  // beta2, epsilon, gamma1, gamma2, eps, rho, wd_lh, clip_weights.
  template <typename T>
  Optimizer* SetParam(const std::string& name, const T& value) {
    params_[name] = detail::ParamString(value);
    return this;
  }
  Optimizer* SetLRScheduler(std::unique_ptr<LRScheduler> lr_scheduler);
  // Updates `weight` in place from `grad`; state (momentum, ...) is kept per `index`.
  virtual void Update(int index, NDArray weight, NDArray grad) = 0;
  // Deprecated MXNet form: sets lr and wd first.
  void Update(int index, NDArray weight, NDArray grad, mx_float lr, mx_float wd);
  // "key=value" lines, opt_type included.
  std::string Serialize() const;

 protected:
  std::map<std::string, std::string> params_;
  std::map<int, unsigned> count_;
  unsigned begin_num_update_, num_update_;
  std::unique_ptr<LRScheduler> lrScheduler_;
  unsigned UpdateCount_(int index);
  float GetLR_(int index);
  float GetWD_(int index);
  float Param_(const std::string& name, float fallback) const;
  bool HasParam_(const std::string& name) const { return params_.count(name) > 0; }
  virtual void CreateState_(int index, NDArray weight);
  // The start of an update: weight and gradient checked to match (`who` names the optimizer in
  // the error), lr (read before the step is counted, as schedulers expect) and wd, the step
  // counted, rescale_grad and clip_gradient (-1: none).
  struct Step_ {
    float* w;
    const float* g;
    int64_t n;
    float lr, wd, rescale, clip;
    unsigned count;
  };
  Step_ BeginUpdate_(const char* who, int index, NDArray& weight, const NDArray& grad);
};

typedef std::function<Optimizer*()> OptimizerCreator;

class OptimizerRegistry {
 public:
  // A new optimizer (the caller deletes it), or nullptr for an unknown name. Known: sgd,
  // ccsgd, nag, signum, adam, rmsprop, adagrad, adadelta.
  static Optimizer* Find(const std::string& name);
  static int __REGISTER__(const std::string& name, OptimizerCreator creator);

 private:
  static std::map<std::string, OptimizerCreator>& cmap();
  OptimizerRegistry() = delete;
};

#define MXNETCPP_REGISTER_OPTIMIZER(Name, OptimizerType)                   \
  ::mxnet::cpp::OptimizerRegistry::__REGISTER__(#Name, [](){ return new OptimizerType(); })

// sgd_update, or sgd_mom_update with a nonzero "momentum".
class SGDOptimizer : public Optimizer {
 public:
  explicit SGDOptimizer(unsigned begin_num_update = 0);
  std::string GetType() const override { return "sgd"; }
  void Update(int index, NDArray weight, NDArray grad) override;

 protected:
  std::map<int, NDArray> mom_;  // nag's momentum

 private:
  std::shared_ptr<SGDState> sgd_;
};

// nag_mom_update (sgd_update without momentum).
class NAGOptimizer : public SGDOptimizer {
 public:
  explicit NAGOptimizer(unsigned begin_num_update = 0) : SGDOptimizer(begin_num_update) {}
  std::string GetType() const override { return "nag"; }
  void Update(int index, NDArray weight, NDArray grad) override;
};

// signum_update (momentum, default 0.9; wd_lh) or signsgd_update with momentum 0.
class SignumOptimizer : public Optimizer {
 public:
  explicit SignumOptimizer(unsigned begin_num_update = 0);
  std::string GetType() const override { return "signum"; }
  void Update(int index, NDArray weight, NDArray grad) override;

 private:
  std::map<int, NDArray> mom_;
};

// rmspropalex_update: gamma1 = 0.9, gamma2 = 0.9, epsilon = 1e-8.
class RMSPropOptimizer : public Optimizer {
 public:
  explicit RMSPropOptimizer(unsigned begin_num_update = 0);
  std::string GetType() const override { return "rmsprop"; }
  void Update(int index, NDArray weight, NDArray grad) override;

 private:
  std::map<int, NDArray> n_, g_, delta_;
};

// adam_update with the bias correction folded into lr: beta1 = 0.9, beta2 = 0.999,
// epsilon = 1e-8.
class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(unsigned begin_num_update = 0);
  std::string GetType() const override { return "adam"; }
  void Update(int index, NDArray weight, NDArray grad) override;

 private:
  std::map<int, NDArray> mean_, var_;
};

// history += g^2; w -= lr * (g / sqrt(history + eps) + wd * w); eps = 1e-7.
class AdaGradOptimizer : public Optimizer {
 public:
  explicit AdaGradOptimizer(unsigned begin_num_update = 0);
  std::string GetType() const override { return "adagrad"; }
  void Update(int index, NDArray weight, NDArray grad) override;

 private:
  std::map<int, NDArray> history_;
};

// rho = 0.9, epsilon = 1e-5.
class AdaDeltaOptimizer : public Optimizer {
 public:
  explicit AdaDeltaOptimizer(unsigned begin_num_update = 0);
  std::string GetType() const override { return "adadelta"; }
  void Update(int index, NDArray weight, NDArray grad) override;

 private:
  std::map<int, NDArray> acc_g_, acc_delta_;
};

}  // namespace cpp
}  // namespace mxnet
