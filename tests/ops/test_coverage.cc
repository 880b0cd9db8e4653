// Operator coverage against TVM's MXNet importer: every MXNet operator name that TVM's frontend
// (python/tvm/relay/frontend/mxnet.py: _convert_map and _identity_list) converts must be
// registered here, canonically or as an alias. The list is the set of names, copied as facts.
#include <set>

#include "op_test_util.h"

using namespace symbind;

namespace {
const char* const kTvmMxnetOps[] = {
    "log", "exp", "erf", "sqrt", "floor", "ceil", "sigmoid", "tanh", "negative", "reshape_like",
    "zeros_like", "ones_like", "where", "gather_nd", "cos", "sin", "_copy", "relu",
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_mod",
    "broadcast_maximum", "broadcast_minimum", "arctan", "broadcast_equal", "broadcast_not_equal",
    "broadcast_greater", "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_maximum", "_minimum",
    "flatten", "Flatten", "square", "rsqrt", "cbrt", "rcbrt", "__pow_scalar__", "_power_scalar",
    "__rsub_scalar__", "_rminus_scalar", "__rdiv_scalar__", "_rdiv_scalar", "__rpow_scalar__",
    "__add_scalar__", "_plus_scalar", "__sub_scalar__", "_minus_scalar", "__mul_scalar__",
    "_mul_scalar", "__div_scalar__", "_div_scalar", "log2", "log10", "log1p", "expm1",
    "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
    "_lesser_scalar", "_lesser_equal_scalar", "_maximum_scalar", "_minimum_scalar", "mean", "max",
    "min", "sum", "max_axis", "min_axis", "sum_axis", "argmax", "argmin", "_ones", "softmax",
    "log_softmax", "Softmax", "Reshape", "reshape", "Cast", "clip", "transpose", "UpSampling",
    "add_n", "_zeros", "FullyConnected", "Activation", "Convolution", "Convolution_v1",
    "Deconvolution", "Pooling", "Pooling_v1", "Dropout", "BatchNorm", "BatchNorm_v1",
    "InstanceNorm", "LayerNorm", "LRN", "L2Normalization", "slice", "slice_like", "slice_axis",
    "SliceChannel", "split", "expand_dims", "Concat", "concat", "stack", "batch_dot", "LeakyReLU",
    "_arange", "_full", "repeat", "tile", "pad", "Pad", "take", "reverse", "squeeze",
    "broadcast_axis", "BlockGrad", "shape_array", "Embedding", "argsort", "topk", "SequenceMask",
    "SoftmaxOutput", "SoftmaxActivation", "LinearRegressionOutput", "smooth_l1",
    "_contrib_div_sqrt_dim", "one_hot", "_contrib_BilinearResize2D", "_contrib_MultiBoxPrior",
    "_contrib_MultiBoxDetection", "_contrib_ROIAlign", "ROIPooling", "_contrib_Proposal",
    "_contrib_MultiProposal", "_contrib_box_nms", "_contrib_DeformableConvolution",
    "_contrib_AdaptiveAvgPooling2D", "RNN", "_rnn_param_concat", "Crop",
};
// Further operators real MXNet graphs use (detection, sequence and OCR models, Gluon exports).
const char* const kFurtherOps[] = {
    "sort", "argsort", "topk", "pick", "broadcast_to", "broadcast_like", "broadcast_axes",
    "size_array", "SequenceLast", "SequenceReverse", "ElementWiseSum", "scatter_nd", "tan",
    "arcsin", "arccos", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "erfinv", "CTCLoss",
    "ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss", "WarpCTC", "SpatialTransformer",
    "GridGenerator", "BilinearSampler", "_contrib_box_non_maximum_suppression", "SwapAxis",
    "swapaxes", "flip", "_equal", "_not_equal", "_greater", "_greater_equal", "_lesser",
    "_lesser_equal", "_mod_scalar", "_rmod_scalar", "MakeLoss", "make_loss"};
}  // namespace

// NNVM-v1 spellings TVM also accepts; MXNet 1.x writes _plus_scalar etc. into symbol files.
const std::set<std::string> kNnvmV1Spellings = {
    "__add_scalar__", "__sub_scalar__", "__mul_scalar__", "__div_scalar__",
    "__pow_scalar__", "__rsub_scalar__", "__rdiv_scalar__", "__rpow_scalar__"};

TEST_CASE("Every operator TVM's MXNet importer converts is registered", "[ops][coverage]") {
  std::vector<std::string> missing;
  for (const char* name : kTvmMxnetOps)
    if (!kNnvmV1Spellings.count(name) && !OpRegistry::Global().Find(name)) missing.push_back(name);
  for (const char* name : kFurtherOps)
    if (!OpRegistry::Global().Find(name)) missing.push_back(name);
  INFO("missing: " << [&] { std::string s; for (auto& m : missing) s += m + " "; return s; }());
  CHECK(missing.empty());
}
