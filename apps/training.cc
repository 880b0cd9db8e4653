#include "training.h"

#include <chrono>

#include "progress.h"

namespace symbind::apps {

const char* const kFashionClasses[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                         "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

EpochStats TrainEpoch(Executor* exec, MNISTIter* it, int steps, KVStoreSgd* dist, SGD* sgd,
                      int epoch, bool show_progress) {
  ProgressBar bar("epoch " + std::to_string(epoch), steps);
  NDArray data = exec->arg_dict().at("data"), label = exec->arg_dict().at("softmax_label");
  it->Reset();
  auto t0 = std::chrono::steady_clock::now();
  EpochStats stats;
  while (stats.batches < steps && it->Next()) {
    it->data().CopyTo(&data);
    it->label().CopyTo(&label);
    exec->Forward(true);
    exec->Backward();
    if (dist) dist->Step();
    else sgd->Step(*exec);
    ++stats.batches;
    if (show_progress) bar.Update(stats.batches);
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

KVStoreSgd::KVStoreSgd(KVStore* kv, const Executor& exec, const SGDOptions& options)
    : kv_(kv), sgd_(options) {
  const auto grads = exec.grad_dict();
  for (auto& kv_pair : TrainedParams(exec)) {
    auto g = grads.find(kv_pair.first);
    if (g == grads.end() || g->second.is_none()) continue;
    keys_.push_back(kv_pair.first);
    weights_.push_back(kv_pair.second);
    grads_.push_back(g->second);
  }
  kv_->Init(keys_, weights_);
  std::vector<NDArray*> outs;
  for (auto& w : weights_) outs.push_back(&w);
  kv_->Pull(keys_, outs);
  sgd_.options().rescale_grad = 1.0f / static_cast<float>(kv_->num_workers());
  kv_->SetUpdater([this](const std::string& key, const NDArray& sum, NDArray* stored) {
    sgd_.Update(key, *stored, sum);
  });
}

void KVStoreSgd::Step() {
  kv_->Push(keys_, grads_);
  std::vector<NDArray*> outs;
  for (auto& w : weights_) outs.push_back(&w);
  kv_->Pull(keys_, outs);
}

std::map<std::string, NDArray> TrainedParams(const Executor& exec) {
  const std::map<std::string, NDArray> bound = exec.arg_dict();
  std::map<std::string, NDArray> params;
  for (auto& name : ClassifyArguments(exec.graph()).parameters) params[name] = bound.at(name);
  return params;
}

Evaluation Evaluate(const Symbol& net, const std::map<std::string, NDArray>& args,
                    const std::map<std::string, NDArray>& aux, const MNISTData& data, int batch,
                    bool flat) {
  Predictor predictor(net, args, aux, {{"data", flat ? TShape({batch, 784}) : TShape({batch, 1, 28, 28})}});
  NDArray input = predictor.Input("data");
  MNISTIter it(data, batch, false, 0, flat);
  Evaluation ev;
  ev.confusion.assign(10, std::vector<int>(10, 0));
  int64_t correct = 0, total = 0;
  while (it.Next()) {
    it.data().CopyTo(&input);
    predictor.Forward();
    const NDArray& prob = predictor.Output(0);
    const int64_t classes = prob.shape()[1];
    const float* p = prob.fdata();
    NDArray label = it.label();
    for (int64_t r = 0; r < batch - it.pad(); ++r) {
      int best = 0;
      for (int c = 1; c < classes; ++c)
        if (p[r * classes + c] > p[r * classes + best]) best = c;
      int truth = static_cast<int>(label.GetFlat(r));
      if (truth >= 0 && truth < 10 && best < 10) ++ev.confusion[truth][best];
      correct += best == truth;
      ++total;
      ev.predicted.push_back(best);
      ev.confidence.push_back(p[r * classes + best]);
    }
  }
  ev.accuracy = total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
  return ev;
}

}  // namespace symbind::apps
