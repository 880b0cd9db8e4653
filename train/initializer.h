// Weight initialisation with MXNet's rules (mx.init.Xavier and the name conventions of
// mx.init.Initializer), for training loops and the mxnet-cpp layer:
//
//   std::mt19937_64 rng(seed);
//   InitParameters(*exec, Xavier{}, rng);   // *_weight Xavier, *_bias 0, *_gamma 1, ...
#pragma once
#include <random>

#include <symbind/core/ndarray.h>

namespace symbind {

class Executor;

// Fills float32 arrays from `rng`, element by element in order (reproducible per seed);
// another dtype throws TypeError.
void FillUniform(const NDArray& a, float low, float high, std::mt19937_64& rng);
void FillGaussian(const NDArray& a, float mean, float stddev, std::mt19937_64& rng);

// Xavier/Glorot: scale = sqrt(magnitude / factor), where with receptive = prod(shape[2:])
// fan_in = shape[1] * receptive and fan_out = shape[0] * receptive, and factor is their
// average, fan_in or fan_out; values uniform in [-scale, scale] or N(0, scale).
// The defaults (uniform, avg, 3) give Glorot's bound sqrt(6 / (fan_in + fan_out)). A vector
// (a bias given to Xavier) counts its length as both fans.
struct Xavier {
  enum class Distribution { kUniform, kGaussian };
  enum class Factor { kAvg, kIn, kOut };
  Distribution distribution = Distribution::kUniform;
  Factor factor = Factor::kAvg;
  float magnitude = 3.0f;

  float Scale(const TShape& shape) const;
  void Fill(const NDArray& a, std::mt19937_64& rng) const;
};

// MXNet's initializer by argument name: *_weight by `weight_init`, *_bias, *_beta,
// *moving_mean zero, *_gamma, *moving_var one; other arrays (data, labels) are left alone.
// Covers the arguments, then the aux states, of `exec`, each in name order.
void InitParameters(const Executor& exec, const Xavier& weight_init, std::mt19937_64& rng);

}  // namespace symbind
