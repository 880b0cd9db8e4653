#include "mxnet-cpp/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

namespace {

struct Arrays {
  float* w;
  const float* g;
  int64_t n;
};

Arrays Check(const char* who, NDArray& weight, const NDArray& grad) {
  if (weight.IsNone() || grad.IsNone())
    throw symbind::Error(std::string(who) + " optimizer: empty weight or gradient array");
  if (compat::Native(weight).Size() != compat::Native(grad).Size())
    throw symbind::Error(std::string(who) + " optimizer: weight " + compat::Native(weight).shape().ToString() +
                             " and gradient " + compat::Native(grad).shape().ToString() + " differ in size");
  compat::Native(weight).MarkWritten();  // the update writes it through the pointer
  return {compat::Native(weight).fdata(), compat::Native(grad).fdata(), compat::Native(weight).Size()};
}

float* State(std::map<int, NDArray>& states, int index, const NDArray& weight) {
  auto it = states.find(index);
  if (it == states.end())
    it = states.emplace(index, compat::Wrap(symbind::NDArray(compat::Native(weight).shape()))).first;
  return compat::Native(it->second).fdata();
}

inline float Clip(float x, float c) { return c >= 0 ? std::max(-c, std::min(c, x)) : x; }
inline float Sign(float x) { return static_cast<float>((x > 0) - (x < 0)); }

}  // namespace

Optimizer::Optimizer(unsigned begin_num_update)
    try : begin_num_update_(begin_num_update), num_update_(begin_num_update) {} SYMBIND_CPP_RECORD_ERRORS
Optimizer::~Optimizer() = default;

Optimizer* Optimizer::SetLRScheduler(std::unique_ptr<LRScheduler> lr_scheduler) try {
  lrScheduler_ = std::move(lr_scheduler);
  if (lrScheduler_) lrScheduler_->SetLR(Param_("lr", 0.01f));
  return this;
} SYMBIND_CPP_RECORD_ERRORS

void Optimizer::Update(int index, NDArray weight, NDArray grad, mx_float lr, mx_float wd) try {
  SetParam("lr", lr);
  SetParam("wd", wd);
  Update(index, weight, grad);
} SYMBIND_CPP_RECORD_ERRORS

std::string Optimizer::Serialize() const try {
  auto params = params_;
  params.emplace("opt_type", GetType());
  std::string s;
  for (auto& kv : params) s += (s.empty() ? "" : "\n") + kv.first + "=" + kv.second;
  return s;
} SYMBIND_CPP_RECORD_ERRORS

unsigned Optimizer::UpdateCount_(int index) try {
  if (!count_.count(index)) count_.emplace(index, begin_num_update_);
  unsigned c = ++count_[index];
  num_update_ = std::max(num_update_, c);
  return c;
} SYMBIND_CPP_RECORD_ERRORS

float Optimizer::GetLR_(int) try {
  if (lrScheduler_) return lrScheduler_->GetLR(num_update_);
  return Param_("lr", 0.01f);
} SYMBIND_CPP_RECORD_ERRORS
float Optimizer::GetWD_(int) try { return Param_("wd", 0.0f); } SYMBIND_CPP_RECORD_ERRORS

float Optimizer::Param_(const std::string& name, float fallback) const try {
  auto it = params_.find(name);
  if (it == params_.end()) return fallback;
  try {
    return std::stof(it->second);
  } catch (const std::exception&) {
    throw symbind::Error(GetType() + " optimizer: parameter " + name + "=" + it->second +
                             " is not a number");
  }
} SYMBIND_CPP_RECORD_ERRORS

void Optimizer::CreateState_(int, NDArray) try {} SYMBIND_CPP_RECORD_ERRORS

Optimizer::Step_ Optimizer::BeginUpdate_(const char* who, int index, NDArray& weight,
                                         const NDArray& grad) try {
  const Arrays a = Check(who, weight, grad);
  const float lr = GetLR_(index), wd = GetWD_(index);
  const unsigned count = UpdateCount_(index);
  return {a.w, a.g, a.n, lr, wd, Param_("rescale_grad", 1.0f), Param_("clip_gradient", -1.0f), count};
} SYMBIND_CPP_RECORD_ERRORS

