// A registry sweep: every registered operator with a backward is gradient-checked against
// central finite differences (CheckGradients, op_test_util.h), at default parameters where
// they suffice and otherwise with the few parameters and input shapes the table below gives;
// or it is on the exemption list with the reason. A new op with a backward fails the coverage
// case until it is added to one of the two lists.
//
// Sizes are tiny (a few to a few dozen elements per input): finite differences run two
// forwards per element, and the whole sweep must stay fast under ASan too.
#include <set>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

// How an input is filled when the case gives no values for it.
enum class Fill {
  kAway,      // uniform in [-0.9, 0.9] with |x| >= 0.05: clear of kinks at 0 (the default)
  kPositive,  // uniform in [0.2, 0.9]: logs, roots, powers
  kAboveOne,  // uniform in [1.2, 2.0]: arccosh
  kDistinct,  // 0.1 * permutation - 1: no ties for max windows and sorts
  kRModSafe,  // uniform in [0.64, 0.82]: 2.5 / x stays inside (3, 4), where floor(2.5 / x) is flat
  kClipSafe,  // uniform in [-0.9, 0.9], clear of clip's bounds +-0.5
  kIndexLike, // k + 0.3 for k in {0, 1, 2}: clear of the integers an index truncates to
  kNearIdentityAffine,  // an affine transform near the identity (2 x 3 per batch item)
  kDiagDominant,  // kAway plus 3 on the diagonals of the trailing square matrices: well conditioned
};

// One gradient check: an op, the parameters and input shapes it needs (other shapes are
// inferred), how its inputs are filled, which are not differentiated.
struct SweepCase {
  std::string op, variant;  // the variant names the case in the section name
  KwArgs params;
  std::map<std::string, TShape> shapes;
  std::map<std::string, Fill> fills;                  // default kAway
  std::map<std::string, std::vector<float>> values;   // exact values (indices, labels, boxes)
  std::vector<std::string> no_grad;
  bool is_train = false;

  SweepCase& Param(const std::string& k, const std::string& v) { params[k] = v; return *this; }
  SweepCase& Shape(const std::string& input, const TShape& s) { shapes[input] = s; return *this; }
  SweepCase& With(const std::string& input, Fill f) { fills[input] = f; return *this; }
  // Fixed values for an input that is not differentiated (indices, labels, boxes).
  SweepCase& Fixed(const std::string& input, const TShape& s, std::vector<float> v) {
    shapes[input] = s;
    values[input] = std::move(v);
    no_grad.push_back(input);
    return *this;
  }
  SweepCase& Train() { is_train = true; return *this; }
  SweepCase& Variant(std::string v) { variant = std::move(v); return *this; }
};

SweepCase Case(const std::string& op, KwArgs params = {}) {
  SweepCase s;
  s.op = op;
  s.params = std::move(params);
  return s;
}

const TShape k23({2, 3});
const TShape k13({1, 3});
const TShape k234({2, 3, 4});
const TShape tnc({3, 2, 2});
const TShape nchw({1, 2, 4, 4});
const TShape k33({3, 3}), k233({2, 3, 3});

// Ops checked at default parameters with every argument (2, 3) and the default fill.
const char* const kDefaultOps[] = {
    // element-wise unary
    "abs", "arctan", "arcsinh", "cbrt", "ceil", "cos", "cosh", "degrees", "erf", "exp", "expm1",
    "fix", "floor", "logical_not", "negative", "radians", "rcbrt", "reciprocal", "relu", "rint",
    "round", "sigmoid", "sign", "sin", "sinh", "square", "tan", "tanh", "trunc", "_copy",
    "ones_like", "zeros_like", "Flatten", "SoftmaxActivation", "softmax", "log_softmax", "softmin",
    "smooth_l1", "transpose", "_contrib_div_sqrt_dim", "arcsin", "arccos", "arctanh", "erfinv",
    "softsign", "hard_sigmoid", "_contrib_arange_like",
    // element-wise binary (same shapes)
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_hypot", "_equal",
    "_not_equal", "_greater", "_greater_equal", "_lesser", "_lesser_equal", "_logical_and",
    "_logical_or", "_logical_xor", "reshape_like", "_identity_with_attr_like_rhs",
    // with a scalar (default 1)
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
    "_rdiv_scalar", "_hypot_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar",
    "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar", "_logical_and_scalar",
    "_logical_or_scalar", "_logical_xor_scalar", "_maximum_scalar", "_minimum_scalar",
    "_mod_scalar",
    // reductions over everything
    "sum", "mean", "prod", "nansum", "nanprod", "norm", "_square_sum",
};

// The cases come from a dozen functions of modest size: GCC's compile time under ASan grows
// much faster than linearly with a function's length (one function of ~300 cases took
// about ten minutes).
using CaseList = std::vector<SweepCase>;

void ElementwiseCases(CaseList& c) {
  for (const char* name : kDefaultOps) {
    SweepCase s = Case(name);
    NodeAttrs attrs;
    attrs.op = &OpRegistry::Global().Get(s.op);
    attrs.op->ParseAttrs(&attrs);
    for (auto& arg : attrs.op->ListArguments(attrs)) s.Shape(arg, k23);
    c.push_back(s);
  }
  c.push_back(Case("Cast", {{"dtype", "float32"}}).Shape("data", k23));
  c.push_back(Case("cast_storage", {{"stype", "default"}}).Shape("data", k23));
  c.push_back(Case("squeeze").Shape("data", TShape({2, 1, 3})));
  // Domains: positive, above one; s mod x with s / x between 3 and 4 (no jump of floor(s / x)).
  for (const char* name : {"log", "log10", "log2", "log1p", "sqrt", "rsqrt", "gamma", "gammaln"})
    c.push_back(Case(name).Shape("data", k23).With("data", Fill::kPositive));
  c.push_back(Case("arccosh").Shape("data", k23).With("data", Fill::kAboveOne));
  c.push_back(Case("_power_scalar", {{"scalar", "2.5"}}).Shape("data", k23).With("data", Fill::kPositive));
  c.push_back(Case("_rpower_scalar", {{"scalar", "2.5"}}).Shape("data", k23));
  c.push_back(Case("_rmod_scalar", {{"scalar", "2.5"}}).Shape("data", k23).With("data", Fill::kRModSafe));
  c.push_back(Case("_power").Shape("lhs", k23).Shape("rhs", k23).With("lhs", Fill::kPositive));
  // max/min: the operands never tie (distinct lhs, rhs filled away from its grid).
  for (const char* name : {"_maximum", "_minimum"})
    c.push_back(Case(name).Shape("lhs", k23).Shape("rhs", k23).With("lhs", Fill::kDistinct));
}

void BroadcastCases(CaseList& c) {
  // Broadcasting binary ops: rhs broadcast along axis 0, so backward reduces.
  for (const char* name :
       {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_hypot",
        "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
        "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
        "broadcast_logical_or", "broadcast_logical_xor", "broadcast_mod"})
    c.push_back(Case(name).Shape("lhs", k23).Shape("rhs", k13));
  c.push_back(Case("broadcast_power").Shape("lhs", k23).Shape("rhs", k13).With("lhs", Fill::kPositive));
  for (const char* name : {"broadcast_maximum", "broadcast_minimum"})
    c.push_back(Case(name).Shape("lhs", k23).Shape("rhs", k13).With("lhs", Fill::kDistinct));
  c.push_back(Case("broadcast_like").Shape("lhs", k13).Shape("rhs", k23));
  c.push_back(Case("broadcast_to", {{"shape", "(2,3)"}}).Shape("data", k13));
  c.push_back(Case("broadcast_axis", {{"axis", "0"}, {"size", "2"}}).Shape("data", k13));
}

