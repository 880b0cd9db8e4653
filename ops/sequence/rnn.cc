// RNN: MXNet's fused recurrent layer (rnn_relu, rnn_tanh, lstm, gru), multi-layer and
// bidirectional, on time-major data (T, N, C), with all weights in one packed vector.
//
// MXNet facts matched here (src/operator/rnn-inl.h, rnn_impl.h, rnn.cc):
// - inputs data, parameters, state, state_cell for lstm, and sequence_length with
//   use_sequence_length; outputs output and, with state_outputs, state_output (and
//   statecell_output for lstm);
// - the packed layout (docs/formats.md): for each layer, for each direction, W_i2h (G*H, in) then
//   W_h2h (G*H, H); after all weights, for each layer and direction, b_i2h (G*H) then b_h2h (G*H).
//   Gate order i, f, g, o (lstm) and r, z, n (gru); in = C for layer 0, D*H above;
// - gru: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h (cuDNN's form);
// - the reverse direction's final state is its state after t = 0;
// - p drops (inverted scaling) the outputs of every layer but the last, in training only.
// - use_sequence_length (cuDNN's padded layout): a batch entry n runs steps t < sequence_length[n]
//   only; its outputs at later steps are 0, its final state is the one after its last valid step,
//   and the reverse direction starts from the initial state at that last valid step.
// MXNet's CPU kernels reject projection_size and lstm_state_clip_* (cuDNN only); so does
// symbind, at shape inference. MXNet's CPU kernels reject use_sequence_length too; symbind
// computes it (MXNet programs such as cpp-package's charRNN pass it).
//
// A hidden output `reserve` keeps what backward needs (gates, cell states, hidden states, the
// dropped layer outputs and their masks), like the reserve space of MXNet's kernels.
#include <algorithm>
#include <cmath>
#include <random>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/op_util.h>
#include <symbind/ops/sequence/rnn.h>


namespace symbind {

namespace {
using namespace rnn;

std::vector<std::string> RNNArguments(const NodeAttrs& attrs) {
  const auto& p = attrs.param<RNNParam>();
  std::vector<std::string> names{"data", "parameters", "state"};
  if (IsLstm(p)) names.push_back("state_cell");
  if (p.use_sequence_length) names.push_back("sequence_length");
  return names;
}

std::vector<std::string> RNNOutputs(const NodeAttrs& attrs) {
  const auto& p = attrs.param<RNNParam>();
  std::vector<std::string> names{"output"};
  if (p.state_outputs) names.push_back("state_output");
  if (p.state_outputs && IsLstm(p)) names.push_back("statecell_output");
  names.push_back("reserve");
  return names;
}

void InferRNNShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<RNNParam>();
  CheckSupported(p);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 3)
    throw ShapeError(StrCat("RNN: data must be (sequence length, batch, input size), got ", d));
  if (!d.is_known()) return;
  RNNDims dims(p, d);
  CheckSizes(dims);
  const TShape state({dims.L * dims.D, dims.N, dims.H});
  ShapeAssignCheck(in, 1, TShape({dims.ParamSize()}));
  ShapeAssignCheck(in, 2, state);
  if (IsLstm(p)) ShapeAssignCheck(in, 3, state);
  if (p.use_sequence_length) ShapeAssignCheck(in, SequenceLengthInput(p), TShape({dims.N}));
  ShapeAssignCheck(out, 0, TShape({dims.T, dims.N, dims.D * dims.H}));
  if (p.state_outputs) ShapeAssignCheck(out, 1, state);
  if (p.state_outputs && IsLstm(p)) ShapeAssignCheck(out, 2, state);
  ShapeAssignCheck(out, out->size() - 1, TShape({dims.ReserveSize()}));
}


