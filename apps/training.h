// Training helpers shared by the sample apps: initialisation, SGD, evaluation on (Fashion-)MNIST.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <symbind/io/mnist.h>
#include <symbind/predict/predictor.h>

namespace symbind::apps {

extern const char* const kFashionClasses[10];

// Xavier-uniform "*_weight" arrays (bound sqrt(6 / (fan_in + fan_out))), zero "*_bias".
void InitXavier(const Executor& exec, uint64_t seed);

// One SGD step with momentum and weight decay on every argument with a gradient:
// m = momentum * m - lr * (g + wd * w); w += m. `state` holds m, created on first use.
void SgdStep(const Executor& exec, float lr, float momentum, float wd, std::vector<NDArray>* state);

// The parameters of a trained executor (ClassifyArguments), without data and label inputs.
std::map<std::string, NDArray> TrainedParams(const Executor& exec);

struct Evaluation {
  double accuracy = 0;
  std::vector<std::vector<int>> confusion;  // [true][predicted]
  std::vector<int> predicted;               // per image
  std::vector<float> confidence;            // probability of the prediction
};

// Classifies every image of `data` with `net` bound to the given parameters. Images are fed
// as (batch, 784) when `flat`, else (batch, 1, 28, 28).
Evaluation Evaluate(const Symbol& net, const std::map<std::string, NDArray>& args,
                    const std::map<std::string, NDArray>& aux, const MNISTData& data, int batch,
                    bool flat = false);

}  // namespace symbind::apps