void ReductionCases(CaseList& c) {
  // Reductions and ordering over an axis; max/min and sorts on distinct values.
  c.push_back(Case("sum", {{"axis", "1"}, {"keepdims", "True"}}).Shape("data", k23).Variant("axis=1"));
  c.push_back(Case("norm", {{"ord", "1"}, {"axis", "0"}}).Shape("data", k23).Variant("ord=1"));
  for (const char* name : {"max", "min", "argmax", "argmin", "argsort", "sort", "topk"})
    c.push_back(Case(name).Shape("data", k23).With("data", Fill::kDistinct));
  c.push_back(Case("topk", {{"k", "2"}, {"ret_typ", "value"}}).Shape("data", k23).With("data", Fill::kDistinct)
          .Variant("ret_typ=value"));
}

void LayoutCases(CaseList& c) {
  c.push_back(Case("Reshape", {{"shape", "(3,2)"}}).Shape("data", k23));
  c.push_back(Case("expand_dims", {{"axis", "1"}}).Shape("data", k23));
  c.push_back(Case("SwapAxis", {{"dim1", "0"}, {"dim2", "2"}}).Shape("data", TShape({2, 3, 2})));
  c.push_back(Case("transpose", {{"axes", "(1,2,0)"}}).Shape("data", TShape({2, 3, 2})).Variant("axes"));
  c.push_back(Case("reverse", {{"axis", "(1,)"}}).Shape("data", k23));
  c.push_back(Case("tile", {{"reps", "(2,1)"}}).Shape("data", k23));
  c.push_back(Case("repeat", {{"repeats", "2"}, {"axis", "1"}}).Shape("data", k23));
  c.push_back(Case("slice", {{"begin", "(0,1)"}, {"end", "(2,3)"}}).Shape("data", k23));
  c.push_back(Case("slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}).Shape("data", k23));
  c.push_back(Case("slice_like").Shape("data", TShape({3, 4})).Shape("shape_like", k23));
  c.push_back(Case("Concat", {{"num_args", "2"}}).Shape("arg0", k23).Shape("arg1", TShape({2, 2})));
  c.push_back(Case("stack", {{"num_args", "2"}}).Shape("arg0", k23).Shape("arg1", k23));
  c.push_back(Case("add_n", {{"num_args", "3"}}).Shape("arg0", k23).Shape("arg1", k23).Shape("arg2", k23));
  c.push_back(Case("_rnn_param_concat", {{"num_args", "2"}}).Shape("arg0", k23).Shape("arg1", TShape({2, 1})));
  c.push_back(Case("SliceChannel", {{"num_outputs", "2"}}).Shape("data", TShape({2, 4})));
  c.push_back(Case("_split_v2", {{"indices", "(0, 1, 3)"}}).Shape("data", TShape({2, 4})));
  c.push_back(Case("Pad", {{"mode", "constant"}, {"pad_width", "(0,0,0,0,1,1,1,1)"}, {"constant_value", "0.5"}})
          .Shape("data", TShape({1, 1, 2, 3})));
  for (const char* mode : {"edge", "reflect"})
    c.push_back(Case("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,1,1,1,1)"}}).Shape("data", TShape({1, 1, 3, 3}))
            .Variant(mode));
  c.push_back(Case("Crop", {{"num_args", "1"}, {"h_w", "(2,2)"}, {"offset", "(1,0)"}}).Shape("arg0", TShape({1, 1, 4, 3})));
  c.push_back(Case("clip", {{"a_min", "-0.5"}, {"a_max", "0.5"}}).Shape("data", k23).With("data", Fill::kClipSafe));
}

void IndexingCases(CaseList& c) {
  // Indexing: indices and conditions are not differentiated.
  c.push_back(Case("take").Shape("a", TShape({4, 3})).Fixed("indices", TShape({3}), {2, 0, 2}));
  c.push_back(Case("pick").Shape("data", k23).Fixed("index", TShape({2}), {2, 0}));
  c.push_back(Case("gather_nd").Shape("data", TShape({3, 4})).Fixed("indices", TShape({2, 3}), {0, 2, 0, 1, 3, 1}));
  c.push_back(Case("scatter_nd", {{"shape", "(3,4)"}}).Shape("data", TShape({3}))
          .Fixed("indices", TShape({2, 3}), {0, 2, 1, 1, 3, 0}));
  c.push_back(Case("where").Shape("x", k23).Shape("y", k23).Fixed("condition", k23, {1, 0, 0, 1, 1, 0}));
  c.push_back(Case("Embedding", {{"input_dim", "4"}, {"output_dim", "3"}}).Fixed("data", TShape({3}), {3, 0, 3}));
  // one_hot's only input is the indices: its gradient is zero, as are the finite differences
  // of indices held clear of integers.
  c.push_back(Case("one_hot", {{"depth", "3"}}).Shape("indices", TShape({3})).With("indices", Fill::kIndexLike));
  c.push_back(Case("dot").Shape("lhs", k23).Shape("rhs", TShape({3, 2})));
  c.push_back(Case("dot", {{"transpose_a", "True"}, {"transpose_b", "True"}}).Shape("lhs", TShape({3, 2}))
          .Shape("rhs", k23).Variant("transposed"));
  c.push_back(Case("batch_dot").Shape("lhs", TShape({2, 2, 3})).Shape("rhs", TShape({2, 3, 2})));
  c.push_back(Case("SequenceLast").Shape("data", tnc));
  c.push_back(Case("SequenceLast", {{"use_sequence_length", "True"}}).Shape("data", tnc)
          .Fixed("sequence_length", TShape({2}), {1, 3}).Variant("sequence_length"));
  c.push_back(Case("SequenceMask", {{"use_sequence_length", "True"}}).Shape("data", tnc)
          .Fixed("sequence_length", TShape({2}), {2, 3}));
  c.push_back(Case("SequenceReverse", {{"use_sequence_length", "True"}}).Shape("data", tnc)
          .Fixed("sequence_length", TShape({2}), {2, 3}));
  c.push_back(Case("softmax_cross_entropy").Shape("data", k23).Fixed("label", TShape({2}), {2, 0}));
  c.push_back(Case("CTCLoss").Shape("data", TShape({4, 1, 3})).Fixed("label", TShape({1, 2}), {1, 2}));
}

