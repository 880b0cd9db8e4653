// MXNet cpp-package compatibility: mxnet-cpp/contrib.h. contrib::InitTensorRTParams moves the
// parameters that a TensorRT subgraph node names (attribute "subgraph_params_names",
// ';'-separated) out of the argument / aux maps into that node's attributes
// ("subgraph_param_<name>" = the array's C API handle as a number), as MXNet's did. symbind
// has no TensorRT backend and makes no such nodes, so on its graphs this changes nothing.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/symbol.h"

namespace mxnet {
namespace cpp {
namespace contrib {

static const std::string TENSORRT_SUBGRAPH_PARAM_IDENTIFIER = "subgraph_params_names";
static const std::string TENSORRT_SUBGRAPH_PARAM_PREFIX = "subgraph_param_";

inline void InitTensorRTParams(const Symbol& symbol, std::map<std::string, NDArray>* arg_params,
                               std::map<std::string, NDArray>* aux_params) {
  Symbol internals = symbol.GetInternals();
  for (mx_uint i = 0; i < internals.GetNumOutputs(); ++i) {
    Symbol node = internals[static_cast<int>(i)];
    const std::map<std::string, std::string> attrs = node.ListAttributes();
    auto names = attrs.find(TENSORRT_SUBGRAPH_PARAM_IDENTIFIER);
    if (names == attrs.end()) continue;
    std::map<std::string, std::string> moved;
    std::string kept;  // the names found, ';'-separated
    size_t begin = 0;
    while (begin <= names->second.size()) {
      size_t end = names->second.find(';', begin);
      if (end == std::string::npos) end = names->second.size();
      const std::string key = names->second.substr(begin, end - begin);
      begin = end + 1;
      for (auto* params : {arg_params, aux_params}) {
        auto it = params->find(key);
        if (it == params->end()) continue;
        moved[TENSORRT_SUBGRAPH_PARAM_PREFIX + key] =
            std::to_string(reinterpret_cast<std::uintptr_t>(it->second.GetHandle()));
        kept += (kept.empty() ? "" : ";") + key;
        params->erase(it);
        break;
      }
    }
    if (moved.empty()) continue;
    node.SetAttributes(moved);
    node.SetAttribute(TENSORRT_SUBGRAPH_PARAM_IDENTIFIER, kept);
  }
}

}  // namespace contrib
}  // namespace cpp
}  // namespace mxnet
