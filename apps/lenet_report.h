// Evaluation and the pretrained demo for symbind-lenet.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "training.h"

namespace symbind::apps {

// Loads PREFIX-symbol.json / PREFIX-EPOCH.params, classifies the Fashion-MNIST test set, and
// prints accuracy, the confusion matrix and sample predictions; writes a PNG grid to `png`
// unless it is empty.
int RunDemo(const std::string& prefix, int epoch, const std::string& data_dir,
            const std::string& png, int samples);

}  // namespace symbind::apps