void LayerCases(CaseList& c) {
  for (const char* act : {"relu", "sigmoid", "softrelu", "softsign", "tanh"})
    c.push_back(Case("Activation", {{"act_type", act}}).Shape("data", k23).Variant(act));
  // selu is left out: it reproduces MXNet's selu_grad, lambda * (alpha + y) for y <= 0, which
  // is not the derivative (see ops/nn/leaky_relu.cc).
  for (const char* act : {"leaky", "elu", "gelu", "rrelu"})
    c.push_back(Case("LeakyReLU", {{"act_type", act}}).Shape("data", k23).Variant(act));
  c.push_back(Case("LeakyReLU", {{"act_type", "prelu"}}).Shape("data", k23).Shape("gamma", TShape({3})).Variant("prelu"));
  c.push_back(Case("FullyConnected", {{"num_hidden", "2"}}).Shape("data", k23));
  c.push_back(Case("FullyConnected", {{"num_hidden", "2"}, {"no_bias", "True"}, {"flatten", "False"}})
          .Shape("data", TShape({2, 2, 3})).Variant("no_bias flatten=False"));
  c.push_back(Case("Convolution", {{"kernel", "(2,2)"}, {"num_filter", "2"}}).Shape("data", nchw));
  c.push_back(Case("Convolution", {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
                           {"num_group", "2"}, {"no_bias", "True"}})
          .Shape("data", nchw).Variant("strided grouped"));
  c.push_back(Case("Convolution", {{"kernel", "(2,)"}, {"num_filter", "2"}, {"dilate", "(2,)"}})
          .Shape("data", TShape({1, 2, 5})).Variant("1-D dilated"));
  c.push_back(Case("Convolution_v1", {{"kernel", "(2,2)"}, {"num_filter", "2"}}).Shape("data", nchw));
  c.push_back(Case("Deconvolution", {{"kernel", "(2,2)"}, {"num_filter", "2"}}).Shape("data", TShape({1, 2, 3, 3})));
  c.push_back(Case("Deconvolution", {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
                             {"no_bias", "False"}})
          .Shape("data", TShape({1, 2, 2, 2})).Variant("strided bias"));
  // Offsets inside (0.2, 0.9): sampling points never cross a pixel boundary.
  c.push_back(Case("_contrib_DeformableConvolution", {{"kernel", "(2,2)"}, {"num_filter", "2"}})
          .Shape("data", TShape({1, 1, 3, 3})).Shape("offset", TShape({1, 8, 2, 2})).With("offset", Fill::kPositive));
  c.push_back(Case("_contrib_ModulatedDeformableConvolution", {{"kernel", "(2,2)"}, {"num_filter", "2"}})
          .Shape("data", TShape({1, 1, 3, 3})).Shape("offset", TShape({1, 8, 2, 2})).With("offset", Fill::kPositive)
          .With("mask", Fill::kPositive));
  for (const char* pool : {"max", "avg", "sum"})
    c.push_back(Case("Pooling", {{"kernel", "(2,2)"}, {"pool_type", pool}, {"stride", "(1,1)"}})
            .Shape("data", TShape({1, 1, 3, 3})).With("data", Fill::kDistinct).Variant(pool));
  c.push_back(Case("Pooling", {{"kernel", "(2,2)"}, {"pool_type", "lp"}, {"p_value", "2"}, {"stride", "(2,2)"}})
          .Shape("data", TShape({1, 1, 4, 4})).With("data", Fill::kDistinct).Variant("lp"));
  c.push_back(Case("Pooling", {{"global_pool", "True"}, {"pool_type", "avg"}}).Shape("data", TShape({1, 2, 3, 3}))
          .Variant("global avg"));
  c.push_back(Case("Pooling_v1", {{"kernel", "(2,2)"}, {"pool_type", "max"}}).Shape("data", TShape({1, 1, 4, 4}))
          .With("data", Fill::kDistinct));
  c.push_back(Case("_contrib_AdaptiveAvgPooling2D", {{"output_size", "(2,2)"}}).Shape("data", TShape({1, 1, 3, 3})));
  c.push_back(Case("_contrib_BilinearResize2D", {{"height", "3"}, {"width", "4"}}).Shape("data", TShape({1, 1, 2, 2})));
  c.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}})
          .Shape("arg0", TShape({1, 1, 2, 2})));
  c.push_back(Case("ROIPooling", {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}})
          .Shape("data", TShape({1, 1, 4, 4})).With("data", Fill::kDistinct)
          .Fixed("rois", TShape({1, 5}), {0, 0, 0, 3, 3}));
  c.push_back(Case("_contrib_ROIAlign", {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}, {"sample_ratio", "2"}})
          .Shape("data", TShape({1, 1, 4, 4})).Fixed("rois", TShape({1, 5}), {0, 0.3f, 0.4f, 2.7f, 2.6f}));
  c.push_back(Case("_contrib_PSROIPooling", {{"output_dim", "1"}, {"pooled_size", "2"}, {"spatial_scale", "1"}})
          .Shape("data", TShape({1, 4, 4, 4})).Fixed("rois", TShape({1, 5}), {0, 0, 1, 2, 3}));
  // Samples at half pixels moved by under 0.4 pixel: inside the image, off pixel boundaries.
  c.push_back(Case("_contrib_DeformablePSROIPooling", {{"output_dim", "1"}, {"group_size", "2"}, {"pooled_size", "2"},
                                               {"sample_per_part", "2"}, {"spatial_scale", "1"}, {"trans_std", "0.1"}})
          .Shape("data", TShape({1, 4, 5, 5})).Shape("trans", TShape({1, 2, 2, 2}))
          .Fixed("rois", TShape({1, 5}), {0, 1, 1, 4, 4}));
  c.push_back(Case("BilinearSampler").Shape("data", TShape({1, 1, 3, 3})).Shape("grid", TShape({1, 2, 2, 2})));
  c.push_back(Case("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(2,3)"}}).Shape("data", TShape({1, 6})));
  c.push_back(Case("GridGenerator", {{"transform_type", "warp"}}).Shape("data", TShape({1, 2, 2, 3})).Variant("warp"));
  c.push_back(Case("SpatialTransformer", {{"transform_type", "affine"}, {"sampler_type", "bilinear"}, {"target_shape", "(2,2)"}})
          .Shape("data", TShape({1, 1, 3, 3})).Shape("loc", TShape({1, 6})).With("loc", Fill::kNearIdentityAffine));
  c.push_back(Case("_contrib_MultiBoxPrior", {{"sizes", "(0.5,)"}}).Shape("data", TShape({1, 1, 2, 2})));
}

