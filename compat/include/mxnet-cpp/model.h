// MXNet cpp-package compatibility: mxnet-cpp/model.h. MXNet declared FeedForward but never
// implemented it (calls failed to link); here the same declarations compile and each call
// throws dmlc::Error saying so. Train with Symbol::SimpleBind and an Optimizer instead.
#pragma once
#include <string>
#include <vector>

#include <dmlc/logging.h>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/symbol.h"

namespace mxnet {
namespace cpp {

struct FeedForwardConfig {
  Symbol symbol;
  std::vector<Context> ctx = {Context::cpu()};
  int num_epoch = 0;
  int epoch_size = 0;
  std::string optimizer = "sgd";
};

class FeedForward {
 public:
  explicit FeedForward(const FeedForwardConfig& conf) : conf_(conf) {}
  void Predict() { Unimplemented("Predict"); }
  void Score() { Unimplemented("Score"); }
  void Fit() { Unimplemented("Fit"); }
  void Save() { Unimplemented("Save"); }
  void Load() { Unimplemented("Load"); }
  static FeedForward Create() {
    Unimplemented("Create");
    return FeedForward(FeedForwardConfig());
  }

 private:
  [[noreturn]] static void Unimplemented(const char* method) {
    throw dmlc::Error(std::string("FeedForward::") + method +
                      ": not implemented (MXNet's cpp-package declared FeedForward without "
                      "implementing it); use Symbol::SimpleBind with an Optimizer");
  }
  FeedForwardConfig conf_;
};

}  // namespace cpp
}  // namespace mxnet
