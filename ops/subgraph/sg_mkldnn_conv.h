// _sg_mkldnn_conv's parameters, input slots and quantized output levels, shared by the op
// (sg_mkldnn_conv.cc) and the nodes that run several of them as one
// (_fused_quantized_inverted_residual):
//
//   const auto& p = attrs.param<SgConvParam>();            // with_sum, quantized, conv, act, ...
//   const SgConvSlots s(p);                                // where data_min, sum, ... sit
//   const auto l = QuantizedSgConvLevels(attrs, &state, inputs, data, sum, out_shape);
//   const quant::Int8Levels levels = l->At(y, pixels);     // then ConvInt8(..., &levels)
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/quantize_round.h>
#include <symbind/ops/nn/convolution_param.h>
#include <symbind/ops/quantization/quantization_util.h>
#include <symbind/ops/subgraph/sg_mkldnn_common.h>

namespace symbind {
namespace subgraph {

using conv::ConvolutionParam;

struct SgConvParam : quant::CalibRangeFields, Parameter<SgConvParam> {
  bool with_bn, with_act, with_sum, with_postsum_act, quantized;
  // From the nested graph:
  NodeAttrs conv;        // the Convolution, with a bias whenever BatchNorm folds into it
  bool conv_bias = false;  // the graph gives the Convolution a bias input
  double bn_eps = 0;
  bool fix_gamma = false;
  PostOp act, postsum_act;

  static void Declare(ParamDeclarer<SgConvParam>& d) {
    d.field("with_bn", &SgConvParam::with_bn).set_default(false).describe("A BatchNorm follows the convolution.");
    d.field("with_act", &SgConvParam::with_act).set_default(false)
        .describe("An activation follows (the BatchNorm or) the convolution, before any sum.");
    d.field("with_sum", &SgConvParam::with_sum).set_default(false).describe("Input 'sum' is added to the result.");
    d.field("with_postsum_act", &SgConvParam::with_postsum_act).set_default(false)
        .describe("An activation follows the sum.");
    d.field("quantized", &SgConvParam::quantized).set_default(false)
        .describe("int8/uint8 data; the float weights are quantized per output channel.");
    quant::DeclareCalibRange(d, "give the quantized output int8 or uint8 levels of that range (else int32 sums)");
  }

  static SgConvParam Parse(const KwArgs& kwargs);

  // oneDNN's output type: uint8 when the last activation never gives negative values.
  bool uint8_output() const { return with_sum ? postsum_act.NonNegative() : act.NonNegative(); }
};

// Input positions, ours: data, weight, [bias], [gamma, beta], [sum], [data_min, data_max],
// [sum_min, sum_max], then the aux states [mean, var]. MXNet lists mean and var after beta.
struct SgConvSlots {
  size_t bias = 0, gamma = 0, sum = 0, data_min = 0, sum_min = 0, mean = 0, count = 0;
  std::vector<std::string> names, aux;
  explicit SgConvSlots(const SgConvParam& p);
  // MXNet's position of each of ours (set_file_input_order).
  std::vector<size_t> FileOrder(const SgConvParam& p) const;
};

// A quantized input's shape, type and range (data_min / data_max).
struct QuantizedConvInput {
  TShape shape;
  DType type;
  float min, max;
};

// A quantized, calibrated node's output as levels its kernels make (ConvInt8's `levels`): the
// int32 bias and requantization scale per output channel, the output's and the sum's
// signedness, the sum's scale. `forms` holds the int8 weights and packed filters.
struct SgConvLevels {
  conv::ConvGeom geom;
  const SgWeightsState* forms = nullptr;
  std::vector<float> requant;
  quant::Int8Levels common;  // all but the scale (requant's) and the out and sum pointers
  DType out_type = DType::kInt8;
  // The levels writing to `out` (rows ld_out apart), adding `sum` (rows ld_sum apart) if any.
  quant::Int8Levels At(void* out, int64_t ld_out, const void* sum = nullptr, int64_t ld_sum = 0) const {
    quant::Int8Levels l = common;
    l.scale = requant.data();
    l.out = out;
    l.ld_out = ld_out;
    l.sum = sum;
    l.ld_sum = ld_sum;
    return l;
  }
};
// For node `attrs` on inputs `in` (its weights; data, sum and ranges are read from `data` and
// `sum` instead), with its derived forms on `state` (made again only when the weights or the
// data's scale changed). nullopt when the node's output is not levels the kernels make: not
// quantized, uncalibrated, with_sum and `sum` disagreeing, or an activation the kernels cannot
// apply (other than relu into uint8 or a clip without a sum; a relu after the sum).
std::optional<SgConvLevels> QuantizedSgConvLevels(const NodeAttrs& attrs, SgWeightsState* state,
                                                  const std::vector<NDArray>& in, const QuantizedConvInput& data,
                                                  const QuantizedConvInput* sum, const TShape& out_shape);

}  // namespace subgraph
}  // namespace symbind
