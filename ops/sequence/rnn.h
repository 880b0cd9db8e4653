// MXNet's RNN parameters and the packed-parameter arithmetic (layouts in docs/formats.md), shared
// by RNN (rnn.cc) and its int8 form _contrib_quantized_rnn (ops/quantization/quantized_rnn.cc).
//
//   const RNNDims s(attrs.param<RNNParam>(), data.shape());
//   const float* w_i2h = params + s.WeightOffset(layer, direction);   // (G*H, InputSize(layer))
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <symbind/ops/op_util.h>

namespace symbind {
namespace rnn {

enum RNNMode { kRnnRelu, kRnnTanh, kLstm, kGru };

// RNN's fields (MXNet's RNNParam), shared by RNN and _contrib_quantized_rnn.
struct RNNFields {
  int state_size;
  int num_layers;
  bool bidirectional;
  int mode;
  float p;
  bool state_outputs;
  std::optional<int> projection_size;
  std::optional<double> lstm_state_clip_min, lstm_state_clip_max;
  bool lstm_state_clip_nan;
  bool use_sequence_length;
};
// Declares them for a parameter type P deriving from RNNFields.
template <typename P>
void DeclareRNNFields(ParamDeclarer<P>& d) {
  d.template field<int>("state_size", &P::state_size).lower_bound(1)
      .describe("size of the state for each layer");
  d.template field<int>("num_layers", &P::num_layers).lower_bound(1)
      .describe("number of stacked layers");
  d.template field<bool>("bidirectional", &P::bidirectional).set_default(false)
      .describe("whether to use bidirectional recurrent layers");
  d.template field<int>("mode", &P::mode)
      .add_enum("rnn_relu", kRnnRelu).add_enum("rnn_tanh", kRnnTanh)
      .add_enum("lstm", kLstm).add_enum("gru", kGru)
      .describe("the type of RNN to compute");
  d.template field<float>("p", &P::p).set_default(0.0f).set_range(0, 1)
      .describe("drop rate of the dropout on the outputs of each RNN layer, except the last layer.");
  d.template field<bool>("state_outputs", &P::state_outputs).set_default(false)
      .describe("Whether to have the states as symbol outputs.");
  d.template field<std::optional<int>>("projection_size", &P::projection_size).set_default(std::nullopt)
      .describe("size of project size (not supported on CPU, as in MXNet)");
  d.template field<std::optional<double>>("lstm_state_clip_min", &P::lstm_state_clip_min).set_default(std::nullopt)
      .describe("Minimum clip value of LSTM states (not supported on CPU, as in MXNet).");
  d.template field<std::optional<double>>("lstm_state_clip_max", &P::lstm_state_clip_max).set_default(std::nullopt)
      .describe("Maximum clip value of LSTM states (not supported on CPU, as in MXNet).");
  d.template field<bool>("lstm_state_clip_nan", &P::lstm_state_clip_nan).set_default(false)
      .describe("Whether to stop NaN from propagating in state by clipping it to min/max. "
                "If clipping range is not specified, this option is ignored.");
  d.template field<bool>("use_sequence_length", &P::use_sequence_length).set_default(false)
      .describe("If set to true, this layer takes in an extra input parameter `sequence_length` "
                "to specify variable length sequence");
}

struct RNNParam : RNNFields, Parameter<RNNParam> {
  static void Declare(ParamDeclarer<RNNParam>& d) { DeclareRNNFields(d); }
};

inline bool IsLstm(const RNNFields& p) { return p.mode == kLstm; }
// The position of the sequence_length input (after state_cell for lstm).
inline size_t SequenceLengthInput(const RNNFields& p) { return IsLstm(p) ? 4 : 3; }
inline int NumVisibleOutputs(const RNNFields& p) { return p.state_outputs ? (IsLstm(p) ? 3 : 2) : 1; }

// Sizes and the offsets into the packed parameters and the reserve.
struct RNNDims {
  int64_t T, N, I, H, L, D, G;
  RNNDims(const RNNFields& p, const TShape& data)
      : T(data[0]), N(data[1]), I(data[2]), H(p.state_size), L(p.num_layers),
        D(p.bidirectional ? 2 : 1), G(p.mode == kLstm ? 4 : p.mode == kGru ? 3 : 1) {}
  int64_t InputSize(int64_t l) const { return l == 0 ? I : H * D; }
  int64_t GH() const { return G * H; }
  // Weights of one direction of layer l: W_i2h then W_h2h.
  int64_t DirectionWeights(int64_t l) const { return (InputSize(l) + H) * GH(); }
  int64_t WeightOffset(int64_t l, int64_t d) const {
    const int64_t before = l == 0 ? 0 : D * DirectionWeights(0) + (l - 1) * D * DirectionWeights(1);
    return before + d * DirectionWeights(l);
  }
  int64_t WeightTotal() const { return WeightOffset(L, 0); }
  int64_t BiasOffset(int64_t l, int64_t d) const { return WeightTotal() + (l * D + d) * 2 * GH(); }
  int64_t ParamSize() const { return BiasOffset(L, 0); }
  // Reserve: per layer and direction gates (T,N,G*H) after their activation, aux (T,N,H) (the
  // cell state for lstm, W_hn h + b_hn for gru) and h (T,N,H); then per layer the dropped
  // output (T,N,D*H) and the dropout mask (T,N,D*H).
  int64_t CellBlock() const { return T * N * H * (G + 2); }
  int64_t LayerOutSize() const { return T * N * D * H; }
  int64_t ReserveSize() const { return L * D * CellBlock() + 2 * L * LayerOutSize(); }
  float* Gates(float* r, int64_t l, int64_t d) const { return r + (l * D + d) * CellBlock(); }
  float* Aux(float* r, int64_t l, int64_t d) const { return Gates(r, l, d) + T * N * GH(); }
  float* Hidden(float* r, int64_t l, int64_t d) const { return Aux(r, l, d) + T * N * H; }
  float* Dropped(float* r, int64_t l) const { return r + L * D * CellBlock() + 2 * l * LayerOutSize(); }
  float* Mask(float* r, int64_t l) const { return Dropped(r, l) + LayerOutSize(); }
};

// The sizes RNNDims computes unchecked, computed once with overflow checks (a hostile state_size
// or num_layers is a ShapeError, not a wrapped size).
// `op` names the operator in the errors.
inline void CheckSizes(const RNNDims& s, const char* op = "RNN") {
  const std::string what = StrCat(op, ": packed parameter size");
  const int64_t gh = CheckedMul(s.G, s.H, what);
  auto layer = [&](int64_t in) {  // D * (in + H + 2) * G * H
    return CheckedMul(CheckedMul(s.D, CheckedAdd(CheckedAdd(in, s.H, what), 2, what), what), gh, what);
  };
  CheckedAdd(layer(s.I), CheckedMul(s.L - 1, layer(CheckedMul(s.D, s.H, what)), what), what);
  // RNN's reserve; the int8 LSTM's buffers of gate sums and states are as large.
  const std::string reserve = StrCat(op, ": state and gate buffer size");
  const int64_t tnh = CheckedMul(CheckedMul(s.T, s.N, reserve), s.H, reserve);
  const int64_t ld = CheckedMul(s.L, s.D, reserve);
  CheckedAdd(CheckedMul(ld, CheckedMul(tnh, s.G + 2, reserve), reserve), CheckedMul(2 * ld, tnh, reserve), reserve);
}

// Batch rows per task in the cell loops: a few thousand gate values each.
inline int64_t RowGrain(const RNNDims& s) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s.GH())); }

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// One LSTM unit from its gates' pre-activations in MXNet's order (input, forget, cell, output):
// the activated gates, the new cell state c = f * c_prev + i * g and the output h = o * tanh(c).
// The float32 and the int8 LSTM both step through it.
struct LstmUnit {
  float i, f, g, o, c, h;
};
inline LstmUnit LstmStep(float pre_i, float pre_f, float pre_g, float pre_o, float c_prev) {
  LstmUnit u;
  u.i = Sigmoid(pre_i);
  u.f = Sigmoid(pre_f);
  u.g = std::tanh(pre_g);
  u.o = Sigmoid(pre_o);
  u.c = u.f * c_prev + u.i * u.g;
  u.h = u.o * std::tanh(u.c);
  return u;
}

inline void CheckSupported(const RNNFields& p) {
  auto reject = [&](const char* what) {
    throw ShapeError(StrCat("RNN: ", what, " is supported by MXNet with cuDNN only, not by symbind"));
  };
  if (p.projection_size) reject("projection_size");
  if (p.lstm_state_clip_min || p.lstm_state_clip_max) reject("lstm_state_clip_min/max");
}

}  // namespace rnn
}  // namespace symbind
