// MXNet cpp-package compatibility: parameter initializers. Initializer::operator() picks the
// rule from the name as MXNet does: "upsampling*" bilinear, "*bias" zero, "*gamma" one,
// "*beta" zero, "*weight" InitWeight, "*moving_mean"/"*moving_inv_var"/"*moving_avg" zero,
// "*moving_var" one, anything else InitDefault. Random initializers (Uniform, Normal, Xavier,
// MSRAPrelu) draw weights (and unrecognised names); Constant/Zero/One fill every array.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"

namespace mxnet {
namespace cpp {

namespace detail {
// Xavier's scale for an array of `shape` (libmxnet.so): sqrt(magnitude / factor), factor
// from fan_in and fan_out as Xavier's comment below says; factor_type: Xavier::FactorType.
float XavierScale(const std::vector<mx_uint>& shape, int factor_type, float magnitude);
}  // namespace detail

class Initializer {
 public:
  virtual ~Initializer() = default;
  static bool StringStartWith(const std::string& name, const std::string& check_str) {
    return name.size() >= check_str.size() && name.compare(0, check_str.size(), check_str) == 0;
  }
  static bool StringEndWith(const std::string& name, const std::string& check_str) {
    return name.size() >= check_str.size() &&
           name.compare(name.size() - check_str.size(), check_str.size(), check_str) == 0;
  }
  virtual void operator()(const std::string& name, NDArray* arr) {
    if (StringStartWith(name, "upsampling")) InitBilinear(arr);
    else if (StringEndWith(name, "bias")) InitBias(arr);
    else if (StringEndWith(name, "gamma")) InitGamma(arr);
    else if (StringEndWith(name, "beta")) InitBeta(arr);
    else if (StringEndWith(name, "weight")) InitWeight(arr);
    else if (StringEndWith(name, "moving_mean")) InitZero(arr);
    else if (StringEndWith(name, "moving_var")) InitOne(arr);
    else if (StringEndWith(name, "moving_inv_var")) InitZero(arr);
    else if (StringEndWith(name, "moving_avg")) InitZero(arr);
    else InitDefault(arr);
  }

 protected:
  // Bilinear upsampling kernel over the last two axes.
  virtual void InitBilinear(NDArray* arr) {
    Shape shape(arr->GetShape());
    std::vector<float> weight(shape.Size(), 0);
    int f = static_cast<int>(std::ceil(shape[3] / 2.0));
    float c = (2 * f - 1 - f % 2) / (2.f * f);
    for (size_t i = 0; i < shape.Size(); ++i) {
      int x = static_cast<int>(i % shape[3]);
      int y = static_cast<int>((i / shape[3]) % shape[2]);
      weight[i] = (1 - std::abs(x / static_cast<float>(f) - c)) * (1 - std::abs(y / static_cast<float>(f) - c));
    }
    arr->SyncCopyFromCPU(weight);
  }
  virtual void InitZero(NDArray* arr) { (*arr) = 0.0f; }
  virtual void InitOne(NDArray* arr) { (*arr) = 1.0f; }
  virtual void InitBias(NDArray* arr) { (*arr) = 0.0f; }
  virtual void InitGamma(NDArray* arr) { (*arr) = 1.0f; }
  virtual void InitBeta(NDArray* arr) { (*arr) = 0.0f; }
  virtual void InitWeight(NDArray*) {}
  virtual void InitDefault(NDArray*) {}
};

class Constant : public Initializer {
 public:
  explicit Constant(float value) : value(value) {}
  void operator()(const std::string&, NDArray* arr) override { (*arr) = value; }

 protected:
  float value;
};

class Zero : public Constant {
 public:
  Zero() : Constant(0.0f) {}
};

class One : public Constant {
 public:
  One() : Constant(1.0f) {}
};

class Uniform : public Initializer {
 public:
  explicit Uniform(float scale) : Uniform(-scale, scale) {}
  Uniform(float begin, float end) : begin(begin), end(end) {}

 protected:
  void InitWeight(NDArray* arr) override { NDArray::SampleUniform(begin, end, arr); }
  void InitDefault(NDArray* arr) override { NDArray::SampleUniform(begin, end, arr); }
  float begin, end;
};

class Normal : public Initializer {
 public:
  Normal(float mu, float sigma) : mu(mu), sigma(sigma) {}

 protected:
  void InitWeight(NDArray* arr) override { NDArray::SampleGaussian(mu, sigma, arr); }
  void InitDefault(NDArray* arr) override { NDArray::SampleGaussian(mu, sigma, arr); }
  float mu, sigma;
};

class Bilinear : public Initializer {
 public:
  Bilinear() {}
  void operator()(const std::string&, NDArray* arr) override { InitBilinear(arr); }
};

// scale = sqrt(magnitude / factor), factor from fan_in = shape[1] * prod(shape[2:]) and
// fan_out = shape[0] * prod(shape[2:]); uniform in [-scale, scale] or N(0, scale).
class Xavier : public Initializer {
 public:
  enum RandType { gaussian, uniform } rand_type;
  enum FactorType { avg, in, out } factor_type;
  float magnitude;
  Xavier(RandType rand_type = gaussian, FactorType factor_type = avg, float magnitude = 3)
      : rand_type(rand_type), factor_type(factor_type), magnitude(magnitude) {}

 protected:
  void InitWeight(NDArray* arr) override {
    const float scale = detail::XavierScale(arr->GetShape(), factor_type, magnitude);
    if (rand_type == uniform) NDArray::SampleUniform(-scale, scale, arr);
    else NDArray::SampleGaussian(0, scale, arr);
  }
  void InitDefault(NDArray* arr) override { InitWeight(arr); }
};

class MSRAPrelu : public Xavier {
 public:
  explicit MSRAPrelu(FactorType factor_type = avg, float slope = 0.25f)
      : Xavier(gaussian, factor_type, 2.f / (1 + slope * slope)) {}
};

}  // namespace cpp
}  // namespace mxnet
