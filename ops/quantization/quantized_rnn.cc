// _contrib_quantized_rnn: MXNet 1.9.1's int8 LSTM, as its oneDNN kernel (a u8s8 LSTM) computes
// it. The data arrive as uint8 levels with a zero point (_contrib_quantize_asym: x * scale +
// shift); the float32 weights are quantized once per node to int8 with one scale per gate
// channel; every product sums exactly in int32; the hidden state travels between steps and layers
// as uint8 levels of the data's scale and shift, the cell state in float32 (docs/quantization.md).
//
// Inputs data (uint8, (T, N, C)), parameters (float32, RNN's packed layout), state and
// state_cell (float32), then the data's scale and shift (float32, shape (1,)), which MXNet lists
// as min_data and max_data. Outputs float32: output and, with state_outputs, state_output and
// statecell_output (MXNet spells it "statecell_ouput").
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/kernels/gemm_int8.h>
#include <symbind/ops/quantization/quantization_util.h>
#include <symbind/ops/sequence/rnn.h>

namespace symbind {
namespace quant {
namespace {
using rnn::RNNDims;

// RNN's fields and `quantized`, which MXNet's quantize_model sets on the nodes it writes.
struct QuantizedRNNParam : rnn::RNNFields, Parameter<QuantizedRNNParam> {
  bool quantized;
  static void Declare(ParamDeclarer<QuantizedRNNParam>& d) {
    rnn::DeclareRNNFields(d);
    d.field("quantized", &QuantizedRNNParam::quantized).set_default(true)
        .describe("Set by MXNet's quantization pass on the nodes it writes; the op is int8 either way.");
  }
};
using RNNParam = QuantizedRNNParam;

enum Input { kData, kParams, kState, kStateCell, kDataScale, kDataShift };

void CheckLstm(const RNNParam& p) {
  if (p.mode != rnn::kLstm)
    throw ShapeError("_contrib_quantized_rnn: only mode='lstm' has an int8 form (as in MXNet 1.9.1)");
  if (p.use_sequence_length)
    throw ShapeError("_contrib_quantized_rnn: use_sequence_length is not supported (as in MXNet 1.9.1)");
  rnn::CheckSupported(p);
}

std::vector<std::string> Outputs(const NodeAttrs& attrs) {
  if (!attrs.param<RNNParam>().state_outputs) return {"output"};
  return {"output", "state_output", "statecell_ouput"};
}

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<RNNParam>();
  CheckLstm(p);
  ShapeAssignCheck(in, kDataScale, RangeShape());
  ShapeAssignCheck(in, kDataShift, RangeShape());
  const TShape& d = (*in)[kData];
  if (!d.ndim_known()) return;
  if (d.ndim() != 3)
    throw ShapeError(StrCat("_contrib_quantized_rnn: data must be (sequence length, batch, input size), got ", d));
  if (!d.is_known()) return;
  const RNNDims s(p, d);
  rnn::CheckSizes(s, "_contrib_quantized_rnn");
  const TShape state({s.L * s.D, s.N, s.H});
  ShapeAssignCheck(in, kParams, TShape({s.ParamSize()}));
  ShapeAssignCheck(in, kState, state);
  ShapeAssignCheck(in, kStateCell, state);
  ShapeAssignCheck(out, 0, TShape({s.T, s.N, s.D * s.H}));
  for (size_t i = 1; i < out->size(); ++i) ShapeAssignCheck(out, i, state);
}

void InferType(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  const int data = (*in)[kData], u8 = static_cast<int>(DType::kUint8), f32 = static_cast<int>(DType::kFloat32);
  if (data >= 0 && data != u8)
    throw TypeError(StrCat("input 'data' must be uint8 (levels of _contrib_quantize_asym), got ",
                           DTypeName(static_cast<DType>(data))));
  TypeAssignCheck(in, kData, u8);
  for (size_t i = kParams; i < in->size(); ++i) TypeAssignCheck(in, i, f32);
  for (size_t i = 0; i < out->size(); ++i) TypeAssignCheck(out, i, f32);
}

// The weights as the int8 products use them, made once per node (and again when they change).
struct QuantizedLstmWeights {
  // Levels per unit of each gate channel (G*H): 127 over the largest |w| of that channel's rows
  // of W_i2h and W_h2h in every layer and direction (one scale for the whole stack, as MXNet sets
  // oneDNN's weight scales once).
  std::vector<float> scale;
  struct Cell {
    std::vector<int8_t> wx, wh;   // (G*H, input size) and (G*H, H) levels
    std::vector<int32_t> sums;    // per gate channel: the sum of its levels in wx and wh
    std::vector<float> bias;      // b_i2h + b_h2h
  };
  std::vector<Cell> cells;        // layer-major, then direction
};

QuantizedLstmWeights QuantizeWeights(const float* w, const RNNDims& s) {
  const int64_t GH = s.GH();
  QuantizedLstmWeights q;
  std::vector<float> largest(static_cast<size_t>(GH), 0.0f);
  for (int64_t l = 0; l < s.L; ++l)
    for (int64_t d = 0; d < s.D; ++d) {
      const int64_t In = s.InputSize(l);
      const float* wx = w + s.WeightOffset(l, d);
      const float* wh = wx + GH * In;
      for (int64_t g = 0; g < GH; ++g) {
        float& m = largest[static_cast<size_t>(g)];
        for (int64_t i = 0; i < In; ++i) m = std::max(m, std::fabs(wx[g * In + i]));
        for (int64_t i = 0; i < s.H; ++i) m = std::max(m, std::fabs(wh[g * s.H + i]));
      }
    }
  q.scale.resize(static_cast<size_t>(GH));
  for (int64_t g = 0; g < GH; ++g) {
    const float m = largest[static_cast<size_t>(g)];
    q.scale[static_cast<size_t>(g)] = m > 0.0f ? 127.0f / m : 1.0f;  // an all-zero channel: levels 0
  }
  for (int64_t l = 0; l < s.L; ++l)
    for (int64_t d = 0; d < s.D; ++d) {
      const int64_t In = s.InputSize(l);
      const float* wx = w + s.WeightOffset(l, d);
      const float* wh = wx + GH * In;
      const float* bx = w + s.BiasOffset(l, d);
      QuantizedLstmWeights::Cell c;
      c.wx.resize(static_cast<size_t>(GH * In));
      c.wh.resize(static_cast<size_t>(GH * s.H));
      c.sums.assign(static_cast<size_t>(GH), 0);
      c.bias.resize(static_cast<size_t>(GH));
      for (int64_t g = 0; g < GH; ++g) {
        const float scale = q.scale[static_cast<size_t>(g)];
        uint32_t sum = 0;  // wraps as the products' sums do
        for (int64_t i = 0; i < In; ++i)
          sum += static_cast<uint32_t>(c.wx[static_cast<size_t>(g * In + i)] = SaturateRound<int8_t>(wx[g * In + i] * scale));
        for (int64_t i = 0; i < s.H; ++i)
          sum += static_cast<uint32_t>(c.wh[static_cast<size_t>(g * s.H + i)] = SaturateRound<int8_t>(wh[g * s.H + i] * scale));
        c.sums[static_cast<size_t>(g)] = static_cast<int32_t>(sum);
        c.bias[static_cast<size_t>(g)] = bx[g] + bx[GH + g];
      }
      q.cells.push_back(std::move(c));
    }
  return q;
}

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>& req,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<RNNParam>();
  const RNNDims s(p, in[kData].shape());
  const AsymmetricLevels data{RangeValue(in[kDataScale]), RangeValue(in[kDataShift])};
  if (!(std::isfinite(data.scale) && data.scale > 0.0f && std::isfinite(data.shift)))
    throw Error(StrCat(InOperator(attrs), ": the data's scale must be positive and its shift finite, got scale ",
                       data.scale, ", shift ", data.shift));
  const NDArray& params = in[kParams];
  const auto weights = DerivedForm<QuantizedLstmWeights>(NodeDerivedWeights(ctx, 0, params), WeightsFor(params, nullptr),
                                                         {s.I, s.H, s.L, s.D},
                                                         [&](const float* w) { return QuantizeWeights(w, s); });
  const int64_t GH = s.GH(), H = s.H, N = s.N, T = s.T, TN = T * N, NH = N * H, DH = s.D * H;
  const float* hx = in[kState].fdata();
  const float* cx = in[kStateCell].fdata();
  // Per gate channel, 1 / (weight scale x data scale): int32 sums to float32.
  std::vector<float> unit(static_cast<size_t>(GH));
  for (int64_t g = 0; g < GH; ++g) unit[static_cast<size_t>(g)] = 1.0f / (weights->scale[static_cast<size_t>(g)] * data.scale);
  std::vector<uint8_t> layer_in(in[kData].data<uint8_t>(), in[kData].data<uint8_t>() + TN * s.I);
  std::vector<uint8_t> layer_out(static_cast<size_t>(TN * DH));
  std::vector<float> hy(static_cast<size_t>(s.L * s.D * NH)), cy(hy.size());
  std::vector<int32_t> xw(static_cast<size_t>(TN * GH)), hw(static_cast<size_t>(N * GH));
  std::vector<uint8_t> h(static_cast<size_t>(NH));
  std::vector<float> c(static_cast<size_t>(NH));
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t In = s.InputSize(l);
    for (int64_t d = 0; d < s.D; ++d) {
      const QuantizedLstmWeights::Cell& cell = weights->cells[static_cast<size_t>(l * s.D + d)];
      GemmInt8NT(TN, GH, In, layer_in.data(), cell.wx.data(), xw.data());
      const int64_t at = (l * s.D + d) * NH;
      for (int64_t i = 0; i < NH; ++i) {
        h[static_cast<size_t>(i)] = data.Quantize(hx[at + i]);
        c[static_cast<size_t>(i)] = cx[at + i];
      }
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d ? T - 1 - step : step;
        GemmInt8NT(N, GH, H, h.data(), cell.wh.data(), hw.data());
        ParallelFor(N, rnn::RowGrain(s), [&](int64_t n0, int64_t n1) {
          std::vector<float> gate(static_cast<size_t>(GH));
          for (int64_t n = n0; n < n1; ++n) {
            const int32_t* a = xw.data() + (t * N + n) * GH;
            const int32_t* b = hw.data() + n * GH;
            for (int64_t g = 0; g < GH; ++g) {
              const size_t k = static_cast<size_t>(g);
              // The products' sums (added wrapping, as GemmInt8's: exact below 2^31) less the data's
              // shift times the weights' levels, in float32.
              const int32_t total = static_cast<int32_t>(static_cast<uint32_t>(a[g]) + static_cast<uint32_t>(b[g]));
              const float sum = static_cast<float>(total) - data.shift * static_cast<float>(cell.sums[k]);
              gate[k] = sum * unit[k] + cell.bias[k];
            }
            for (int64_t j = 0; j < H; ++j) {
              float& cell_state = c[static_cast<size_t>(n * H + j)];
              const rnn::LstmUnit u =
                  rnn::LstmStep(gate[static_cast<size_t>(j)], gate[static_cast<size_t>(H + j)],
                                gate[static_cast<size_t>(2 * H + j)], gate[static_cast<size_t>(3 * H + j)], cell_state);
              cell_state = u.c;
              const uint8_t level = data.Quantize(u.h);
              h[static_cast<size_t>(n * H + j)] = level;
              layer_out[static_cast<size_t>((t * N + n) * DH + d * H + j)] = level;
            }
          }
        });
      }
      for (int64_t i = 0; i < NH; ++i) {
        hy[static_cast<size_t>(at + i)] = data.Dequantize(h[static_cast<size_t>(i)]);
        cy[static_cast<size_t>(at + i)] = c[static_cast<size_t>(i)];
      }
    }
    layer_in.swap(layer_out);  // the next layer reads this one's levels
    layer_out.resize(static_cast<size_t>(TN * DH));
  }
  std::vector<float> y(static_cast<size_t>(TN * DH));
  for (size_t i = 0; i < y.size(); ++i) y[i] = data.Dequantize(layer_in[i]);
  AssignWithReq(out[0].fdata(), y.data(), out[0].Size(), req[0]);
  if (p.state_outputs) {
    AssignWithReq(out[1].fdata(), hy.data(), out[1].Size(), req[1]);
    AssignWithReq(out[2].fdata(), cy.data(), out[2].Size(), req[2]);
  }
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_rnn)
    .describe(R"(MXNet's int8 LSTM (mode='lstm' only): RNN on uint8 data levels q = x * scale + shift
(_contrib_quantize_asym), with the float32 weights quantized to int8 per gate channel (127 / max|w|
over that channel in every layer and direction) and summed exactly in int32; the hidden state
passes between steps and layers as uint8 levels of the same scale and shift, the cell state in
float32. Outputs float32: the hidden states dequantized, the final cell state as computed.)")
    .set_params<quant::QuantizedRNNParam>()
    .set_arguments({"data", "parameters", "state", "state_cell", "min_data", "max_data"})
    .add_argument_doc("data", "uint8 levels of the input sequence, (sequence length, batch, input size).")
    .add_argument_doc("parameters", "float32 weights and biases in RNN's packed layout.")
    .add_argument_doc("state", "float32 initial hidden state, (layers x directions, batch, state size).")
    .add_argument_doc("state_cell", "float32 initial cell state, shaped as state.")
    .add_argument_doc("min_data", "The data's scale (float32, shape (1,)), as _contrib_quantize_asym outputs it.")
    .add_argument_doc("max_data", "The data's shift (float32, shape (1,)), as _contrib_quantize_asym outputs it.")
    .set_outputs(quant::Outputs)
    .set_infer_shape(quant::InferShape)
    .set_infer_type(quant::InferType)
    .set_dtype_generic()
    .set_create_state(CreateDerivedWeightsState(1))
    .set_forward(quant::Forward);

}  // namespace symbind
