// _contrib_quantize_asym and _contrib_quantized_rnn (MXNet's int8 LSTM) against the semantics of
// docs/quantization.md written out as plain loops, and against the float32 RNN within MXNet's own
// test bound (tests/python/quantization/test_quantization.py: mean squared error < 0.001).
#include <symbind/ops/quantization/quantization_util.h>

#include "quant_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

struct LstmShape {
  int64_t T, N, I, H, L, D;
  int64_t GH() const { return 4 * H; }
  int64_t InputSize(int64_t l) const { return l == 0 ? I : D * H; }
  int64_t ParamSize() const {
    int64_t n = 0;
    for (int64_t l = 0; l < L; ++l) n += D * (InputSize(l) + H + 2) * GH();
    return n;
  }
};

KwArgs LstmParams(const LstmShape& s, bool state_outputs) {
  return {{"mode", "lstm"}, {"num_layers", std::to_string(s.L)}, {"bidirectional", s.D == 2 ? "True" : "False"},
          {"state_outputs", state_outputs ? "True" : "False"}, {"state_size", std::to_string(s.H)}};
}

struct LstmOutputs {
  std::vector<float> y, hy, cy;
};

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
uint8_t Level(float x, float scale, float shift) {
  return static_cast<uint8_t>(RoundClamp(static_cast<double>(x * scale + shift), 0, 255));
}

// The int8 LSTM element by element, from the documented semantics.
LstmOutputs ReferenceInt8Lstm(const LstmShape& s, const NDArray& q, const NDArray& w, const NDArray& h0,
                              const NDArray& c0, float scale, float shift) {
  const int64_t GH = s.GH(), H = s.H;
  // Offsets of each (layer, direction)'s weights, then biases, in the packed vector.
  std::vector<int64_t> w_at, b_at;
  int64_t at = 0;
  for (int64_t l = 0; l < s.L; ++l)
    for (int64_t d = 0; d < s.D; ++d) w_at.push_back(at), at += (s.InputSize(l) + H) * GH;
  for (int64_t k = 0; k < s.L * s.D; ++k) b_at.push_back(at), at += 2 * GH;
  auto W = [&](int64_t k, int64_t g, int64_t i, int64_t in) {  // W_i2h (i < in) or W_h2h (i >= in)
    return i < in ? w.GetFlat(w_at[k] + g * in + i) : w.GetFlat(w_at[k] + GH * in + g * H + (i - in));
  };
  std::vector<float> wscale(static_cast<size_t>(GH), 0.0f);
  for (int64_t g = 0; g < GH; ++g) {
    float m = 0;
    for (int64_t l = 0; l < s.L; ++l)
      for (int64_t d = 0; d < s.D; ++d)
        for (int64_t i = 0; i < s.InputSize(l) + H; ++i) m = std::max(m, std::fabs(W(l * s.D + d, g, i, s.InputSize(l))));
    wscale[static_cast<size_t>(g)] = m > 0 ? 127.0f / m : 1.0f;
  }
  std::vector<int> x(static_cast<size_t>(s.T * s.N * s.I));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int>(q.GetFlat(static_cast<int64_t>(i)));
  LstmOutputs out;
  out.hy.resize(static_cast<size_t>(s.L * s.D * s.N * H));
  out.cy.resize(out.hy.size());
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t in = s.InputSize(l);
    std::vector<int> next(static_cast<size_t>(s.T * s.N * s.D * H));
    for (int64_t d = 0; d < s.D; ++d) {
      const int64_t k = l * s.D + d;
      std::vector<int> h(static_cast<size_t>(s.N * H));
      std::vector<float> c(h.size());
      for (int64_t j = 0; j < s.N * H; ++j) {
        h[static_cast<size_t>(j)] = Level(h0.GetFlat(k * s.N * H + j), scale, shift);
        c[static_cast<size_t>(j)] = c0.GetFlat(k * s.N * H + j);
      }
      for (int64_t step = 0; step < s.T; ++step) {
        const int64_t t = d ? s.T - 1 - step : step;
        std::vector<int> h_new(h.size());
        for (int64_t n = 0; n < s.N; ++n) {
          std::vector<float> gate(static_cast<size_t>(GH));
          for (int64_t g = 0; g < GH; ++g) {
            int32_t acc = 0, levels = 0;
            for (int64_t i = 0; i < in + H; ++i) {
              const int wq = static_cast<int>(RoundClamp(static_cast<double>(W(k, g, i, in) * wscale[static_cast<size_t>(g)]), -128, 127));
              const int v = i < in ? x[static_cast<size_t>((t * s.N + n) * in + i)] : h[static_cast<size_t>(n * H + i - in)];
              acc += wq * v;
              levels += wq;
            }
            const float bias = w.GetFlat(b_at[k] + g) + w.GetFlat(b_at[k] + GH + g);
            gate[static_cast<size_t>(g)] = (static_cast<float>(acc) - shift * static_cast<float>(levels)) *
                                               (1.0f / (wscale[static_cast<size_t>(g)] * scale)) + bias;
          }
          for (int64_t j = 0; j < H; ++j) {
            const float i_g = Sigmoid(gate[static_cast<size_t>(j)]), f_g = Sigmoid(gate[static_cast<size_t>(H + j)]);
            const float g_g = std::tanh(gate[static_cast<size_t>(2 * H + j)]), o_g = Sigmoid(gate[static_cast<size_t>(3 * H + j)]);
            float& cell = c[static_cast<size_t>(n * H + j)];
            cell = f_g * cell + i_g * g_g;
            h_new[static_cast<size_t>(n * H + j)] = Level(o_g * std::tanh(cell), scale, shift);
            next[static_cast<size_t>((t * s.N + n) * s.D * H + d * H + j)] = h_new[static_cast<size_t>(n * H + j)];
          }
        }
        h = h_new;
      }
      for (int64_t j = 0; j < s.N * H; ++j) {
        out.hy[static_cast<size_t>(k * s.N * H + j)] = (static_cast<float>(h[static_cast<size_t>(j)]) - shift) / scale;
        out.cy[static_cast<size_t>(k * s.N * H + j)] = c[static_cast<size_t>(j)];
      }
    }
    x = next;
  }
  for (int v : x) out.y.push_back((static_cast<float>(v) - shift) / scale);
  return out;
}

