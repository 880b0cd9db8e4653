// Training helpers shared by the sample apps: initialisation, SGD, evaluation on (Fashion-)MNIST.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <symbind/io/mnist.h>
#include <symbind/predict/predictor.h>
#include <symbind/train/initializer.h>
#include <symbind/train/kvstore.h>
#include <symbind/train/optimizer.h>

namespace symbind::apps {

extern const char* const kFashionClasses[10];

// Data-parallel SGD through a KVStore (the apps' --kvstore): the constructor stores the
// executor's parameters (with dist_sync, rank 0's on every worker, pulled back into the
// executor); Step() pushes every gradient, the store sums them over the workers and runs
// the SGD update on sum / num_workers on each worker, so a step equals one SGD step on the
// combined batch of all workers; then the new weights are pulled into the executor.
class KVStoreSgd {
 public:
  KVStoreSgd(KVStore* kv, const Executor& exec, const SGDOptions& options);
  KVStoreSgd(const KVStoreSgd&) = delete;  // the store's updater points at this object
  KVStoreSgd& operator=(const KVStoreSgd&) = delete;
  void Step();

 private:
  KVStore* kv_;
  std::vector<std::string> keys_;
  std::vector<NDArray> weights_, grads_;
  SGD sgd_;
};

// One training epoch of at most `steps` batches from `it` (rewound first): each batch is
// copied into the executor's "data" and "softmax_label", run forward and backward, then the
// weights are updated through `dist` when given, else by `sgd`. A progress bar is drawn when
// `show_progress`. Returns the batches run and the seconds taken.
struct EpochStats {
  int batches = 0;
  double seconds = 0;
};
EpochStats TrainEpoch(Executor* exec, MNISTIter* it, int steps, KVStoreSgd* dist, SGD* sgd,
                      int epoch, bool show_progress);

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