void NormalisationCases(CaseList& c) {
  // Normalisation: moving variances positive; BatchNorm in training uses batch statistics.
  c.push_back(Case("BatchNorm", {{"fix_gamma", "False"}}).Shape("data", TShape({2, 3, 2})).With("moving_var", Fill::kPositive)
          .Train());
  c.push_back(Case("BatchNorm", {{"use_global_stats", "True"}}).Shape("data", TShape({2, 3, 2}))
          .With("moving_var", Fill::kPositive).Variant("global stats"));
  c.push_back(Case("BatchNorm_v1", {{"fix_gamma", "False"}}).Shape("data", TShape({2, 3, 2}))
          .With("moving_var", Fill::kPositive).Train());
  c.push_back(Case("_contrib_SyncBatchNorm", {{"fix_gamma", "False"}, {"key", "bn0"}}).Shape("data", TShape({2, 3, 2}))
          .With("moving_var", Fill::kPositive).Train());
  c.push_back(Case("InstanceNorm").Shape("data", TShape({2, 3, 2})));
  c.push_back(Case("GroupNorm", {{"num_groups", "2"}}).Shape("data", TShape({2, 4, 3})));
  c.push_back(Case("LayerNorm").Shape("data", k23));
  c.push_back(Case("L2Normalization").Shape("data", TShape({2, 3, 2})));
  c.push_back(Case("L2Normalization", {{"mode", "channel"}}).Shape("data", TShape({2, 3, 2})).Variant("channel"));
  c.push_back(Case("LRN", {{"nsize", "3"}}).Shape("data", TShape({1, 4, 2, 2})));
  // Dropout's mask comes from the run's seed, which CheckGradients fixes for every forward.
  c.push_back(Case("Dropout", {{"p", "0.5"}}).Shape("data", TShape({2, 4})).Train());
  for (const char* mode : {"rnn_tanh", "rnn_relu", "gru", "lstm"})
    c.push_back(Case("RNN", {{"state_size", "2"}, {"num_layers", "1"}, {"mode", mode}}).Shape("data", TShape({3, 1, 2}))
            .Variant(mode));
  c.push_back(Case("RNN", {{"state_size", "2"}, {"num_layers", "2"}, {"mode", "lstm"}, {"bidirectional", "True"}})
          .Shape("data", TShape({2, 1, 2})).Variant("lstm 2 layers bidirectional"));
}

// Non-default parameters that take other paths through the kernels. (BatchNorm's and
// LayerNorm's output_mean_var are left out: as in MXNet, the gradients of the mean and var
// outputs are ignored, so the default loss over every output does not apply.)
void NonDefaultCases1(CaseList& c) {
  c.push_back(Case("softmax", {{"axis", "0"}, {"temperature", "2"}}).Shape("data", k23).Variant("axis=0 temperature"));
  c.push_back(Case("log_softmax", {{"axis", "1"}}).Shape("data", k234).Variant("axis=1"));
  c.push_back(Case("SoftmaxActivation", {{"mode", "channel"}}).Shape("data", TShape({2, 3, 2})).Variant("channel"));
  c.push_back(Case("mean", {{"axis", "(0,2)"}}).Shape("data", k234).Variant("axes 0,2"));
  c.push_back(Case("sum", {{"axis", "1"}, {"exclude", "True"}}).Shape("data", k234).Variant("exclude"));
  c.push_back(Case("prod", {{"axis", "1"}}).Shape("data", k234).Variant("axis=1"));
  c.push_back(Case("max", {{"axis", "1"}, {"keepdims", "True"}}).Shape("data", k234).With("data", Fill::kDistinct)
          .Variant("axis=1"));
  c.push_back(Case("norm", {{"axis", "(1,2)"}}).Shape("data", k234).Variant("2 axes"));
  c.push_back(Case("broadcast_mul").Shape("lhs", TShape({2, 1, 4})).Shape("rhs", TShape({1, 3, 1})).Variant("both sides"));
  c.push_back(Case("broadcast_div").Shape("lhs", TShape({3, 1})).Shape("rhs", k234).Variant("rank 2 by 3"));
  c.push_back(Case("dot").Shape("lhs", TShape({3})).Shape("rhs", TShape({3})).Variant("vectors"));
  c.push_back(Case("dot").Shape("lhs", k234).Shape("rhs", TShape({4, 2})).Variant("3-D lhs"));
  c.push_back(Case("batch_dot", {{"transpose_a", "True"}, {"transpose_b", "True"}}).Shape("lhs", TShape({2, 3, 2}))
          .Shape("rhs", TShape({2, 2, 3})).Variant("transposed"));
  c.push_back(Case("take", {{"axis", "1"}, {"mode", "wrap"}}).Shape("a", k234).Fixed("indices", TShape({2, 2}), {5, -1, 0, 2})
          .Variant("axis=1 wrap"));
  c.push_back(Case("pick", {{"axis", "0"}, {"keepdims", "True"}}).Shape("data", k23).Fixed("index", TShape({1, 3}), {1, 0, 1})
          .Variant("axis=0"));
  c.push_back(Case("slice", {{"begin", "(None,2)"}, {"end", "(None,0)"}, {"step", "(1,-1)"}}).Shape("data", k234)
          .Variant("negative step"));
  c.push_back(Case("slice_axis", {{"axis", "-1"}, {"begin", "-3"}, {"end", "None"}}).Shape("data", k234)
          .Variant("negative axis"));
  c.push_back(Case("SliceChannel", {{"num_outputs", "3"}, {"axis", "1"}, {"squeeze_axis", "True"}}).Shape("data", k234)
          .Variant("squeeze"));
  c.push_back(Case("Concat", {{"num_args", "3"}, {"dim", "0"}}).Shape("arg0", k23).Shape("arg1", TShape({1, 3}))
          .Shape("arg2", k23).Variant("dim=0"));
  c.push_back(Case("stack", {{"num_args", "2"}, {"axis", "-1"}}).Shape("arg0", k23).Shape("arg1", k23).Variant("axis=-1"));
  c.push_back(Case("tile", {{"reps", "(2,1,2)"}}).Shape("data", k23).Variant("more reps than dims"));
  c.push_back(Case("repeat", {{"repeats", "2"}}).Shape("data", k23).Variant("flattened"));
  c.push_back(Case("reverse", {{"axis", "(0,2)"}}).Shape("data", k234).Variant("2 axes"));
  c.push_back(Case("expand_dims", {{"axis", "-1"}}).Shape("data", k23).Variant("axis=-1"));
  c.push_back(Case("Reshape", {{"shape", "(0,-1)"}}).Shape("data", k234).Variant("0 and -1"));
  c.push_back(Case("Pad", {{"mode", "reflect"}, {"pad_width", "(0,0,0,0,2,1,1,2)"}}).Shape("data", TShape({1, 2, 3, 3}))
          .Variant("reflect asymmetric"));
  c.push_back(Case("Pad", {{"mode", "edge"}, {"pad_width", "(0,0,0,0,1,0,0,1,2,1)"}}).Shape("data", TShape({1, 1, 2, 2, 3}))
          .Variant("edge 5-D"));
  c.push_back(Case("Crop", {{"num_args", "1"}, {"h_w", "(2,2)"}, {"center_crop", "True"}}).Shape("arg0", TShape({1, 2, 4, 5}))
          .Variant("center"));
  c.push_back(Case("Pooling", {{"kernel", "(3,3)"}, {"pool_type", "avg"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
                       {"count_include_pad", "False"}})
          .Shape("data", TShape({1, 2, 4, 4})).Variant("avg pad exclude"));
  c.push_back(Case("Pooling", {{"kernel", "(2,2)"}, {"pool_type", "max"}, {"stride", "(2,2)"}, {"pooling_convention", "full"}})
          .Shape("data", TShape({1, 1, 5, 5})).With("data", Fill::kDistinct).Variant("max full"));
  c.push_back(Case("Pooling", {{"kernel", "(2,)"}, {"pool_type", "max"}, {"pad", "(1,)"}, {"stride", "(1,)"}})
          .Shape("data", TShape({1, 2, 4})).With("data", Fill::kDistinct).Variant("1-D max pad"));
}

void NonDefaultCases2(CaseList& c) {
  c.push_back(Case("Pooling", {{"kernel", "(2,2,2)"}, {"pool_type", "avg"}}).Shape("data", TShape({1, 1, 3, 3, 3}))
          .Variant("3-D avg"));
  c.push_back(Case("Pooling", {{"global_pool", "True"}, {"pool_type", "max"}}).Shape("data", TShape({1, 2, 3, 3}))
          .With("data", Fill::kDistinct).Variant("global max"));
  c.push_back(Case("Convolution", {{"kernel", "(2,2,2)"}, {"num_filter", "2"}, {"pad", "(1,0,1)"}})
          .Shape("data", TShape({1, 1, 3, 3, 2})).Variant("3-D"));
  c.push_back(Case("Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "4"}, {"pad", "(1,1)"}})
          .Shape("data", TShape({1, 4, 4, 4})).Variant("depthwise"));
  c.push_back(Case("Convolution", {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"pad", "(1,1)"}})
          .Shape("data", TShape({1, 2, 6, 6})).Variant("3x3 same"));
  c.push_back(Case("Convolution", {{"kernel", "(1,1)"}, {"num_filter", "3"}}).Shape("data", TShape({2, 2, 2, 2}))
          .Variant("1x1 batch 2"));
  c.push_back(Case("Deconvolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "2"}, {"stride", "(2,2)"},
                             {"adj", "(1,1)"}, {"dilate", "(1,2)"}})
          .Shape("data", TShape({1, 2, 2, 2})).Variant("grouped adj dilated"));
  c.push_back(Case("Deconvolution", {{"kernel", "(2,)"}, {"num_filter", "1"}, {"stride", "(2,)"}, {"target_shape", "(5,)"}})
          .Shape("data", TShape({1, 2, 3})).Variant("1-D target_shape"));
  c.push_back(Case("FullyConnected", {{"num_hidden", "3"}}).Shape("data", k234).Variant("flatten 3-D"));
  c.push_back(Case("BatchNorm", {{"fix_gamma", "False"}, {"axis", "-1"}}).Shape("data", TShape({2, 2, 3}))
          .With("moving_var", Fill::kPositive).Train().Variant("axis=-1"));
  c.push_back(Case("BatchNorm").Shape("data", TShape({3, 2, 2, 2})).With("moving_var", Fill::kPositive).Train()
          .Variant("fix_gamma 4-D"));
  c.push_back(Case("LayerNorm", {{"axis", "0"}}).Shape("data", k234).Variant("axis=0"));
  c.push_back(Case("InstanceNorm").Shape("data", TShape({2, 2, 2, 3})).Variant("4-D"));
  c.push_back(Case("L2Normalization", {{"mode", "spatial"}}).Shape("data", TShape({2, 3, 2, 2})).Variant("spatial"));
  c.push_back(Case("LRN", {{"nsize", "5"}, {"alpha", "0.1"}, {"beta", "0.5"}, {"knorm", "1.5"}})
          .Shape("data", TShape({2, 3, 2, 1})).Variant("wide"));
  c.push_back(Case("SequenceReverse").Shape("data", tnc).Variant("whole"));
  c.push_back(Case("SequenceMask", {{"use_sequence_length", "True"}, {"axis", "1"}, {"value", "-1"}})
          .Shape("data", TShape({2, 3, 2})).Fixed("sequence_length", TShape({2}), {1, 3}).Variant("axis=1"));
  c.push_back(Case("SequenceLast", {{"use_sequence_length", "True"}, {"axis", "1"}}).Shape("data", TShape({2, 3, 2}))
          .Fixed("sequence_length", TShape({2}), {2, 1}).Variant("axis=1"));
  c.push_back(Case("CTCLoss", {{"blank_label", "last"}}).Shape("data", TShape({5, 2, 4}))
          .Fixed("label", TShape({2, 3}), {0, 1, 0, 2, 2, -1}).Variant("blank last"));
  c.push_back(Case("CTCLoss", {{"use_data_lengths", "True"}, {"use_label_lengths", "True"}}).Shape("data", TShape({5, 2, 4}))
          .Fixed("label", TShape({2, 3}), {1, 2, 1, 3, 3, 0}).Fixed("data_lengths", TShape({2}), {5, 4})
          .Fixed("label_lengths", TShape({2}), {3, 2}).Variant("lengths"));
  c.push_back(Case("softmax_cross_entropy").Shape("data", TShape({3, 4})).Fixed("label", TShape({3}), {3, 1, 0})
          .Variant("3 by 4"));
  c.push_back(Case("smooth_l1", {{"scalar", "2"}}).Shape("data", k23).With("data", Fill::kClipSafe).Variant("scalar=2"));
  c.push_back(Case("_contrib_BilinearResize2D", {{"height", "5"}, {"width", "3"}, {"align_corners", "False"}})
          .Shape("data", TShape({1, 2, 3, 2})).Variant("align_corners=False"));
  c.push_back(Case("_contrib_AdaptiveAvgPooling2D", {{"output_size", "(3,2)"}}).Shape("data", TShape({1, 2, 5, 4}))
          .Variant("overlapping"));
  c.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}, {"multi_input_mode", "sum"}})
          .Shape("arg0", TShape({1, 1, 2, 2})).Shape("arg1", TShape({1, 1, 1, 1})).Variant("2 inputs sum"));
}