// One cell step for N rows: xw (N, G*H) = W_i2h x + b_i2h, hw (N, G*H) = W_h2h h + b_h2h.
// Writes the activated gates, aux and the new h (and c) at time t.
void CellForward(int mode, const RNNDims& s, const float* xw, const float* hw, const float* h_prev,
                 const float* c_prev, float* gates, float* aux, float* h) {
  const int64_t H = s.H, GH = s.GH();
  ParallelFor(s.N, RowGrain(s), [&](int64_t rows_begin, int64_t rows_end) {
    for (int64_t n = rows_begin; n < rows_end; ++n) {
      const float *a = xw + n * GH, *b = hw + n * GH;
      float* g = gates + n * GH;
      for (int64_t k = 0; k < H; ++k) {
        const int64_t j = n * H + k;
        switch (mode) {
          case kRnnRelu: g[k] = h[j] = std::max(0.0f, a[k] + b[k]); break;
          case kRnnTanh: g[k] = h[j] = std::tanh(a[k] + b[k]); break;
          case kLstm: {
            const LstmUnit u = LstmStep(a[k] + b[k], a[H + k] + b[H + k], a[2 * H + k] + b[2 * H + k],
                                        a[3 * H + k] + b[3 * H + k], c_prev[j]);
            g[k] = u.i, g[H + k] = u.f, g[2 * H + k] = u.g, g[3 * H + k] = u.o;
            aux[j] = u.c;
            h[j] = u.h;
            break;
          }
          case kGru: {
            const float r = Sigmoid(a[k] + b[k]), z = Sigmoid(a[H + k] + b[H + k]);
            const float nn = std::tanh(a[2 * H + k] + r * b[2 * H + k]);
            g[k] = r, g[H + k] = z, g[2 * H + k] = nn;
            aux[j] = b[2 * H + k];
            h[j] = (1 - z) * nn + z * h_prev[j];
            break;
          }
        }
      }
    }
  });
}

// xw (rows, G*H) = x (rows, in) W^T + bias.
void Affine(const float* x, int64_t rows, int64_t in, const float* w, const float* bias, int64_t gh,
            float* xw) {
  for (int64_t r = 0; r < rows; ++r) std::copy(bias, bias + gh, xw + r * gh);
  Gemm(false, true, rows, gh, in, 1.0f, x, in, w, in, 1.0f, xw, gh);
}

bool DropoutActive(const OpContext& ctx, const RNNParam& p) { return ctx.is_train && p.p > 0; }

// Per batch entry, the number of valid steps: sequence_length (truncated to an integer, as MXNet
// casts) or T. A length outside [1, T] is an error naming the node and the entry.
std::vector<int64_t> ValidSteps(const NodeAttrs& attrs, const RNNParam& p, const RNNDims& s,
                                const std::vector<NDArray>& in) {
  std::vector<int64_t> steps(static_cast<size_t>(s.N), s.T);
  if (!p.use_sequence_length) return steps;
  const std::vector<double> lengths = ValuesAsDouble(in[SequenceLengthInput(p)]);
  for (int64_t n = 0; n < s.N; ++n) {
    const double x = lengths[static_cast<size_t>(n)];
    if (!(x >= 1 && x < static_cast<double>(s.T) + 1))
      throw Error(StrCat(InOperator(attrs), ": sequence_length[", n, "] = ", x,
                         " is out of range (expected 1 to ", s.T, ", the length of the time axis)"));
    steps[static_cast<size_t>(n)] = static_cast<int64_t>(x);
  }
  return steps;
}

// Rows past their sequence at time t keep the previous state (h, and c for lstm): the forward
// direction carries its last valid state to the end, the reverse one its initial state down to
// the last valid step.
void HoldFinishedRows(const RNNDims& s, const std::vector<int64_t>& steps, int64_t t, const float* h_prev,
                      const float* c_prev, float* h, float* c) {
  for (int64_t n = 0; n < s.N; ++n) {
    if (t < steps[static_cast<size_t>(n)]) continue;
    std::copy(h_prev + n * s.H, h_prev + (n + 1) * s.H, h + n * s.H);
    if (c_prev) std::copy(c_prev + n * s.H, c_prev + (n + 1) * s.H, c + n * s.H);
  }
}

