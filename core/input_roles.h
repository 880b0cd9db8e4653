// What each argument of a graph is: an input the caller feeds (data), a label that only loss
// heads read, or a learned parameter. The one place that answers that question: the CLI,
// the apps, the benchmarks, model reports and Predictor all ask here.
//
//   Graph g(net);
//   InputRoles roles = ClassifyArguments(g, param_names);   // names found in a .params file
//   for (auto& name : roles.data) ...                       // what the caller must provide
#pragma once
#include <set>
#include <string>
#include <vector>

#include "graph.h"

namespace symbind {

enum class InputRole { kData, kLabel, kParameter };

struct InputRoles {
  // Names in ListArguments order within each list.
  std::vector<std::string> data, labels, parameters;
  InputRole RoleOf(const std::string& name) const;  // throws for a name that is no argument
};

// Where parameters come from when `known_parameters` is empty.
enum class ParameterSource {
  // A graph read without weights (reports, shape tools): an argument that never feeds an op's
  // first input is taken for a parameter (the weights, biases, gammas of Convolution,
  // FullyConnected, BatchNorm...).
  kNamesOrGraphPosition,
  // Binding for inference: the names given are the parameters and nothing is guessed, so an
  // absent weight is missing rather than filled, and a second data input (rois, indices,
  // sequence_length) is data whatever its position.
  kNamesOnly,
};

// Classifies the arguments of `g`:
// - label: read only as the `label` input of loss heads (SoftmaxOutput, *RegressionOutput,
//   softmax_cross_entropy, ...), so inference never needs it;
// - parameter: named in `known_parameters` (e.g. the arrays of a .params file); or, with
//   kNamesOrGraphPosition and `known_parameters` empty, by graph position (above);
// - data: everything else.
// MXNet's own rule (names ending in "data"/"label") is used only where MXNet uses it: the
// default grad_req of SimpleBind.
InputRoles ClassifyArguments(const Graph& g, const std::set<std::string>& known_parameters = {},
                             ParameterSource source = ParameterSource::kNamesOrGraphPosition);

}  // namespace symbind