void NonDefaultCases3(CaseList& c) {
  c.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}})
          .Shape("arg0", TShape({1, 1, 2, 2})).Shape("arg1", TShape({1, 2, 4, 4})).Variant("2 inputs concat"));
  c.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "2"}, {"num_args", "1"}})
          .Shape("data", TShape({1, 2, 2, 2})).Variant("bilinear"));
  c.push_back(Case("ROIPooling", {{"pooled_size", "(2,3)"}, {"spatial_scale", "0.5"}})
          .Shape("data", TShape({2, 1, 4, 4})).With("data", Fill::kDistinct)
          .Fixed("rois", TShape({2, 5}), {1, 0, 0, 6, 4, 0, 2, 2, 7, 7}).Variant("2 rois scaled"));
  c.push_back(Case("_contrib_ROIAlign", {{"pooled_size", "(2,2)"}, {"spatial_scale", "0.5"}, {"sample_ratio", "-1"}})
          .Shape("data", TShape({2, 2, 4, 4})).Fixed("rois", TShape({2, 5}), {1, 0.6f, 0.8f, 5.4f, 5.2f, 0, 1.3f, 0.7f, 4.1f, 6.5f})
          .Variant("adaptive samples"));
  c.push_back(Case("_contrib_ROIAlign", {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}, {"sample_ratio", "2"},
                                 {"position_sensitive", "True"}})
          .Shape("data", TShape({1, 4, 4, 4})).Fixed("rois", TShape({1, 5}), {0, 0.3f, 0.4f, 2.7f, 2.6f})
          .Variant("position sensitive"));
  c.push_back(Case("_contrib_DeformableConvolution", {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"pad", "(1,1)"},
                                              {"num_deformable_group", "2"}, {"no_bias", "True"}})
          .Shape("data", TShape({1, 2, 3, 3})).Shape("offset", TShape({1, 36, 3, 3})).With("offset", Fill::kPositive)
          .Variant("2 deformable groups"));
  c.push_back(Case("LeakyReLU", {{"act_type", "prelu"}}).Shape("data", TShape({2, 3, 2})).Shape("gamma", TShape({1}))
          .Variant("prelu shared slope"));
  c.push_back(Case("RNN", {{"state_size", "3"}, {"num_layers", "1"}, {"mode", "gru"}, {"bidirectional", "True"},
                   {"state_outputs", "True"}})
          .Shape("data", TShape({2, 2, 2})).Variant("gru bidirectional state_outputs"));
  c.push_back(Case("RNN", {{"state_size", "2"}, {"num_layers", "2"}, {"mode", "rnn_tanh"}, {"state_outputs", "True"}})
          .Shape("data", TShape({3, 2, 3})).Variant("rnn_tanh 2 layers state_outputs"));
  c.push_back(Case("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(3,2)"}}).Shape("data", TShape({2, 6}))
          .Variant("batch 2"));
  c.push_back(Case("BilinearSampler").Shape("data", TShape({2, 2, 3, 4})).Shape("grid", TShape({2, 2, 3, 2}))
          .Variant("batch 2 channels 2"));
  c.push_back(Case("SpatialTransformer", {{"transform_type", "affine"}, {"sampler_type", "bilinear"}, {"target_shape", "(3,2)"}})
          .Shape("data", TShape({2, 2, 3, 4})).Shape("loc", TShape({2, 6})).With("loc", Fill::kNearIdentityAffine)
          .Variant("batch 2"));
  c.push_back(Case("Dropout", {{"p", "0.3"}, {"axes", "(1,)"}}).Shape("data", k234).Train().Variant("axes"));
  c.push_back(Case("Dropout", {{"p", "0.5"}, {"mode", "always"}}).Shape("data", k23).Variant("always"));
  c.push_back(Case("LeakyReLU", {{"act_type", "rrelu"}}).Shape("data", k234).Train().Variant("rrelu training"));
  c.push_back(Case("LeakyReLU", {{"act_type", "elu"}, {"slope", "0.7"}}).Shape("data", k23).Variant("elu slope"));
  c.push_back(Case("where").Shape("x", k23).Shape("y", k23).Fixed("condition", TShape({2}), {0, 1}).Variant("row condition"));
  c.push_back(Case("take", {{"mode", "clip"}}).Shape("a", TShape({3, 2})).Fixed("indices", TShape({4}), {-2, 5, 1, 1})
          .Variant("clip repeated"));
  c.push_back(Case("Embedding", {{"input_dim", "3"}, {"output_dim", "2"}}).Fixed("data", TShape({2, 2}), {0, 2, 2, 2})
          .Variant("2-D repeated"));
  c.push_back(Case("norm", {{"ord", "2"}, {"axis", "-1"}, {"keepdims", "True"}}).Shape("data", k234).Variant("keepdims"));
  c.push_back(Case("nansum", {{"axis", "0"}}).Shape("data", k234).Variant("axis=0"));
  c.push_back(Case("broadcast_axis", {{"axis", "(0,2)"}, {"size", "(2,3)"}}).Shape("data", TShape({1, 3, 1})).Variant("2 axes"));
  c.push_back(Case("broadcast_to", {{"shape", "(2,0,4)"}}).Shape("data", TShape({1, 3, 1})).Variant("0 keeps"));
}

