#include "initializer.h"

#include <cmath>

#include <symbind/core/error.h>
#include <symbind/executor/executor.h>

namespace symbind {

namespace {

float* FloatData(const NDArray& a, const char* who) {
  if (a.dtype() != DType::kFloat32)
    throw TypeError(StrCat(who, ": array must be float32, got ", DTypeName(a.dtype())));
  return a.fdata();
}

template <typename Distribution>
void FillFrom(const NDArray& a, Distribution dist, std::mt19937_64& rng, const char* who) {
  float* x = FloatData(a, who);
  for (int64_t i = 0, n = a.Size(); i < n; ++i) x[i] = dist(rng);
}

}  // namespace

void FillUniform(const NDArray& a, float low, float high, std::mt19937_64& rng) {
  FillFrom(a, std::uniform_real_distribution<float>(low, high), rng, "FillUniform");
}

void FillGaussian(const NDArray& a, float mean, float stddev, std::mt19937_64& rng) {
  FillFrom(a, std::normal_distribution<float>(mean, stddev), rng, "FillGaussian");
}

float Xavier::Scale(const TShape& shape) const {
  double receptive = 1.0;
  for (int i = 2; i < shape.ndim(); ++i) receptive *= static_cast<double>(shape[i]);
  const double fan_out = shape.ndim() > 0 ? static_cast<double>(shape[0]) * receptive : 1.0;
  const double fan_in = shape.ndim() > 1 ? static_cast<double>(shape[1]) * receptive : fan_out;
  const double divisor = factor == Factor::kIn    ? fan_in
                         : factor == Factor::kOut ? fan_out
                                                  : (fan_in + fan_out) / 2.0;
  return static_cast<float>(std::sqrt(magnitude / divisor));
}

void Xavier::Fill(const NDArray& a, std::mt19937_64& rng) const {
  const float scale = Scale(a.shape());
  if (distribution == Distribution::kUniform) FillUniform(a, -scale, scale, rng);
  else FillGaussian(a, 0.0f, scale, rng);
}

void InitParameters(const Executor& exec, const Xavier& weight_init, std::mt19937_64& rng) {
  auto init = [&](const std::string& name, const NDArray& a) {
    if (EndsWith(name, "_weight")) weight_init.Fill(a, rng);
    else if (EndsWith(name, "_bias") || EndsWith(name, "_beta") || EndsWith(name, "moving_mean"))
      a.Fill(0.0f);
    else if (EndsWith(name, "_gamma") || EndsWith(name, "moving_var"))
      a.Fill(1.0f);
  };
  for (const auto& kv : exec.arg_dict()) init(kv.first, kv.second);
  for (const auto& kv : exec.aux_dict()) init(kv.first, kv.second);
}

}  // namespace symbind
