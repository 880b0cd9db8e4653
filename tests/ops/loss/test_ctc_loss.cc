// CTCLoss and WarpCTC: the loss against a brute-force sum over every alignment, loss and gradient
// against PyTorch's ctc_loss goldens (scripts/gen_ctc_goldens.py), gradients against finite
// differences, WarpCTC's softmax forward and CTC backward, and the label and length errors.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include <symbind/io/npy.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/ctc/";

// -log of the summed probability of every frame-wise path (C^T of them) that collapses (merge
// repeats, drop blanks) to `label`; probabilities are softmax(act[t, n, :]) of a (T, N, C) array.
double BruteForceCTC(const NDArray& act, int64_t n, int64_t steps, const std::vector<int>& label, int blank) {
  const int64_t N = act.shape()[1], C = act.shape()[2];
  std::vector<std::vector<double>> prob(static_cast<size_t>(steps), std::vector<double>(static_cast<size_t>(C)));
  for (int64_t t = 0; t < steps; ++t) {
    double z = 0;
    for (int64_t c = 0; c < C; ++c) z += std::exp(act.GetFlat((t * N + n) * C + c));
    for (int64_t c = 0; c < C; ++c) prob[t][c] = std::exp(act.GetFlat((t * N + n) * C + c)) / z;
  }
  double total = 0;
  std::vector<int> path(static_cast<size_t>(steps), 0);
  for (;;) {
    std::vector<int> collapsed;
    for (int64_t t = 0; t < steps; ++t)
      if (path[t] != blank && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
    if (collapsed == label) {
      double p = 1;
      for (int64_t t = 0; t < steps; ++t) p *= prob[t][path[t]];
      total += p;
    }
    int64_t t = 0;
    while (t < steps && ++path[t] == C) path[t++] = 0;
    if (t == steps) break;
  }
  return -std::log(total);
}

KwArgs CTCParams(const std::string& blank, bool data_lengths = false, bool label_lengths = false) {
  return {{"blank_label", blank}, {"use_data_lengths", data_lengths ? "True" : "False"},
          {"use_label_lengths", label_lengths ? "True" : "False"}};
}
}  // namespace

TEST_CASE("CTCLoss equals the brute-force sum over alignments", "[ops][ctc]") {
  const NDArray data = RandomArray({5, 3, 3}, 3, -2, 2);
  // blank first: padding 0. Entry 2 needs a blank between its repeated labels.
  const NDArray label({3, 2}, {1, 2, 2, 0, 1, 1});
  const NDArray loss = RunForward("CTCLoss", CTCParams("first"), {{"data", data}, {"label", label}});
  CHECK(loss.GetFlat(0) == Approx(BruteForceCTC(data, 0, 5, {1, 2}, 0)).epsilon(1e-5));
  CHECK(loss.GetFlat(1) == Approx(BruteForceCTC(data, 1, 5, {2}, 0)).epsilon(1e-5));
  CHECK(loss.GetFlat(2) == Approx(BruteForceCTC(data, 2, 5, {1, 1}, 0)).epsilon(1e-5));
  // blank last (class 2), padding -1, data lengths cut the sequences; every alias runs the op.
  const NDArray label_last({3, 2}, {0, 1, 1, -1, 1, 1});
  const NDArray lengths({3}, {4, 5, 3});
  for (const char* op : {"CTCLoss", "ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"}) {
    INFO(op);
    const NDArray l = RunForward(op, CTCParams("last", true), {{"data", data}, {"label", label_last}, {"data_lengths", lengths}});
    CHECK(l.GetFlat(0) == Approx(BruteForceCTC(data, 0, 4, {0, 1}, 2)).epsilon(1e-5));
    CHECK(l.GetFlat(1) == Approx(BruteForceCTC(data, 1, 5, {1}, 2)).epsilon(1e-5));
    CHECK(l.GetFlat(2) == Approx(BruteForceCTC(data, 2, 3, {1, 1}, 2)).epsilon(1e-5));
  }
}