void NonDefaultCases4(CaseList& c) {
  c.push_back(Case("RNN", {{"state_size", "2"}, {"num_layers", "1"}, {"mode", "lstm"}, {"state_outputs", "True"}})
          .Shape("data", TShape({2, 3, 1})).Variant("lstm state_outputs batch 3"));
  c.push_back(Case("RNN", {{"state_size", "2"}, {"num_layers", "1"}, {"mode", "rnn_relu"}, {"bidirectional", "True"}})
          .Shape("data", TShape({3, 2, 2})).Variant("rnn_relu bidirectional"));
  c.push_back(Case("InstanceNorm", {{"eps", "0.01"}}).Shape("data", TShape({1, 2, 5})).Variant("batch 1"));
  c.push_back(Case("_contrib_div_sqrt_dim").Shape("data", k234).Variant("3-D"));
  c.push_back(Case("SwapAxis", {{"dim1", "1"}, {"dim2", "-1"}}).Shape("data", k234).Variant("negative"));
  c.push_back(Case("squeeze", {{"axis", "(1,3)"}}).Shape("data", TShape({2, 1, 3, 1})).Variant("axes"));
  c.push_back(Case("smooth_l1").Shape("data", k234).With("data", Fill::kDistinct).Variant("wide range"));
  c.push_back(Case("_mod").Shape("lhs", k23).Shape("rhs", k23).With("rhs", Fill::kAboveOne));
  c.push_back(Case("hard_sigmoid", {{"alpha", "2"}, {"beta", "0.3"}}).Shape("data", k23).Variant("steep"));
  c.push_back(Case("_contrib_quadratic", {{"a", "0.5"}, {"b", "-1"}, {"c", "0.3"}}).Shape("data", k23));
  c.push_back(Case("diag", {{"k", "1"}}).Shape("data", TShape({3, 4})));
  c.push_back(Case("diag", {{"k", "-1"}}).Shape("data", TShape({3})).Variant("from 1-D"));
  c.push_back(Case("diag", {{"axis1", "2"}, {"axis2", "0"}}).Shape("data", k234).Variant("3-D"));
  c.push_back(Case("depth_to_space", {{"block_size", "2"}}).Shape("data", TShape({1, 4, 1, 2})));
  c.push_back(Case("space_to_depth", {{"block_size", "2"}}).Shape("data", TShape({1, 1, 2, 4})));
  c.push_back(Case("moments", {{"axes", "(1,)"}}).Shape("data", k234));
  // Indices clear of the integers they truncate to: zero gradient, as the finite differences.
  c.push_back(Case("_ravel_multi_index", {{"shape", "(3,3)"}}).Shape("data", k23).With("data", Fill::kIndexLike));
  c.push_back(Case("_unravel_index", {{"shape", "(2,3)"}}).Shape("data", TShape({3})).With("data", Fill::kIndexLike));
  c.push_back(Case("_image_normalize", {{"mean", "(0.1,0.2,0.3)"}, {"std", "(2,3,4)"}}).Shape("data", TShape({3, 2, 2})));
  c.push_back(Case("amp_cast", {{"dtype", "float32"}}).Shape("data", k23));
  c.push_back(Case("amp_multicast", {{"num_outputs", "2"}}).Shape("data_0", k23).Shape("data_1", TShape({3})));
  c.push_back(Case("_contrib_index_copy").Shape("old_tensor", TShape({4, 3})).Fixed("index_vector", TShape({2}), {3, 1})
          .Shape("new_tensor", k23));
  c.push_back(Case("im2col", {{"kernel", "(2,2)"}, {"pad", "(1,0)"}}).Shape("data", TShape({1, 2, 3, 3})));
  c.push_back(Case("col2im", {{"kernel", "(2,2)"}, {"output_size", "(3,3)"}}).Shape("data", TShape({1, 8, 4})));
  // data1 above data2: |data1 - data2| stays clear of its kink.
  for (const char* mul : {"True", "False"})
    c.push_back(Case("Correlation", {{"kernel_size", "3"}, {"max_displacement", "1"}, {"pad_size", "1"}, {"is_multiply", mul}})
            .Shape("data1", TShape({1, 2, 3, 3})).Shape("data2", TShape({1, 2, 3, 3})).With("data1", Fill::kAboveOne)
            .Variant(mul));
  // Multi-head attention on interleaved projections: 2 heads of 2 dims.
  for (const char* op : {"_contrib_interleaved_matmul_selfatt_qk", "_contrib_interleaved_matmul_selfatt_valatt"})
    c.push_back(Case(op, {{"heads", "2"}}).Shape("queries_keys_values", TShape({2, 2, 12})));
  c.push_back(Case("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}}).Shape("queries", TShape({2, 2, 4}))
          .Shape("keys_values", TShape({3, 2, 8})));
  c.push_back(Case("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}}).Shape("keys_values", TShape({3, 2, 8}))
          .Shape("attention", TShape({4, 2, 3})));
}

void LinalgCases(CaseList& c) {
  // Linear algebra (tests/ops/linalg/ checks them in float64 too).
  c.push_back(Case("_linalg_gemm", {{"transpose_a", "True"}, {"alpha", "-2"}, {"beta", "0.5"}})
          .Shape("A", TShape({3, 2})).Shape("B", TShape({3, 2})));
  c.push_back(Case("_linalg_gemm", {{"axis", "0"}}).Shape("A", TShape({2, 2, 3})).Shape("B", TShape({3, 2, 2}))
          .Variant("axis=0"));
  c.push_back(Case("_linalg_gemm2", {{"transpose_b", "True"}, {"alpha", "3"}}).Shape("A", TShape({2, 2, 3}))
          .Shape("B", TShape({2, 2, 3})));
  c.push_back(Case("_linalg_potri").Shape("A", k233).With("A", Fill::kDiagDominant));
  c.push_back(Case("_linalg_potri", {{"lower", "False"}}).Shape("A", k33).With("A", Fill::kDiagDominant).Variant("upper"));
  c.push_back(Case("_linalg_trmm", {{"transpose", "True"}, {"alpha", "2"}}).Shape("A", k33).Shape("B", TShape({3, 2})));
  c.push_back(Case("_linalg_trmm", {{"rightside", "True"}, {"lower", "False"}}).Shape("A", k33).Shape("B", TShape({2, 3}))
          .Variant("rightside upper"));
  c.push_back(Case("_linalg_trsm", {{"alpha", "-0.5"}}).Shape("A", k233).Shape("B", TShape({2, 3, 2}))
          .With("A", Fill::kDiagDominant));
  c.push_back(Case("_linalg_trsm", {{"rightside", "True"}, {"transpose", "True"}, {"lower", "False"}}).Shape("A", k33)
          .Shape("B", TShape({2, 3})).With("A", Fill::kDiagDominant).Variant("rightside transpose upper"));
  c.push_back(Case("_linalg_sumlogdiag").Shape("A", k233).With("A", Fill::kPositive));
  c.push_back(Case("_linalg_syrk", {{"alpha", "2"}}).Shape("A", k23));
  c.push_back(Case("_linalg_syrk", {{"transpose", "True"}}).Shape("A", TShape({2, 2, 3})).Variant("transpose"));
  c.push_back(Case("_linalg_gelqf").Shape("A", TShape({2, 2, 3})));
  c.push_back(Case("_linalg_inverse").Shape("A", k233).With("A", Fill::kDiagDominant));
  c.push_back(Case("_linalg_det").Shape("A", k233).With("A", Fill::kDiagDominant));
  c.push_back(Case("_linalg_slogdet").Shape("A", k233).With("A", Fill::kDiagDominant));
  c.push_back(Case("_linalg_extractdiag", {{"offset", "1"}}).Shape("A", k233));
  c.push_back(Case("_linalg_makediag", {{"offset", "-1"}}).Shape("A", k23));
  c.push_back(Case("_linalg_extracttrian", {{"offset", "-1"}}).Shape("A", k233));
  c.push_back(Case("_linalg_maketrian", {{"lower", "False"}}).Shape("A", TShape({2, 6})));
}

CaseList Cases() {
  CaseList c;
  ElementwiseCases(c);
  BroadcastCases(c);
  ReductionCases(c);
  LayoutCases(c);
  IndexingCases(c);
  LayerCases(c);
  NormalisationCases(c);
  NonDefaultCases1(c);
  NonDefaultCases2(c);
  NonDefaultCases3(c);
  NonDefaultCases4(c);
  LinalgCases(c);
  return c;
}

// Ops with a backward that finite differences cannot check, each with the reason.
const std::map<std::string, std::string> kExempt = {
    {"BlockGrad", "stops the gradient by design: forward is the identity, backward is zero"},
    {"make_loss", "loss head: its gradient is the loss's (grad_scale), not the head gradient's "
                  "(tests/ops/loss/test_make_loss.cc checks it with its own loss)"},
    {"MakeLoss", "loss head, as make_loss"},
    {"SoftmaxOutput", "loss head: gradient p - label ignores the head gradient "
                      "(tests/ops/loss/test_softmax_output.cc)"},
    {"LinearRegressionOutput", "loss head (tests/ops/loss/test_regression_output.cc)"},
    {"LogisticRegressionOutput", "loss head (tests/ops/loss/test_regression_output.cc)"},
    {"MAERegressionOutput", "loss head (tests/ops/loss/test_regression_output.cc)"},
    {"WarpCTC", "loss head: CTC gradient ignores the head gradient (tests/ops/loss/test_ctc_loss.cc)"},
    {"_contrib_MultiBoxDetection", "detection output: MXNet defines a zero gradient for the "
                                   "selected boxes, which are piecewise in the scores"},
    {"_contrib_Proposal", "detection output: zero gradient by definition (as MXNet), the "
                          "proposals are a selection"},
    {"_contrib_MultiProposal", "as _contrib_Proposal"},
    {"_contrib_box_nms", "a selection: the gradient routes to the kept boxes, finite differences "
                         "of sorted, suppressed boxes are not defined at the ties the default "
                         "thresholds create (tests/ops/contrib/test_box_nms.cc)"},
    {"_linalg_potrf", "reads only A's lower (or upper) triangle, while its gradient is symmetric, as MXNet "
                      "defines it: finite differences of one element differ by design "
                      "(tests/ops/linalg/test_cholesky.cc checks it with symmetric perturbations)"},
    {"_linalg_syevd", "as _linalg_potrf: one triangle read, a symmetric gradient "
                      "(tests/ops/linalg/test_syevd.cc)"},
    {"shape_array", "integer output (the input's shape), zero gradient"},
    {"size_array", "integer output (the input's size), zero gradient"},
    {"_contrib_index_array", "integer output (each element's own index), zero gradient"},
    {"SVMOutput", "loss head: the SVM gradient from the label ignores the head gradient "
                  "(tests/ops/loss/test_svm_output.cc)"},
    {"_contrib_box_iou", "box overlaps: zero gradient, as MXNet's backward (tests/ops/contrib/test_box_ops.cc)"},
    {"_contrib_bipartite_matching", "a matching (indices): zero gradient, as MXNet's backward"},
    {"_contrib_boolean_mask", "dynamic output shape: no bound graph can run it, so the sweep's executors cannot; "
                              "tests/ops/contrib/test_boolean_mask.cc checks its gradient by finite differences "
                              "through imperative calls"},
    {"_contrib_box_encode", "training targets made outside the differentiated path: zero gradient "
                            "(tests/ops/contrib/test_box_ops.cc)"},
    {"_contrib_box_decode", "as _contrib_box_encode: zero gradient"},
    {"_contrib_MultiBoxTarget", "SSD training targets (a matching): zero gradient, as MXNet's backward "
                                "(tests/ops/contrib/test_multibox_target.cc)"},
    {"_contrib_gradientmultiplier", "scales the gradient by design, so it differs from the identity's finite "
                                    "differences (tests/ops/contrib/test_box_ops.cc checks it)"},
    {"_sample_multinomial", "random draws: finite differences would redraw; the log-probability's gradient, "
                            "head / p at each drawn class, is checked in tests/ops/random/test_sample_multinomial.cc"},
    {"_random_uniform_like", "random samples in data's shape: zero gradient (as MXNet), and each "
                             "run draws anew, so finite differences would see only noise"},
    {"_random_normal_like", "as _random_uniform_like"},
    {"_random_gamma_like", "as _random_uniform_like"},
    {"_random_exponential_like", "as _random_uniform_like"},
    {"_random_poisson_like", "as _random_uniform_like"},
    {"_random_negative_binomial_like", "as _random_uniform_like"},
    {"_random_generalized_negative_binomial_like", "as _random_uniform_like"},
};

NDArray FillInput(Fill fill, const TShape& shape, uint64_t seed) {
  switch (fill) {
    case Fill::kPositive: return RandomArray(shape, seed, 0.2f, 0.9f);
    case Fill::kAboveOne: return RandomArray(shape, seed, 1.2f, 2.0f);
    case Fill::kDistinct: return DistinctArray(shape, seed);
    case Fill::kRModSafe: return RandomArray(shape, seed, 0.64f, 0.82f);
    case Fill::kClipSafe: {
      NDArray a = AwayFromZero(shape, seed, -0.9f, 0.9f);
      for (int64_t i = 0; i < a.Size(); ++i)
        if (std::fabs(std::fabs(a.GetFlat(i)) - 0.5f) < 0.05f) a.SetFlat(i, a.GetFlat(i) * 0.8f);
      return a;
    }
    case Fill::kIndexLike: {
      NDArray a = RandomArray(shape, seed, 0.0f, 3.0f);
      for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, std::floor(a.GetFlat(i)) + 0.3f);
      return a;
    }
    case Fill::kNearIdentityAffine: {
      NDArray a = RandomArray(shape, seed, -0.1f, 0.1f);
      for (int64_t i = 0; i < a.Size(); i += 6) {
        a.SetFlat(i, a.GetFlat(i) + 0.8f);
        a.SetFlat(i + 4, a.GetFlat(i + 4) + 0.8f);
      }
      return a;
    }
    case Fill::kDiagDominant: {
      NDArray a = AwayFromZero(shape, seed, -0.9f, 0.9f);
      const int64_t n = shape[shape.ndim() - 1];
      for (int64_t i = 0; i < a.Size(); i += n * n)
        for (int64_t k = 0; k < n; ++k) a.SetFlat(i + k * (n + 1), a.GetFlat(i + k * (n + 1)) + 3.0f);
      return a;
    }
    case Fill::kAway: break;
  }
  return AwayFromZero(shape, seed, -0.9f, 0.9f);
}

// The inputs of a case: fixed shapes, the rest inferred, each filled as the case says.
std::map<std::string, NDArray> CaseInputs(const SweepCase& s) {
  Symbol sym = SingleOpSymbol(s.op, s.params);
  std::map<std::string, TShape> known;
  for (auto& kv : s.shapes) known["op_" + kv.first] = kv.second;
  ShapeInferResult shapes = InferShape(sym, known);
  std::map<std::string, NDArray> inputs;
  auto names = sym.ListArguments();
  auto aux = sym.ListAuxiliaryStates();
  std::vector<TShape> all = shapes.arg_shapes;
  names.insert(names.end(), aux.begin(), aux.end());
  all.insert(all.end(), shapes.aux_shapes.begin(), shapes.aux_shapes.end());
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name = names[i].substr(3);
    auto v = s.values.find(name);
    if (v != s.values.end()) {
      REQUIRE(static_cast<int64_t>(v->second.size()) == all[i].Size());
      inputs[name] = NDArray(all[i], v->second);
      continue;
    }
    auto f = s.fills.find(name);
    inputs[name] = FillInput(f == s.fills.end() ? Fill::kAway : f->second, all[i], 11 + i);
  }
  return inputs;
}