void RNNForward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<RNNParam>();
  const RNNDims s(p, in[0].shape());
  const std::vector<int64_t> steps = ValidSteps(attrs, p, s, in);
  const float* w = in[1].fdata();
  const float* hx = in[2].fdata();
  const float* cx = IsLstm(p) ? in[3].fdata() : nullptr;
  float* reserve = out.back().fdata();
  const int64_t GH = s.GH(), NH = s.N * s.H, TN = s.T * s.N, DH = s.D * s.H;
  std::vector<float> hy(static_cast<size_t>(s.L * s.D * NH)), cy(hy.size());
  std::vector<float> y(static_cast<size_t>(s.LayerOutSize()));
  std::vector<float> xw, hw(static_cast<size_t>(s.N * GH));
  std::mt19937_64 rng(ctx.seed);
  const float* x = in[0].fdata();
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t In = s.InputSize(l);
    xw.assign(static_cast<size_t>(TN * GH), 0.0f);
    for (int64_t d = 0; d < s.D; ++d) {
      const float* wx = w + s.WeightOffset(l, d);
      const float* wh = wx + GH * In;
      const float* bx = w + s.BiasOffset(l, d);
      const float* bh = bx + GH;
      Affine(x, TN, In, wx, bx, GH, xw.data());
      float *gates = s.Gates(reserve, l, d), *aux = s.Aux(reserve, l, d), *hs = s.Hidden(reserve, l, d);
      const float* h_prev = hx + (l * s.D + d) * NH;
      const float* c_prev = cx ? cx + (l * s.D + d) * NH : nullptr;
      for (int64_t step = 0; step < s.T; ++step) {
        const int64_t t = d ? s.T - 1 - step : step;
        Affine(h_prev, s.N, s.H, wh, bh, GH, hw.data());
        CellForward(p.mode, s, xw.data() + t * s.N * GH, hw.data(), h_prev, c_prev,
                    gates + t * s.N * GH, aux + t * NH, hs + t * NH);
        if (p.use_sequence_length) HoldFinishedRows(s, steps, t, h_prev, c_prev, hs + t * NH, aux + t * NH);
        h_prev = hs + t * NH;
        c_prev = aux + t * NH;
        for (int64_t n = 0; n < s.N; ++n) {
          float* y_row = y.data() + (t * s.N + n) * DH + d * s.H;
          if (t < steps[static_cast<size_t>(n)]) std::copy(h_prev + n * s.H, h_prev + (n + 1) * s.H, y_row);
          else std::fill(y_row, y_row + s.H, 0.0f);
        }
      }
      std::copy(h_prev, h_prev + NH, hy.data() + (l * s.D + d) * NH);
      if (cx) std::copy(c_prev, c_prev + NH, cy.data() + (l * s.D + d) * NH);
    }
    if (l + 1 < s.L) {
      float *dropped = s.Dropped(reserve, l), *mask = s.Mask(reserve, l);
      const bool drop = DropoutActive(ctx, p);
      const float keep = 1.0f - p.p, scale = keep > 0 ? 1.0f / keep : 0.0f;
      std::uniform_real_distribution<float> u01(0.0f, 1.0f);
      for (int64_t i = 0; i < s.LayerOutSize(); ++i) {
        mask[i] = !drop ? 1.0f : (u01(rng) < keep ? scale : 0.0f);
        dropped[i] = y[static_cast<size_t>(i)] * mask[i];
      }
      x = dropped;
    }
  }
  AssignWithReq(out[0].fdata(), y.data(), out[0].Size(), req[0]);
  if (p.state_outputs) AssignWithReq(out[1].fdata(), hy.data(), out[1].Size(), req[1]);
  if (p.state_outputs && IsLstm(p)) AssignWithReq(out[2].fdata(), cy.data(), out[2].Size(), req[2]);
}

