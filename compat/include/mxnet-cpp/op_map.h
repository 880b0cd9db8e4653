// MXNet cpp-package compatibility: OpMap, operator handles by name through the C API
// (libmxnet.so: link -lmxnet, as pkg-config mxnet does).
#pragma once
#include <map>
#include <string>

#include <dmlc/logging.h>
#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include "mxnet-cpp/base.h"

namespace mxnet {
namespace cpp {

class OpMap {
 public:
  // The creator of operator `name` (or alias); throws dmlc::Error for an unknown name.
  AtomicSymbolCreator GetSymbolCreator(const std::string& name) { return GetOpHandle(name); }
  OpHandle GetOpHandle(const std::string& name) {
    auto it = handles_.find(name);
    if (it != handles_.end()) return it->second;
    OpHandle handle = nullptr;
    if (NNGetOpHandle(name.c_str(), &handle) != 0) throw dmlc::Error(MXGetLastError());
    return handles_[name] = handle;
  }

 private:
  std::map<std::string, OpHandle> handles_;  // looked up on first use
};

}  // namespace cpp
}  // namespace mxnet
