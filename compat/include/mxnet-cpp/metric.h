// MXNet cpp-package compatibility: evaluation metrics (accumulated over Update calls).
#pragma once
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"

namespace mxnet {
namespace cpp {

class EvalMetric {
 public:
  explicit EvalMetric(const std::string& metric_name, int num = 0) : name(metric_name), num(num) {}
  virtual ~EvalMetric() = default;
  virtual void Update(NDArray labels, NDArray preds) = 0;
  void Reset() {
    num_inst = 0;
    sum_metric = 0.0f;
  }
  float Get() { return sum_metric / num_inst; }
  void GetNameValue() {}
  const std::string& GetName() const { return name; }

 protected:
  std::string name;
  int num;
  float sum_metric = 0.0f;
  int num_inst = 0;

  static void CheckLabelShapes(NDArray labels, NDArray preds, bool strict = false) {
    if (strict) {
      if (labels.GetShape() != preds.GetShape())
        throw dmlc::Error("metric: label and prediction shapes differ");
    } else if (labels.Size() != preds.Size()) {
      throw dmlc::Error("metric: " + std::to_string(labels.Size()) + " labels for " +
                               std::to_string(preds.Size()) + " predictions");
    }
  }
  // Mean of |pred - label| or (pred - label)^2.
  static float MeanError(NDArray labels, NDArray preds, bool squared) {
    CheckLabelShapes(labels, preds);
    std::vector<mx_float> pred = Values(preds), label = Values(labels);
    float sum = 0;
    for (size_t i = 0; i < pred.size(); ++i) {
      float d = pred[i] - label[i];
      sum += squared ? d * d : std::abs(d);
    }
    return sum / pred.size();
  }
  static std::vector<mx_float> Values(NDArray a) {
    std::vector<mx_float> v;
    a.SyncCopyToCPU(&v);
    return v;
  }
};

// Fraction of rows whose arg-max (over axis 1 of 2-D predictions) equals the label.
class Accuracy : public EvalMetric {
 public:
  Accuracy() : EvalMetric("accuracy") {}
  void Update(NDArray labels, NDArray preds) override {
    std::vector<mx_float> pred = preds.GetShape().size() == 2 ? Values(preds.ArgmaxChannel()) : Values(preds);
    std::vector<mx_float> label = Values(labels);
    if (pred.size() != label.size())
      throw dmlc::Error("Accuracy: " + std::to_string(label.size()) + " labels for " +
                               std::to_string(pred.size()) + " predictions");
    for (size_t i = 0; i < label.size(); ++i) sum_metric += (pred[i] == label[i]) ? 1 : 0;
    num_inst += static_cast<int>(label.size());
  }
};

// Mean of -log(p[label]) over rows of 2-D class probabilities.
class LogLoss : public EvalMetric {
 public:
  LogLoss() : EvalMetric("logloss") {}
  void Update(NDArray labels, NDArray preds) override {
    static const float epsilon = 1e-15f;
    auto shape = preds.GetShape();
    size_t len = labels.Size();
    size_t m = shape.size() == 2 ? shape[1] : preds.Size() / std::max<size_t>(len, 1);
    std::vector<mx_float> pred = Values(preds), label = Values(labels);
    for (size_t i = 0; i < len; ++i)
      sum_metric += -std::log(std::max(pred[i * m + static_cast<size_t>(label[i])], epsilon));
    num_inst += static_cast<int>(len);
  }
};

// Per-batch error metrics, averaged over batches.
class MAE : public EvalMetric {
 public:
  MAE() : EvalMetric("mae") {}
  void Update(NDArray labels, NDArray preds) override {
    sum_metric += MeanError(labels, preds, false);
    ++num_inst;
  }
};

class MSE : public EvalMetric {
 public:
  MSE() : EvalMetric("mse") {}
  void Update(NDArray labels, NDArray preds) override {
    sum_metric += MeanError(labels, preds, true);
    ++num_inst;
  }
};

class RMSE : public EvalMetric {
 public:
  RMSE() : EvalMetric("rmse") {}
  void Update(NDArray labels, NDArray preds) override {
    sum_metric += std::sqrt(MeanError(labels, preds, true));
    ++num_inst;
  }
};

// cpp-package's PSNR: 10 * log10(255 / MSE) per batch (99 for a perfect batch).
class PSNR : public EvalMetric {
 public:
  PSNR() : EvalMetric("psnr") {}
  void Update(NDArray labels, NDArray preds) override {
    float mse = MeanError(labels, preds, true);
    sum_metric += mse > 0 ? 10 * std::log(255.0f / mse) / std::log(10.0f) : 99.0f;
    ++num_inst;
  }
};

}  // namespace cpp
}  // namespace mxnet