std::map<std::string, OptimizerCreator>& OptimizerRegistry::cmap() try {
  static std::map<std::string, OptimizerCreator> m = {
      {"sgd", [] { return new SGDOptimizer(); }},
      {"ccsgd", [] { return new SGDOptimizer(); }},
      {"nag", [] { return new NAGOptimizer(); }},
      {"signum", [] { return new SignumOptimizer(); }},
      {"rmsprop", [] { return new RMSPropOptimizer(); }},
      {"adam", [] { return new AdamOptimizer(); }},
      {"adagrad", [] { return new AdaGradOptimizer(); }},
      {"adadelta", [] { return new AdaDeltaOptimizer(); }},
  };
  return m;
} SYMBIND_CPP_RECORD_ERRORS

Optimizer* OptimizerRegistry::Find(const std::string& name) try {
  auto it = cmap().find(name);
  return it == cmap().end() ? nullptr : it->second();
} SYMBIND_CPP_RECORD_ERRORS

int OptimizerRegistry::__REGISTER__(const std::string& name, OptimizerCreator creator) try {
  if (cmap().count(name)) throw symbind::Error(name + " already registered");
  cmap().emplace(name, std::move(creator));
  return 0;
} SYMBIND_CPP_RECORD_ERRORS

SGDOptimizer::SGDOptimizer(unsigned begin_num_update)
    try : Optimizer(begin_num_update), sgd_(std::make_shared<SGDState>()) {} SYMBIND_CPP_RECORD_ERRORS

void SGDOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  const Step_ s = BeginUpdate_("sgd", index, weight, grad);
  symbind::SGDOptions& o = sgd_->sgd.options();
  o.lr = s.lr;
  o.wd = s.wd;
  o.rescale_grad = s.rescale;
  o.clip_gradient = s.clip;
  o.momentum = Param_("momentum", 0.0f);
  sgd_->sgd.Update(std::to_string(index), compat::Native(weight), compat::Native(grad));
} SYMBIND_CPP_RECORD_ERRORS

void NAGOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  if (!HasParam_("momentum")) return SGDOptimizer::Update(index, weight, grad);
  const Step_ s = BeginUpdate_("nag", index, weight, grad);
  float momentum = Param_("momentum", 0.0f);
  float* mom = State(mom_, index, weight);
  for (int64_t i = 0; i < s.n; ++i) {  // nag_mom_update
    float g = Clip(s.rescale * s.g[i], s.clip) + s.wd * s.w[i];
    mom[i] = momentum * mom[i] + g;
    s.w[i] = s.w[i] - s.lr * (momentum * mom[i] + g);
  }
} SYMBIND_CPP_RECORD_ERRORS

SignumOptimizer::SignumOptimizer(unsigned begin_num_update) try : Optimizer(begin_num_update) {
  SetParam("momentum", 0.9f);
  SetParam("wd_lh", 0.0f);
} SYMBIND_CPP_RECORD_ERRORS

void SignumOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  const Step_ s = BeginUpdate_("signum", index, weight, grad);
  float momentum = Param_("momentum", 0.9f), wd_lh = Param_("wd_lh", 0.0f);
  if (momentum == 0.0f) {  // signsgd_update
    for (int64_t i = 0; i < s.n; ++i) s.w[i] = (1.f - s.lr * s.wd) * s.w[i] - s.lr * Sign(s.g[i]);
    return;
  }
  float* mom = State(mom_, index, weight);
  for (int64_t i = 0; i < s.n; ++i) {  // signum_update
    float g = Clip(s.rescale * s.g[i], s.clip) + s.wd * s.w[i];
    mom[i] = momentum * mom[i] - (1 - momentum) * g;
    s.w[i] = (1.f - s.lr * wd_lh) * s.w[i] + s.lr * Sign(mom[i]);
  }
} SYMBIND_CPP_RECORD_ERRORS

RMSPropOptimizer::RMSPropOptimizer(unsigned begin_num_update) try : Optimizer(begin_num_update) {
  SetParam("gamma1", 0.9f);
  SetParam("gamma2", 0.9f);
  SetParam("epsilon", 1e-8);
} SYMBIND_CPP_RECORD_ERRORS

void RMSPropOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  const Step_ s = BeginUpdate_("rmsprop", index, weight, grad);
  float g1 = Param_("gamma1", 0.9f), g2 = Param_("gamma2", 0.9f), eps = Param_("epsilon", 1e-8f);
  float clip_w = Param_("clip_weights", -1.0f);
  float* n = State(n_, index, weight);
  float* g = State(g_, index, weight);
  float* d = State(delta_, index, weight);
  for (int64_t i = 0; i < s.n; ++i) {  // rmspropalex_update
    float gr = Clip(s.rescale * s.g[i] + s.wd * s.w[i], s.clip);
    n[i] = (1.f - g1) * gr * gr + g1 * n[i];
    g[i] = (1.f - g1) * gr + g1 * g[i];
    d[i] = g2 * d[i] - s.lr * gr / std::sqrt(n[i] - g[i] * g[i] + eps);
    s.w[i] = Clip(s.w[i] + d[i], clip_w);
  }
} SYMBIND_CPP_RECORD_ERRORS

AdamOptimizer::AdamOptimizer(unsigned begin_num_update) try : Optimizer(begin_num_update) {
  SetParam("beta1", 0.9f);
  SetParam("beta2", 0.999f);
  SetParam("epsilon", 1e-8);
} SYMBIND_CPP_RECORD_ERRORS

void AdamOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  const Step_ s = BeginUpdate_("adam", index, weight, grad);
  const float t = static_cast<float>(s.count);
  float b1 = Param_("beta1", 0.9f), b2 = Param_("beta2", 0.999f), eps = Param_("epsilon", 1e-8f);
  const float lr = s.lr * (std::sqrt(1.0f - std::pow(b2, t)) / (1.0f - std::pow(b1, t)));
  float* mean = State(mean_, index, weight);
  float* var = State(var_, index, weight);
  for (int64_t i = 0; i < s.n; ++i) {  // adam_update
    float g = Clip(s.rescale * s.g[i] + s.wd * s.w[i], s.clip);
    mean[i] = b1 * mean[i] + (1.f - b1) * g;
    var[i] = b2 * var[i] + (1.f - b2) * g * g;
    s.w[i] = s.w[i] - lr * mean[i] / (std::sqrt(var[i]) + eps);
  }
} SYMBIND_CPP_RECORD_ERRORS

AdaGradOptimizer::AdaGradOptimizer(unsigned begin_num_update) try : Optimizer(begin_num_update) {
  SetParam("eps", 1e-7);
} SYMBIND_CPP_RECORD_ERRORS

void AdaGradOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  const Step_ s = BeginUpdate_("adagrad", index, weight, grad);
  float eps = Param_("eps", 1e-7f);
  float* h = State(history_, index, weight);
  for (int64_t i = 0; i < s.n; ++i) {
    float g = Clip(s.g[i] * s.rescale, s.clip);
    h[i] += g * g;
    s.w[i] -= (g / std::sqrt(h[i] + eps) + s.w[i] * s.wd) * s.lr;
  }
} SYMBIND_CPP_RECORD_ERRORS

AdaDeltaOptimizer::AdaDeltaOptimizer(unsigned begin_num_update) try : Optimizer(begin_num_update) {
  SetParam("rho", 0.90f);
  SetParam("epsilon", 1e-5);
} SYMBIND_CPP_RECORD_ERRORS

void AdaDeltaOptimizer::Update(int index, NDArray weight, NDArray grad) try {
  auto a = Check("adadelta", weight, grad);
  float wd = GetWD_(index);
  UpdateCount_(index);
  float rho = Param_("rho", 0.9f), eps = Param_("epsilon", 1e-5f), rescale = Param_("rescale_grad", 1.0f);
  float clip = Param_("clip_gradient", -1.0f);
  float* acc_g = State(acc_g_, index, weight);
  float* acc_d = State(acc_delta_, index, weight);
  for (int64_t i = 0; i < a.n; ++i) {
    float g = Clip(a.g[i] * rescale, clip);
    acc_g[i] = acc_g[i] * rho + g * g * (1.0f - rho);
    float delta = std::sqrt(acc_d[i] + eps) / std::sqrt(acc_g[i] + eps) * g;
    acc_d[i] = acc_d[i] * rho + delta * delta * (1.0f - rho);
    a.w[i] = a.w[i] * (1.0f - wd) - delta;
  }
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
