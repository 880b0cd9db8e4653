// Post-training int8 quantization of a float32 model into the graph MXNet 1.9.1's
// quantize_model writes (docs/quantization.md):
//
//   QuantizeOptions options;                        // entropy calibration, int8, smart mode
//   std::vector<std::map<std::string, NDArray>> calib = {{{"data", batch0}}, {{"data", batch1}}};
//   QuantizedModel q = QuantizeModel(symbol, args, aux, calib, options);
//   SaveCheckpoint("model-int8", 0, q.symbol, q.args, q.aux);   // loads in symbind and in MXNet
//   for (const QuantizeNote& n : q.report) ...                      // what stayed float32, and why
//
// The float graph is first simplified for inference: BatchNorm folded into the Convolution or
// FullyConnected before it (the folded weight and bias keep the layer's parameter names) and
// Dropout (mode "training") removed. In the oneDNN form (QuantizeOptions::form, the default) each
// Convolution with the activation and sum after it is then one _sg_mkldnn_conv
// (predict/onednn_fusion.h) whose float weights the node quantizes per output channel, and whose
// requantize becomes its own calibrated range. Then, as MXNet's QuantizeGraph pass does:
// - Convolution (2-D) and FullyConnected become _contrib_quantized_conv / _fully_connected, each
//   followed by _contrib_requantize "requantize_<name>"; Pooling (max, avg), Activation (relu),
//   Flatten, Concat (dim > 0) and elemwise_add become their _contrib_quantized_* forms. In
//   "smart" mode (MXNet's default) those of the second kind only where they sit between
//   quantized layers (upstream of one and downstream of one).
// - A float tensor entering a quantized node passes through _contrib_quantize_v2
//   "<tensor>_quantize" (out_type = quantized_dtype); a quantized tensor leaving to a float node or
//   a head through _contrib_dequantize "<node>_dequantize" (for a head: "<node>", so that the
//   model's outputs keep their names).
// - Weights and biases of quantized layers become int8 parameters "<name>_quantize" with
//   "<name>_quantize_min" / "_max" = -R / R (R: the largest magnitude; levels round(x * 127 / R),
//   as MXNet's offline _contrib_quantize); the float arrays they replace are dropped.
// - With calibration, each _contrib_quantize_v2 and _contrib_requantize gets min_calib_range /
//   max_calib_range: the range of the float tensor it stands for over the calibration batches
//   (naive: min and max; entropy: the KL-optimal threshold). Without (CalibMode::kNone) they
//   compute ranges at run time.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>
#include <symbind/predict/calibration.h>

namespace symbind {

struct QuantizeOptions {
  CalibMode calib_mode = CalibMode::kEntropy;
  // out_type of the quantize and requantize nodes: "int8", "uint8" or "auto" (uint8 where the
  // calibrated range has no negative values).
  std::string quantized_dtype = "int8";
  // "smart" (MXNet's default) or "full": quantize every supported operator of the second kind.
  std::string quantize_mode = "smart";
  std::set<std::string> excluded_nodes;  // node names of the float graph: they stay float32
  std::set<std::string> excluded_ops;    // operator names ("Pooling", ...): they stay float32
  // How convolutions are quantized, as one of MXNet 1.9.1's two CPU flows writes them:
  // - "contrib" (quantize_model): _contrib_quantized_conv then _contrib_requantize; int8 weights in
  //   the .params with one range per weight tensor and one per bias;
  // - "onednn" (quantize_model_mkldnn): each Convolution, with the activation, elemwise_add and
  //   activation after it, one _sg_mkldnn_conv (FuseOneDnnConvolutions) whose output is int8 or
  //   uint8 at the calibrated range; float weights in the .params, quantized per output channel
  //   when the model loads. Keeps more accuracy where channels differ in scale (depthwise
  //   layers after BatchNorm folding).
  std::string form = "onednn";
  bool fold_batch_norm = true;
  bool remove_dropout = true;
  // Calibration images to use, counted over the batches' first dimension; 0: every batch given.
  size_t num_calib_examples = 0;
};

// One operator node of the float graph (after folding): its outcome, "int8" or why it stays float32.
struct QuantizeNote {
  std::string node, op;
  bool quantized = false;
  std::string reason;  // for a float32 node
};

struct QuantizedModel {
  Symbol symbol;
  std::map<std::string, NDArray> args, aux;
  std::vector<QuantizeNote> report;                 // in the float graph's topological order
  std::map<std::string, CalibRange> calib_ranges;   // by the float tensor's name ("conv1_output", "data")
  std::vector<std::string> removed;                 // BatchNorm and Dropout nodes folded or removed
  size_t calib_examples = 0;                        // images the ranges were collected over
};

// MXNet's QuantizeGraph pass alone (MXQuantizeSymbol): the quantized graph of `symbol` as it is
// (no folding), with the inputs in `offline_params` (variable names) quantized offline into
// variables "<name>_quantize", "_min", "_max"; excluded names the graph lacks are ignored, as
// MXNet does.
struct QuantizeGraphOptions {
  std::string quantized_dtype = "int8", quantize_mode = "smart";
  std::set<std::string> excluded_nodes, excluded_ops, offline_params;
};
struct QuantizedGraph {
  Symbol symbol;
  // The float tensors whose ranges calibration sets, by name ("data", "conv1_output"), as
  // MXQuantizeSymbol lists them.
  std::vector<std::string> calib_names;
  std::vector<QuantizeNote> report;
  std::set<std::string> offline;  // the offline_params the graph quantizes
};
QuantizedGraph QuantizeGraph(const Symbol& symbol, const QuantizeGraphOptions& options);

// MXNet's SetCalibTableToQuantizedGraph (MXSetCalibTableToQuantizedSymbol): a copy of the
// quantized graph in which each _contrib_quantize_v2 and _contrib_requantize whose float tensor
// (its input's name, a leading "quantized_" dropped) is in `table` gets min_calib_range /
// max_calib_range.
Symbol SetCalibTable(const Symbol& quantized, const std::map<std::string, CalibRange>& table);

// Throws ParamError for an unknown quantized_dtype or quantize_mode, an excluded node or op the
// graph does not have, calibration batches missing an input or of different input names, or
// calib_mode other than kNone without batches; ShapeError when a batch does not fit the model.
QuantizedModel QuantizeModel(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                             const std::map<std::string, NDArray>& aux,
                             const std::vector<std::map<std::string, NDArray>>& calib_batches,
                             const QuantizeOptions& options = {});

}  // namespace symbind