TEST_CASE("CTCLoss matches PyTorch ctc_loss loss and gradient on the goldens", "[ops][ctc]") {
  std::ifstream f(kGoldens + "manifest.json");
  REQUIRE(f.good());
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 3);
  for (const auto& c : manifest["cases"]) {
    const std::string name = c["name"];
    INFO(name);
    auto load = [&](const std::string& what) { return LoadNpy(kGoldens + name + "_" + what + ".npy"); };
    const bool dl = c["use_data_lengths"], ll = c["use_label_lengths"];
    std::map<std::string, NDArray> inputs{{"data", load("data")}, {"label", load("label")}};
    if (dl) inputs["data_lengths"] = load("data_lengths");
    if (ll) inputs["label_lengths"] = load("label_lengths");
    auto exec = BindSingleOp("CTCLoss", CTCParams(c["blank_label"], dl, ll), inputs,
                             {"label", "data_lengths", "label_lengths"});
    exec->Forward(true);
    REQUIRE(exec->outputs().size() == 1);
    RequireClose(exec->outputs()[0], load("loss"), 1e-5f, 1e-5f, "loss");
    exec->Backward({load("head")});
    RequireClose(exec->grad_dict().at("op_data"), load("grad"), 1e-5f, 1e-4f, "grad");
  }
}

TEST_CASE("CTCLoss gradient matches finite differences, scaled by the head gradient", "[ops][ctc]") {
  GradCheckOptions opt;
  opt.no_grad = {"label", "data_lengths", "label_lengths"};
  CheckGradients("CTCLoss", CTCParams("first", true, true),
                 {{"data", RandomArray({5, 2, 4}, 8)}, {"label", NDArray({2, 3}, {3, 3, 1, 2, 0, 0})},
                  {"data_lengths", NDArray({2}, {5, 4})}, {"label_lengths", NDArray({2}, {2, 1})}},
                 opt);
  // No gradient asked for: backward writes nothing.
  auto exec = BindSingleOp("CTCLoss", CTCParams("first"), {{"data", RandomArray({3, 1, 3}, 4)}, {"label", NDArray({1, 1}, {2})}},
                           {"data", "label"});
  exec->Forward(true);
  exec->Backward({NDArray({1}, {1})});
  CheckGradients("CTCLoss", CTCParams("last"),
                 {{"data", RandomArray({4, 2, 3}, 9)}, {"label", NDArray({2, 2}, {0, 1, 1, -1})}},
                 opt);
}

TEST_CASE("CTCLoss names its outputs as MXNet does and rejects bad labels and lengths", "[ops][ctc]") {
  Symbol s = SingleOpSymbol("CTCLoss", CTCParams("first", true, false));
  CHECK(s.ListArguments() == std::vector<std::string>{"op_data", "op_label", "op_data_lengths"});
  CHECK(s.ListOutputs() == std::vector<std::string>{"op_output0"});
  ShapeInferResult r = InferShape(s, {{"op_data", TShape({6, 2, 4})}, {"op_label", TShape({2, 3})}});
  CHECK(r.arg_shapes[2] == TShape({2}));
  CHECK(r.out_shapes[0] == TShape({2}));
  CHECK_THROWS_AS(InferShape(s, {{"op_data", TShape({6, 2, 4})}, {"op_label", TShape({3, 3})}}), ShapeError);
  CHECK_THROWS_AS(InferShape(s, {{"op_data", TShape({2, 2, 4})}, {"op_label", TShape({2, 3})}}), ShapeError);
  const NDArray data = RandomArray({4, 1, 3}, 1);
  CHECK_THROWS_WITH(RunForward("CTCLoss", CTCParams("first"), {{"data", data}, {"label", NDArray({1, 2}, {3, 1})}}),
                    Catch::Contains("label[0, 0] = 3"));
  CHECK_THROWS_WITH(RunForward("CTCLoss", CTCParams("last"), {{"data", data}, {"label", NDArray({1, 2}, {-2, -1})}}),
                    Catch::Contains("label[0, 0] = -2 is not a class"));
  CHECK_THROWS_WITH(RunForward("CTCLoss", CTCParams("first", true),
                               {{"data", data}, {"label", NDArray({1, 2}, {1, 0})}, {"data_lengths", NDArray({1}, {5})}}),
                    Catch::Contains("data_lengths[0] = 5"));
  // A label no alignment can produce (1, 1 needs 3 frames) gives loss 0, as MXNet's CPU CTC.
  const NDArray two = RandomArray({2, 1, 3}, 2);
  CHECK(RunForward("CTCLoss", CTCParams("first"), {{"data", two}, {"label", NDArray({1, 2}, {1, 1})}}).GetFlat(0) == 0.0f);
}

