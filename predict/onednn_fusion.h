// MXNet's oneDNN convolution fusion (the subgraph property behind sym.get_backend_symbol("MKLDNN")
// and quantize_model_mkldnn): each 2-D Convolution, with the BatchNorm after it, the activation
// after that, an elemwise_add of its result and another tensor, and an activation after that sum
// (as present), becomes one _sg_mkldnn_conv node whose "subgraphs" field holds the float nodes it
// stands for.
//
//   OneDnnFusion f = FuseOneDnnConvolutions(symbol, /*excluded=*/{});
//   Predictor p(f.symbol, args, aux, shapes);          // same arrays, same outputs
//   for (const auto& [fused, members] : f.members) ... // "relu1" <- {"conv1", "relu1"}
//
// A node joins the one before it only when it is that node's only reader and no graph output
// reads the earlier one, so every tensor the fused graph still has keeps its value. The fused
// node takes the name of the last node it takes in: its output keeps that tensor's name
// ("relu1_output"), and so do the graph's outputs. The arrays are unchanged (weight, bias and a
// BatchNorm's parameters and statistics stay inputs of the fused node, which folds the
// BatchNorm when it binds); FoldBatchNorm first folds it into the arrays instead.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/symbol.h>

namespace symbind {

struct OneDnnFusion {
  Symbol symbol;
  // For each _sg_mkldnn_conv node, by its name: the names of the nodes it stands for, in order.
  std::map<std::string, std::vector<std::string>> members;
};

// Convolutions, BatchNorms, activations and adds named in `excluded` are neither fused nor fused
// into. Activations that fuse: relu, sigmoid, tanh, softrelu (Activation), leaky, elu
// (LeakyReLU), clip.
OneDnnFusion FuseOneDnnConvolutions(const Symbol& symbol, const std::set<std::string>& excluded = {});

// MXNet's oneDNN passes after calibration, on a copy of the quantized graph:
// - a calibrated _contrib_requantize after a quantized _sg_mkldnn_conv becomes the node's own
//   min_calib_range / max_calib_range (its output int8 or uint8 at that range), and its readers
//   read the node;
// - scale alignment: the calibrated nodes (min_calib_range and max_calib_range set) whose outputs
//   only a _contrib_quantized_concat reads, directly or through quantized concats and poolings
//   that only it reads, take one range, the union of theirs and 0, so that the concat copies
//   their levels instead of rescaling each.
Symbol OneDnnPostQuantize(const Symbol& quantized);

// sym.get_backend_symbol(backend) (MXGenBackendSubgraph) for MXNet's CPU backends, as
// quantize_model_mkldnn calls it before and after quantize_model: "MKLDNN" fuses the
// convolutions (FuseOneDnnConvolutions); "MKLDNN_QUANTIZE" also runs OneDnnPostQuantize on the
// quantized nodes. Fused nodes keep the name of the last node they take in (MXNet names them
// sg_mkldnn_conv_bn_act_<n>). Throws Error for other backends.
Symbol OneDnnBackendSymbol(const Symbol& symbol, const std::string& backend);

}  // namespace symbind