struct LstmCase {
  LstmShape shape;
  NDArray data, params, state, cell;
};

LstmCase RandomCase(const LstmShape& s, uint64_t seed) {
  return {s, RandomArray({s.T, s.N, s.I}, seed), RandomArray({s.ParamSize()}, seed + 1),
          RandomArray({s.L * s.D, s.N, s.H}, seed + 2), RandomArray({s.L * s.D, s.N, s.H}, seed + 3)};
}

}  // namespace

TEST_CASE("quantize_asym: uint8 levels x * scale + shift, scale 255 / (max - min), shift 255 - max * scale",
          "[ops][quantization]") {
  NDArray x = RandomArray(TShape({3, 2, 5}), 31, -1.5f, 2.5f);
  x.SetFlat(0, 4.0f);    // past the calibrated maximum: 255
  x.SetFlat(1, -3.0f);   // below the minimum: 0
  auto calibrated = RunAll("_contrib_quantize_asym", {{"min_calib_range", "-2"}, {"max_calib_range", "3"}}, {{"data", x}});
  REQUIRE(calibrated[0].dtype() == DType::kUint8);
  const float scale = 255.0f / 5.0f, shift = 255.0f - 3.0f * scale;
  CHECK(calibrated[1].GetFlat(0) == scale);
  CHECK(calibrated[2].GetFlat(0) == shift);
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(calibrated[0].GetFlat(i) == Level(x.GetFlat(i), scale, shift));
  CHECK(calibrated[0].GetFlat(0) == 255);
  CHECK(calibrated[0].GetFlat(1) == 0);
  // Without a calibrated range, the data's own: its minimum gives level 0, its maximum 255.
  auto own = RunAll("_contrib_quantize_asym", {}, {{"data", x}});
  const float own_scale = 255.0f / 7.0f;
  CHECK(own[1].GetFlat(0) == own_scale);
  CHECK(own[0].GetFlat(0) == 255);
  CHECK(own[0].GetFlat(1) == 0);
  // Constant data: scale 1, the value at level 255 (MXNet divides by zero).
  auto flat = RunAll("_contrib_quantize_asym", {}, {{"data", NDArray(TShape({4}), std::vector<float>(4, 0.5f))}});
  CHECK(flat[1].GetFlat(0) == 1.0f);
  CHECK(flat[0].GetFlat(2) == 255);
  CHECK_THROWS_WITH(RunAll("_contrib_quantize_asym", {}, {{"data", RandomLevels(TShape({4}), DType::kUint8, 0, 9, 1)}}),
                    Catch::Contains("must be float32"));
}

