// Evaluation and the pretrained demo for symbind-lenet.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <symbind/core/symbol.h>
#include <symbind/io/mnist.h>

namespace symbind::apps {

struct Evaluation {
  double accuracy = 0;
  std::vector<std::vector<int>> confusion;  // [true][predicted]
  std::vector<int> predicted;               // per test image
  std::vector<float> confidence;            // probability of the prediction
};

// Classifies every image of `data` with `net` bound to the given parameters.
Evaluation Evaluate(const Symbol& net, const std::map<std::string, NDArray>& args,
                    const std::map<std::string, NDArray>& aux, const MNISTData& data, int batch);

// Loads PREFIX-symbol.json / PREFIX-EPOCH.params, classifies the Fashion-MNIST test set, and
// prints accuracy, the confusion matrix and sample predictions; writes a PNG grid to `png`.
int RunDemo(const std::string& prefix, int epoch, const std::string& data_dir,
            const std::string& png, int samples);

extern const char* const kFashionClasses[10];

}  // namespace symbind::apps