std::string CaseName(const SweepCase& s) {
  return s.variant.empty() ? s.op : s.op + " (" + s.variant + ")";
}

}  // namespace

TEST_CASE("Every operator with a backward is gradient-checked or exempt", "[ops][sweep]") {
  std::set<std::string> checked, names;
  for (auto& s : Cases()) {
    CHECK(names.insert(CaseName(s)).second);  // sections are told apart by name
    const Op* op = OpRegistry::Global().Find(s.op);
    INFO("sweep case " << CaseName(s));
    REQUIRE(op != nullptr);
    CHECK(op->name == s.op);  // canonical names only, so the lists match the registry
    CHECK(op->backward);
    CHECK(kExempt.count(s.op) == 0);
    checked.insert(s.op);
  }
  for (auto& kv : kExempt) {
    const Op* op = OpRegistry::Global().Find(kv.first);
    INFO("exempt op " << kv.first);
    REQUIRE(op != nullptr);
    CHECK(op->backward);
  }
  std::vector<std::string> missing;
  for (const Op* op : OpRegistry::Global().ListOps())
    if (op->backward && !checked.count(op->name) && !kExempt.count(op->name)) missing.push_back(op->name);
  INFO("operators with a backward that the sweep neither checks nor exempts (add a case or an "
       "exemption with its reason): " << JoinNames(missing));
  CHECK(missing.empty());
}

