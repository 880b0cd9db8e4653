// MXNet cpp-package compatibility: learning-rate schedules.
#pragma once
#include <iostream>

#include "mxnet-cpp/base.h"

namespace mxnet {
namespace cpp {

class LRScheduler {
 public:
  explicit LRScheduler(float base_lr = 0.01f) : base_lr_(base_lr) {}
  virtual ~LRScheduler() = default;
  void SetLR(float lr) { base_lr_ = lr; }
  // The learning rate after `num_update` updates.
  virtual float GetLR(unsigned num_update) = 0;

 protected:
  float base_lr_;
};

// lr * factor^(floor((num_update - 1) / step)), never below stop_factor_lr.
class FactorScheduler : public LRScheduler {
 public:
  explicit FactorScheduler(int step, float factor = 1, float stop_factor_lr = 1e-8)
      : LRScheduler(), step_(step), factor_(factor), stop_factor_lr_(stop_factor_lr) {}
  float GetLR(unsigned num_update) override {
    while (num_update > unsigned(count_ + step_)) {
      count_ += step_;
      base_lr_ *= factor_;
      if (base_lr_ < stop_factor_lr_) {
        base_lr_ = stop_factor_lr_;
        LG << "Update[" << num_update << "]: now learning rate arrived at " << base_lr_
           << ", will not change in the future";
      } else {
        LG << "Update[" << num_update << "]: Change learning rate to " << base_lr_;
      }
    }
    return base_lr_;
  }

 private:
  int count_ = 0;
  int step_;
  float factor_;
  float stop_factor_lr_;
};

}  // namespace cpp
}  // namespace mxnet