TEST_CASE("WarpCTC forward is the softmax, backward is the CTC gradient of the loss", "[ops][ctc]") {
  // input_length 4, batch 2, alphabet 3; rows are time-major (t * 2 + n).
  const NDArray data = RandomArray({8, 3}, 21, -2, 2);
  const NDArray label({4}, {1, 2, 2, 0});  // label_length 2: (1, 2) and (2) after dropping the 0
  const KwArgs params{{"label_length", "2"}, {"input_length", "4"}};
  const NDArray prob = RunForward("WarpCTC", params, {{"data", data}, {"label", label}});
  for (int64_t r = 0; r < 8; ++r) {
    double z = 0;
    for (int64_t c = 0; c < 3; ++c) z += std::exp(data.GetFlat(r * 3 + c));
    for (int64_t c = 0; c < 3; ++c) CHECK(prob.GetFlat(r * 3 + c) == Approx(std::exp(data.GetFlat(r * 3 + c)) / z));
  }
  // Backward against finite differences of the brute-force loss of the bound data.
  auto exec = BindSingleOp("WarpCTC", params, {{"data", data}, {"label", label}}, {"label"});
  exec->Forward(true);
  exec->Backward();
  const NDArray grad = exec->grad_dict().at("op_data").Copy();
  const NDArray& x = exec->arg_arrays()[0];
  auto loss = [&] {
    const NDArray view = x.Reshape({4, 2, 3});
    return BruteForceCTC(view, 0, 4, {1, 2}, 0) + BruteForceCTC(view, 1, 4, {2}, 0);
  };
  const float eps = 1e-3f;
  for (int64_t i = 0; i < x.Size(); ++i) {
    const float orig = x.GetFlat(i);
    x.SetFlat(i, orig + eps);
    const double up = loss();
    x.SetFlat(i, orig - eps);
    const double down = loss();
    x.SetFlat(i, orig);
    CHECK(grad.GetFlat(i) == Approx((up - down) / (2 * eps)).margin(2e-3));
  }
  Symbol s = SingleOpSymbol("WarpCTC", params);
  CHECK(InferShape(s, {{"op_data", TShape({8, 3})}}).arg_shapes[1] == TShape({4}));
  CHECK_THROWS_AS(InferShape(s, {{"op_data", TShape({7, 3})}}), ShapeError);
}

TEST_CASE("CTCLoss computes a label equal to the blank as MXNet's warp-ctc does", "[ops][ctc]") {
  // Uniform activations: the loss depends only on the label's length and repeats. MXNet 1.9.1's
  // Gluon test gives 18.82820702 for a label of 2 and 16.50581741 for 3 with a final repeat
  // over 20 frames of 4 classes, also when a label equals the blank (3, blank_label last).
  NDArray ones({20, 2, 4}, std::vector<float>(160, 1.0f));
  const NDArray label({2, 4}, {2, 1, 2, 2, 3, 2, 2, 2});
  const NDArray lengths({2}, {2, 3});
  const NDArray loss = RunForward("CTCLoss", CTCParams("last", false, true),
                                  {{"data", ones}, {"label", label}, {"label_lengths", lengths}});
  CHECK(loss.GetFlat(0) == Approx(18.82820702).epsilon(1e-6));
  CHECK(loss.GetFlat(1) == Approx(16.50581741).epsilon(1e-6));
}