TEST_CASE("quantized_rnn equals the int8 LSTM written out element by element", "[ops][quantization][rnn]") {
  for (const LstmShape& s : {LstmShape{5, 2, 16, 16, 1, 1}, LstmShape{5, 2, 16, 16, 1, 2}, LstmShape{4, 3, 7, 5, 2, 1},
                             LstmShape{3, 2, 6, 4, 3, 2}}) {
    INFO("T " << s.T << " N " << s.N << " I " << s.I << " H " << s.H << " layers " << s.L << " directions " << s.D);
    LstmCase c = RandomCase(s, 40 + static_cast<uint64_t>(s.I * s.L * s.D));
    auto q = RunAll("_contrib_quantize_asym", {}, {{"data", c.data}});
    const float scale = q[1].GetFlat(0), shift = q[2].GetFlat(0);
    auto out = RunAll("_contrib_quantized_rnn", LstmParams(s, true),
                      {{"data", q[0]}, {"parameters", c.params}, {"state", c.state}, {"state_cell", c.cell},
                       {"min_data", q[1]}, {"max_data", q[2]}});
    REQUIRE(out.size() == 3);
    const LstmOutputs want = ReferenceInt8Lstm(s, q[0], c.params, c.state, c.cell, scale, shift);
    REQUIRE(static_cast<size_t>(out[0].Size()) == want.y.size());
    for (size_t i = 0; i < want.y.size(); ++i) CHECK(out[0].GetFlat(static_cast<int64_t>(i)) == Approx(want.y[i]).margin(1e-6));
    for (size_t i = 0; i < want.hy.size(); ++i) {
      CHECK(out[1].GetFlat(static_cast<int64_t>(i)) == Approx(want.hy[i]).margin(1e-6));
      CHECK(out[2].GetFlat(static_cast<int64_t>(i)) == Approx(want.cy[i]).margin(1e-5));
    }
  }
}

TEST_CASE("quantized_rnn stays within MXNet's bound of the float32 LSTM", "[ops][quantization][rnn]") {
  for (const LstmShape& s : {LstmShape{5, 2, 16, 16, 1, 1}, LstmShape{5, 2, 16, 16, 1, 2}, LstmShape{6, 2, 12, 8, 2, 2}}) {
    LstmCase c = RandomCase(s, 70 + static_cast<uint64_t>(s.L * s.D));
    auto fp32 = RunAll("RNN", LstmParams(s, true),
                       {{"data", c.data}, {"parameters", c.params}, {"state", c.state}, {"state_cell", c.cell}});
    auto q = RunAll("_contrib_quantize_asym", {}, {{"data", c.data}});
    auto int8 = RunAll("_contrib_quantized_rnn", LstmParams(s, true),
                       {{"data", q[0]}, {"parameters", c.params}, {"state", c.state}, {"state_cell", c.cell},
                        {"min_data", q[1]}, {"max_data", q[2]}});
    for (size_t k = 0; k < 3; ++k) {
      double se = 0;
      for (int64_t i = 0; i < fp32[k].Size(); ++i) se += std::pow(fp32[k].GetFlat(i) - int8[k].GetFlat(i), 2);
      INFO("layers " << s.L << " directions " << s.D << " output " << k);
      CHECK(se / static_cast<double>(fp32[k].Size()) < 1e-3);
    }
  }
}

TEST_CASE("quantized_rnn states MXNet's names and rejects what has no int8 form", "[ops][quantization][rnn]") {
  const LstmShape s{2, 1, 3, 2, 1, 1};
  Symbol with_states = Symbol::Create("_contrib_quantized_rnn", "qrnn", LstmParams(s, true), {});
  CHECK(with_states.ListArguments() ==
        std::vector<std::string>{"qrnn_data", "qrnn_parameters", "qrnn_state", "qrnn_state_cell", "qrnn_min_data",
                                 "qrnn_max_data"});
  CHECK(with_states.ListOutputs() ==
        std::vector<std::string>{"qrnn_output", "qrnn_state_output", "qrnn_statecell_ouput"});
  CHECK(Symbol::Create("_contrib_quantized_rnn", "q", LstmParams(s, false), {}).ListOutputs().size() == 1);
  LstmCase c = RandomCase(s, 90);
  auto q = RunAll("_contrib_quantize_asym", {}, {{"data", c.data}});
  std::map<std::string, NDArray> inputs{{"data", q[0]}, {"parameters", c.params}, {"state", c.state},
                                        {"state_cell", c.cell}, {"min_data", q[1]}, {"max_data", q[2]}};
  KwArgs gru = LstmParams(s, false);
  gru["mode"] = "gru";
  CHECK_THROWS_WITH(RunAll("_contrib_quantized_rnn", gru, inputs), Catch::Contains("only mode='lstm'"));
  std::map<std::string, NDArray> float_data = inputs;
  float_data["data"] = c.data;
  CHECK_THROWS_WITH(RunAll("_contrib_quantized_rnn", LstmParams(s, false), float_data),
                    Catch::Contains("must be uint8"));
  CHECK_THROWS_WITH(InferShape(with_states, {{"qrnn_data", TShape({int64_t{1} << 40, int64_t{1} << 20, 3})}}),
                    Catch::Contains("_contrib_quantized_rnn: state and gate buffer size"));
  std::map<std::string, NDArray> zero_scale = inputs;
  zero_scale["min_data"] = Range(0.0f);
  CHECK_THROWS_WITH(RunAll("_contrib_quantized_rnn", LstmParams(s, false), zero_scale),
                    Catch::Contains("scale must be positive"));
}