TEST_CASE("Gradients of every operator match finite differences", "[ops][sweep]") {
  for (const SweepCase& s : Cases()) {
    DYNAMIC_SECTION(CaseName(s)) {
      GradCheckOptions opt;
      opt.no_grad = s.no_grad;
      opt.is_train = s.is_train;
      const auto inputs = CaseInputs(s);
      CheckGradients(s.op, s.params, inputs, opt);
      // Again with some arguments not differentiated (req null, no gradient array bound):
      // first the first one, then all but the first. The kernels must write the others' gradients
      // and touch nothing of the skipped ones.
      std::vector<std::string> differentiated;
      for (auto& name : SingleOpSymbol(s.op, s.params).ListArguments())
        if (std::find(s.no_grad.begin(), s.no_grad.end(), name.substr(3)) == s.no_grad.end())
          differentiated.push_back(name.substr(3));
      if (differentiated.size() >= 2) {
        GradCheckOptions first_skipped = opt;
        first_skipped.no_grad.push_back(differentiated[0]);
        CheckGradients(s.op, s.params, inputs, first_skipped);
        GradCheckOptions only_first = opt;
        only_first.no_grad.insert(only_first.no_grad.end(), differentiated.begin() + 1, differentiated.end());
        CheckGradients(s.op, s.params, inputs, only_first);
      }
    }
  }
}