// Backward of one cell step: from dh, dc (N,H) at time t, writes the pre-activation gradients
// of the i2h part (dxw) and of the h2h part (dhw), sets dh to the part of dh_prev that does not
// flow through W_h2h and dc to dc_prev.
// Rows past their sequence at time t (t >= steps[n]) held their state: dh and dc pass through.
void CellBackward(int mode, const RNNDims& s, const std::vector<int64_t>& steps, int64_t t,
                  const float* gates, const float* aux, const float* h, const float* h_prev,
                  const float* c_prev, float* dh, float* dc, float* dxw, float* dhw) {
  const int64_t H = s.H, GH = s.GH();
  ParallelFor(s.N, RowGrain(s), [&](int64_t rows_begin, int64_t rows_end) {
    for (int64_t n = rows_begin; n < rows_end; ++n) {
      const float* g = gates + n * GH;
      float *da = dxw + n * GH, *db = dhw + n * GH;
      if (t >= steps[static_cast<size_t>(n)]) {
        std::fill(da, da + GH, 0.0f);
        std::fill(db, db + GH, 0.0f);
        continue;
      }
      for (int64_t k = 0; k < H; ++k) {
        const int64_t j = n * H + k;
        switch (mode) {
          case kRnnRelu: da[k] = db[k] = h[j] > 0 ? dh[j] : 0.0f; dh[j] = 0; break;
          case kRnnTanh: da[k] = db[k] = dh[j] * (1 - h[j] * h[j]); dh[j] = 0; break;
          case kLstm: {
            const float i = g[k], f = g[H + k], gg = g[2 * H + k], o = g[3 * H + k];
            const float tc = std::tanh(aux[j]);
            const float dcj = dc[j] + dh[j] * o * (1 - tc * tc);
            da[k] = db[k] = dcj * gg * i * (1 - i);
            da[H + k] = db[H + k] = dcj * c_prev[j] * f * (1 - f);
            da[2 * H + k] = db[2 * H + k] = dcj * i * (1 - gg * gg);
            da[3 * H + k] = db[3 * H + k] = dh[j] * tc * o * (1 - o);
            dc[j] = dcj * f;
            dh[j] = 0;
            break;
          }
          case kGru: {
            const float r = g[k], z = g[H + k], nn = g[2 * H + k];
            const float dn = dh[j] * (1 - z) * (1 - nn * nn);
            const float dz = dh[j] * (h_prev[j] - nn) * z * (1 - z);
            const float dr = dn * aux[j] * r * (1 - r);
            da[k] = db[k] = dr;
            da[H + k] = db[H + k] = dz;
            da[2 * H + k] = dn;
            db[2 * H + k] = dn * r;
            dh[j] = dh[j] * z;
            break;
          }
        }
      }
    }
  });
}

// Column sums of m (rows, cols) added to acc.
void AddColumnSums(const float* m, int64_t rows, int64_t cols, float* acc) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) acc[c] += m[r * cols + c];
}

void RNNBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<RNNParam>();
  const RNNDims s(p, a.inputs[0].shape());
  const std::vector<int64_t> steps = ValidSteps(attrs, p, s, a.inputs);
  const float* w = a.inputs[1].fdata();
  const float* hx = a.inputs[2].fdata();
  const float* cx = IsLstm(p) ? a.inputs[3].fdata() : nullptr;
  float* reserve = a.outputs.back().fdata();
  const float* dhy = p.state_outputs ? a.out_grads[1].fdata() : nullptr;
  const float* dcy = p.state_outputs && IsLstm(p) ? a.out_grads[2].fdata() : nullptr;
  const int64_t GH = s.GH(), NH = s.N * s.H, TN = s.T * s.N, DH = s.D * s.H;

  std::vector<float> dw(static_cast<size_t>(s.ParamSize()), 0.0f);
  std::vector<float> dhx(static_cast<size_t>(s.L * s.D * NH), 0.0f), dcx(dhx.size(), 0.0f);
  const float* dy0 = a.out_grads[0].fdata();
  std::vector<float> dy(dy0, dy0 + s.LayerOutSize());
  std::vector<float> dxw(static_cast<size_t>(TN * GH)), dhw(static_cast<size_t>(s.N * GH));
  std::vector<float> dh(static_cast<size_t>(NH)), dc(dh.size()), dx_in;
  for (int64_t l = s.L - 1; l >= 0; --l) {
    const int64_t In = s.InputSize(l);
    const float* x = l == 0 ? a.inputs[0].fdata() : s.Dropped(reserve, l - 1);
    dx_in.assign(static_cast<size_t>(TN * In), 0.0f);
    for (int64_t d = 0; d < s.D; ++d) {
      const int64_t state = (l * s.D + d) * NH;
      const float* wx = w + s.WeightOffset(l, d);
      const float* wh = wx + GH * In;
      float* dwx = dw.data() + s.WeightOffset(l, d);
      float* dwh = dwx + GH * In;
      float* dbx = dw.data() + s.BiasOffset(l, d);
      float* dbh = dbx + GH;
      const float *gates = s.Gates(reserve, l, d), *aux = s.Aux(reserve, l, d), *hs = s.Hidden(reserve, l, d);
      for (int64_t j = 0; j < NH; ++j) {
        dh[j] = dhy ? dhy[state + j] : 0.0f;
        dc[j] = dcy ? dcy[state + j] : 0.0f;
      }
      for (int64_t step = s.T - 1; step >= 0; --step) {
        const int64_t t = d ? s.T - 1 - step : step, t_prev = d ? t + 1 : t - 1;
        const float* h_prev = step == 0 ? hx + state : hs + t_prev * NH;
        const float* c_prev = !cx ? nullptr : step == 0 ? cx + state : aux + t_prev * NH;
        for (int64_t n = 0; n < s.N; ++n) {
          if (t >= steps[static_cast<size_t>(n)]) continue;  // a constant 0 output there
          for (int64_t k = 0; k < s.H; ++k) dh[n * s.H + k] += dy[(t * s.N + n) * DH + d * s.H + k];
        }
        CellBackward(p.mode, s, steps, t, gates + t * s.N * GH, aux + t * NH, hs + t * NH, h_prev, c_prev,
                     dh.data(), dc.data(), dxw.data() + t * s.N * GH, dhw.data());
        Gemm(true, false, GH, s.H, s.N, 1.0f, dhw.data(), GH, h_prev, s.H, 1.0f, dwh, s.H);
        AddColumnSums(dhw.data(), s.N, GH, dbh);
        Gemm(false, false, s.N, s.H, GH, 1.0f, dhw.data(), GH, wh, s.H, 1.0f, dh.data(), s.H);
      }
      std::copy(dh.begin(), dh.end(), dhx.begin() + state);
      if (cx) std::copy(dc.begin(), dc.end(), dcx.begin() + state);
      Gemm(true, false, GH, In, TN, 1.0f, dxw.data(), GH, x, In, 1.0f, dwx, In);
      AddColumnSums(dxw.data(), TN, GH, dbx);
      Gemm(false, false, TN, In, GH, 1.0f, dxw.data(), GH, wx, In, 1.0f, dx_in.data(), In);
    }
    if (l > 0) {
      const float* mask = s.Mask(reserve, l - 1);
      for (int64_t i = 0; i < s.LayerOutSize(); ++i) dy[i] = dx_in[i] * mask[i];
    }
  }
  // Arguments without a gradient (req null) have no array.
  auto emit = [&](size_t i, const std::vector<float>& g) {
    if (a.req[i] != OpReq::kNull) AssignWithReq(a.in_grads[i].fdata(), g.data(), a.in_grads[i].Size(), a.req[i]);
  };
  emit(0, dx_in);
  emit(1, dw);
  emit(2, dhx);
  if (cx) emit(3, dcx);
  // sequence_length gets no gradient (MXNet defines none), as in SequenceMask.
}
}  // namespace

SYMBIND_REGISTER_OP(RNN)
    .add_alias("_npx_rnn")
    .describe("Applies recurrent layers (vanilla RNN with relu or tanh, LSTM, GRU; multi-layer, "
              "bidirectional) to time-major data (T, N, C), with all weights and biases packed in "
              "one vector in MXNet's layout (docs/formats.md).")
    .set_params<RNNParam>()
    .set_arguments(RNNArguments)
    .set_any_dtype_inputs({"sequence_length"})
    .set_outputs(RNNOutputs)
    .set_num_visible_outputs([](const NodeAttrs& a) { return NumVisibleOutputs(a.param<RNNParam>()); })
    .add_argument_doc("data", "Input data: (seq_length, batch, input_size).")
    .add_argument_doc("parameters", "All weights then all biases of every layer and direction, flattened into one vector.")
    .add_argument_doc("state", "Initial hidden state: (num_layers * directions, batch, state_size).")
    .add_argument_doc("state_cell", "Initial cell state (lstm only), shaped as state.")
    .add_argument_doc("sequence_length", "Valid length of each sequence: (batch,); use_sequence_length only.")
    .set_infer_shape(InferRNNShape)
    .set_forward(RNNForward)
    .set_backward(RNNBackward);

}  // namespace symbind
