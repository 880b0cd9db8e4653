// Loss heads: MakeLoss, make_loss, softmax_cross_entropy, and SoftmaxOutput's options
// (preserve_shape, multi_output normalisation, out_grad, smooth_alpha, probability labels),
// each gradient checked against finite differences of an explicit loss.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
GradCheckOptions WithLoss(std::function<double(const std::vector<NDArray>&)> loss,
                          std::vector<std::string> no_grad = {"label"}) {
  GradCheckOptions opt;
  opt.no_grad = std::move(no_grad);
  opt.loss = std::move(loss);
  opt.is_train = true;
  return opt;
}

double Sum(const NDArray& a) {
  double s = 0;
  for (int64_t i = 0; i < a.Size(); ++i) s += a.GetFlat(i);
  return s;
}

// Softmax probabilities p[o, c, i] of an (outer, k, inner) layout, as a test-side reference.
std::vector<double> NaiveSoftmax(const NDArray& x, int64_t outer, int64_t k, int64_t inner) {
  std::vector<double> p(static_cast<size_t>(x.Size()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double z = 0;
      for (int64_t c = 0; c < k; ++c) z += std::exp(x.GetFlat((o * k + c) * inner + i));
      for (int64_t c = 0; c < k; ++c)
        p[static_cast<size_t>((o * k + c) * inner + i)] = std::exp(x.GetFlat((o * k + c) * inner + i)) / z;
    }
  return p;
}

// Sum over groups of -(1-alpha) log p[target] - alpha/(k-1) sum_{c != target} log p[c]: the
// loss whose gradient is SoftmaxOutput's (smoothed) softmax - target. Labels equal to
// `ignore` (when set) contribute nothing.
double SmoothedCE(const NDArray& prob, const NDArray& label, int64_t k, int64_t inner, double alpha,
                  std::optional<int> ignore = std::nullopt) {
  double loss = 0;
  for (int64_t g = 0; g < label.Size(); ++g) {
    int64_t o = g / inner, i = g % inner;
    int t = static_cast<int>(label.GetFlat(g));
    if (ignore && t == *ignore) continue;
    for (int64_t c = 0; c < k; ++c) {
      double w = c == t ? 1 - alpha : alpha / (k - 1);
      loss -= w * std::log(prob.GetFlat((o * k + c) * inner + i));
    }
  }
  return loss;
}

// Like CheckGradients, with explicit head gradients fed to Backward (for out_grad).
void CheckWithHeads(const std::string& op, const KwArgs& params, const std::map<std::string, NDArray>& inputs,
                    const NDArray& head, const std::function<double(const NDArray&)>& loss) {
  auto exec = BindSingleOp(op, params, inputs, {"label"});
  exec->Forward(true);
  exec->Backward({head});
  NDArray analytic = exec->grad_arrays()[0].Copy();
  const NDArray& x = exec->arg_arrays()[0];
  const float eps = 1e-3f;
  for (int64_t i = 0; i < x.Size(); ++i) {
    float orig = x.GetFlat(i);
    x.SetFlat(i, orig + eps);
    exec->Forward(true);
    double up = loss(exec->outputs()[0]);
    x.SetFlat(i, orig - eps);
    exec->Forward(true);
    double down = loss(exec->outputs()[0]);
    x.SetFlat(i, orig);
    double numeric = (up - down) / (2 * eps);
    CHECK(analytic.GetFlat(i) == Approx(numeric).margin(2e-3).epsilon(2e-2));
  }
}
}  // namespace

TEST_CASE("MakeLoss forward is identity, gradient is grad_scale normalised", "[ops][makeloss][grad]") {
  NDArray x = RandomArray(TShape({4, 3}), 1);
  // Keep elements clear of valid_thresh so the valid count is locally constant.
  for (int64_t i = 0; i < x.Size(); ++i)
    if (std::fabs(x.GetFlat(i) - 0.1f) < 0.01f) x.SetFlat(i, 0.3f);
  RequireClose(RunForward("MakeLoss", {}, {{"data", x}}), x);
  int64_t valid = 0;
  for (int64_t i = 0; i < x.Size(); ++i) valid += x.GetFlat(i) > 0.1f;
  REQUIRE(valid > 0);
  struct Case {
    KwArgs p;
    double scale;
  };
  for (auto& c : {Case{{}, 1.0}, Case{{{"grad_scale", "2.5"}}, 2.5},
                  Case{{{"grad_scale", "3"}, {"normalization", "batch"}}, 3.0 / 4},
                  Case{{{"normalization", "valid"}, {"valid_thresh", "0.1"}}, 1.0 / valid}}) {
    INFO("scale " << c.scale);
    CheckGradients("MakeLoss", c.p, {{"data", x}},
                   WithLoss([&](const std::vector<NDArray>& o) { return c.scale * Sum(o[0]); }, {}));
  }
  // valid with nothing above the threshold divides by 1, not 0.
  auto exec = BindSingleOp("MakeLoss", {{"normalization", "valid"}, {"valid_thresh", "5"}}, {{"data", x}});
  exec->Forward(true);
  exec->Backward();
  CHECK(exec->grad_arrays()[0].GetFlat(0) == 1.0f);
  CHECK_THROWS_AS(RunForward("MakeLoss", {{"normalization", "mean"}}, {{"data", x}}), ParamError);
  CHECK(OpRegistry::Global().Get("MakeLoss").is_loss);
}

TEST_CASE("make_loss: identity forward, gradient of ones", "[ops][makeloss][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 2);
  RequireClose(RunForward("make_loss", {}, {{"data", x}}), x);
  CheckGradients("make_loss", {}, {{"data", x}},
                 WithLoss([](const std::vector<NDArray>& o) { return Sum(o[0]); }, {}));
  Symbol s = Symbol::Create("make_loss", "ml", {}, {{"data", Symbol::Variable("x")}});
  CHECK(s.ListOutputs() == std::vector<std::string>{"ml_loss"});
}

TEST_CASE("softmax_cross_entropy forward, gradient and shapes", "[ops][softmax_cross_entropy][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 3, -2, 2), label(TShape({3}), {2, 0, 3});
  auto p = NaiveSoftmax(x, 3, 4, 1);
  double want = 0;
  for (int r = 0; r < 3; ++r) want -= std::log(p[static_cast<size_t>(r * 4 + static_cast<int>(label.GetFlat(r)))]);
  NDArray y = RunForward("softmax_cross_entropy", {}, {{"data", x}, {"label", label}});
  REQUIRE(y.shape() == TShape({1}));
  CHECK(y.GetFlat(0) == Approx(want).epsilon(1e-5));
  // MXNet's example.
  NDArray ex(TShape({2, 3}), {1, 2, 3, 11, 7, 5}), exl(TShape({2}), {2, 0});
  CHECK(RunForward("softmax_cross_entropy", {}, {{"data", ex}, {"label", exl}}).GetFlat(0) ==
        Approx(0.4281871).epsilon(1e-5));
  // An ordinary op: the head gradient scales the gradient.
  GradCheckOptions opt;
  opt.no_grad = {"label"};
  CheckGradients("softmax_cross_entropy", {}, {{"data", x}, {"label", label}}, opt);

  // No gradient for the label, as MXNet.
  auto exec = BindSingleOp("softmax_cross_entropy", {}, {{"data", x}, {"label", label}});
  exec->Forward(true);
  CHECK_THROWS_WITH(exec->Backward(), Catch::Contains("Cannot take gradient wrt label"));

  auto infer = [](const TShape& d, const TShape& l) {
    Symbol s = Symbol::Create("softmax_cross_entropy", "ce", {}, {{"data", Symbol::Variable("d")}, {"label", Symbol::Variable("l")}});
    return InferShape(s, {{"d", d}, {"l", l}});
  };
  auto r = Symbol::Create("softmax_cross_entropy", "ce", {}, {{"data", Symbol::Variable("d")}});
  auto inferred = InferShape(r, {{"d", TShape({5, 7})}});
  CHECK(inferred.arg_shapes[1] == TShape({5}));
  CHECK(inferred.out_shapes[0] == TShape({1}));
  CHECK_THROWS_WITH(infer(TShape({5, 7, 2}), TShape({5})), Catch::Contains("only accept 2D data"));
  CHECK_THROWS_AS(infer(TShape({5, 7}), TShape({4})), ShapeError);
  CHECK_THROWS_WITH(RunForward("softmax_cross_entropy", {}, {{"data", x}, {"label", NDArray(TShape({3}), {0, 4, 1})}}),
                    Catch::Contains("not in [0, 4)"));
}

TEST_CASE("SoftmaxOutput preserve_shape softmaxes the last axis", "[ops][softmax_output][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 4, -2, 2), label(TShape({2, 3}), {0, 3, 1, 2, 2, 0});
  NDArray y = RunForward("SoftmaxOutput", {{"preserve_shape", "True"}}, {{"data", x}, {"label", label}});
  auto p = NaiveSoftmax(x, 6, 4, 1);
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == Approx(p[static_cast<size_t>(i)]).epsilon(1e-5));
  CheckGradients("SoftmaxOutput", {{"preserve_shape", "True"}}, {{"data", x}, {"label", label}},
                 WithLoss([&](const std::vector<NDArray>& o) { return SmoothedCE(o[0], label, 4, 1, 0); }));
  // batch normalisation divides by the number of labels (rows), here 6.
  CheckGradients("SoftmaxOutput", {{"preserve_shape", "True"}, {"normalization", "batch"}},
                 {{"data", x}, {"label", label}},
                 WithLoss([&](const std::vector<NDArray>& o) { return SmoothedCE(o[0], label, 4, 1, 0) / 6; }));
}

TEST_CASE("SoftmaxOutput multi_output normalisations", "[ops][softmax_output][grad]") {
  // data (n=2, k=3, 2x2 spatial): inner = 4.
  NDArray x = RandomArray(TShape({2, 3, 2, 2}), 5, -2, 2);
  NDArray label(TShape({2, 4}), {0, 2, 1, 1, 2, 0, -1, 1});
  NDArray y = RunForward("SoftmaxOutput", {{"multi_output", "True"}}, {{"data", x}, {"label", label}});
  auto p = NaiveSoftmax(x, 2, 3, 4);
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == Approx(p[static_cast<size_t>(i)]).epsilon(1e-5));
  KwArgs base{{"multi_output", "True"}, {"use_ignore", "True"}};
  auto ce = [&](const NDArray& o) { return SmoothedCE(o, label, 3, 4, 0, -1); };
  struct Case {
    std::string norm;
    double divisor;
  };
  // MXNet: null divides by the spatial size, batch by n * spatial, valid by the valid labels.
  for (auto& c : {Case{"null", 4.0}, Case{"batch", 8.0}, Case{"valid", 7.0}}) {
    INFO(c.norm);
    KwArgs params = base;
    params["normalization"] = c.norm;
    params["grad_scale"] = "1.5";
    CheckGradients("SoftmaxOutput", params, {{"data", x}, {"label", label}},
                   WithLoss([&](const std::vector<NDArray>& o) { return 1.5 * ce(o[0]) / c.divisor; }));
  }
  // smooth_alpha does not apply with multi_output (as MXNet).
  CheckGradients("SoftmaxOutput", {{"multi_output", "True"}, {"use_ignore", "True"}, {"smooth_alpha", "0.2"}},
                 {{"data", x}, {"label", label}},
                 WithLoss([&](const std::vector<NDArray>& o) { return ce(o[0]) / 4; }));
}

TEST_CASE("SoftmaxOutput smooth_alpha", "[ops][softmax_output][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 6, -2, 2), label(TShape({3}), {1, 3, 0});
  for (double alpha : {0.1, 0.4}) {
    CheckGradients("SoftmaxOutput", {{"smooth_alpha", std::to_string(alpha)}}, {{"data", x}, {"label", label}},
                   WithLoss([&](const std::vector<NDArray>& o) { return SmoothedCE(o[0], label, 4, 1, alpha); }));
  }
  // With use_ignore, an ignored row gets no gradient; valid counts the other rows.
  NDArray li(TShape({3}), {1, -1, 0});
  CheckGradients("SoftmaxOutput",
                 {{"smooth_alpha", "0.3"}, {"use_ignore", "True"}, {"normalization", "valid"}},
                 {{"data", x}, {"label", li}},
                 WithLoss([&](const std::vector<NDArray>& o) { return SmoothedCE(o[0], li, 4, 1, 0.3, -1) / 2; }));
  CHECK_THROWS_AS(RunForward("SoftmaxOutput", {{"smooth_alpha", "1.5"}}, {{"data", x}, {"label", label}}), ParamError);
}

TEST_CASE("SoftmaxOutput out_grad multiplies by the head gradient", "[ops][softmax_output][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 7, -2, 2), label(TShape({3}), {2, 0, 1});
  // Heads constant along each row: then grad = c_r * (p - onehot) is the gradient of
  // sum_r c_r * CE_r.
  std::vector<float> c{0.5f, -1.0f, 2.0f};
  NDArray head(TShape({3, 4}));
  for (int64_t i = 0; i < 12; ++i) head.SetFlat(i, c[static_cast<size_t>(i / 4)]);
  CheckWithHeads("SoftmaxOutput", {{"out_grad", "True"}, {"grad_scale", "2"}}, {{"data", x}, {"label", label}},
                 head, [&](const NDArray& o) {
                   double loss = 0;
                   for (int r = 0; r < 3; ++r)
                     loss -= 2 * c[static_cast<size_t>(r)] * std::log(o.At({r, static_cast<int64_t>(label.GetFlat(r))}));
                   return loss;
                 });
  // Without out_grad the head gradient is ignored.
  CheckWithHeads("SoftmaxOutput", {}, {{"data", x}, {"label", label}}, head,
                 [&](const NDArray& o) { return SmoothedCE(o, label, 4, 1, 0); });
}

TEST_CASE("SoftmaxOutput probability labels are never normalised", "[ops][softmax_output][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 8, -2, 2);
  NDArray soft(TShape({2, 3}), {0.2f, 0.5f, 0.3f, 0.6f, 0.1f, 0.3f});  // rows sum to 1
  auto loss = [&](const std::vector<NDArray>& o) {
    double l = 0;
    for (int64_t i = 0; i < 6; ++i) l -= soft.GetFlat(i) * std::log(o[0].GetFlat(i));
    return 0.5 * l;
  };
  for (std::string norm : {"null", "batch", "valid"})
    CheckGradients("SoftmaxOutput", {{"normalization", norm}, {"grad_scale", "0.5"}},
                   {{"data", x}, {"label", soft}}, WithLoss(loss));
  // Also with multi_output when the label has the data's shape.
  NDArray xm = RandomArray(TShape({1, 3, 2}), 9, -2, 2);
  NDArray sm(TShape({1, 3, 2}), {0.2f, 0.5f, 0.3f, 0.1f, 0.5f, 0.4f});  // columns sum to 1
  CheckGradients("SoftmaxOutput", {{"multi_output", "True"}}, {{"data", xm}, {"label", sm}},
                 WithLoss([&](const std::vector<NDArray>& o) {
                   double l = 0;
                   for (int64_t i = 0; i < 6; ++i) l -= sm.GetFlat(i) * std::log(o[0].GetFlat(i));
                   return l;
                 }));
}

TEST_CASE("SoftmaxOutput valid normalisation counts ignore_label even without use_ignore", "[ops][softmax_output]") {
  // MXNet quirk: the -1 row still gets a gradient (no target class matches), but valid
  // normalisation counts only the 2 rows whose label differs from ignore_label.
  NDArray x = RandomArray(TShape({3, 4}), 10), label(TShape({3}), {1, -1, 2});
  auto exec = BindSingleOp("SoftmaxOutput", {{"normalization", "valid"}}, {{"data", x}, {"label", label}}, {"label"});
  exec->Forward(true);
  exec->Backward();
  const NDArray& g = exec->grad_arrays()[0];
  const NDArray& p = exec->outputs()[0];
  for (int64_t c = 0; c < 4; ++c) {
    CHECK(g.At({1, c}) == Approx(p.At({1, c}) / 2).margin(1e-6));
    CHECK(g.At({2, c}) == Approx((p.At({2, c}) - (c == 2)) / 2).margin(1e-6));
  }
}

TEST_CASE("SoftmaxOutput label shape inference", "[ops][softmax_output][shape]") {
  auto infer = [](const KwArgs& p, const TShape& d, std::optional<TShape> l = std::nullopt) {
    Symbol s = Symbol::Create("SoftmaxOutput", "sm", p, {{"data", Symbol::Variable("d")}});
    std::map<std::string, TShape> known{{"d", d}};
    if (l) known["sm_label"] = *l;
    return InferShape(s, known).arg_shapes[1];
  };
  CHECK(infer({}, TShape({8, 10})) == TShape({8}));
  // MXNet drops only the last axis, also without preserve_shape.
  CHECK(infer({}, TShape({8, 3, 10})) == TShape({8, 3}));
  CHECK(infer({{"preserve_shape", "True"}}, TShape({8, 3, 10})) == TShape({8, 3}));
  CHECK(infer({{"multi_output", "True"}}, TShape({8, 3, 4, 5})) == TShape({8, 20}));
  CHECK(infer({{"multi_output", "True"}}, TShape({8, 3, 4, 5}), TShape({8, 4, 5})) == TShape({8, 4, 5}));
  CHECK(infer({{"multi_output", "True"}}, TShape({8, 3, 4, 5}), TShape({8, 1, 4, 5})) == TShape({8, 1, 4, 5}));
  CHECK(infer({}, TShape({8, 10}), TShape({8, 10})) == TShape({8, 10}));  // probabilities
  CHECK_THROWS_WITH(infer({{"multi_output", "True"}}, TShape({8, 3, 4, 5}), TShape({8, 5})),
                    Catch::Contains("expecting label (8,20) or (8,4,5). But got (8,5)"));
  CHECK_THROWS_AS(infer({}, TShape({8, 10}), TShape({7})), ShapeError);
}

TEST_CASE("SoftmaxOutput rejects class labels outside 0..k-1 in training", "[ops][softmax_output]") {
  NDArray x = RandomArray(TShape({4, 10}), 11);
  auto run = [&](std::vector<float> labels, const KwArgs& params = {}, bool is_train = true) {
    auto exec = BindSingleOp("SoftmaxOutput", params,
                             {{"data", x}, {"label", NDArray(TShape({4}), labels)}}, {"label"});
    exec->Forward(is_train);
    return exec;
  };
  // Every class index 0..9 is valid (9.7 truncates to 9, as MXNet's int cast does).
  CHECK_NOTHROW(run({0, 9, 9.7f, 3}));
  CHECK_THROWS_WITH(run({1, 0, 9, 12}), Catch::Contains("label 12 at index 3 is out of range for 10 classes"));
  CHECK_THROWS_WITH(run({10, 0, 0, 0}), Catch::Contains("label 10 at index 0"));
  CHECK_THROWS_WITH(run({0, -2, 0, 0}), Catch::Contains("label -2 at index 1"));
  CHECK_THROWS_WITH(run({0, 0, std::nanf(""), 0}), Catch::Contains("label nan at index 2"));
  // ignore_label keeps its MXNet meaning, with or without use_ignore.
  CHECK_NOTHROW(run({0, -1, 0, 0}));
  CHECK_NOTHROW(run({0, 7, 0, 0}, {{"ignore_label", "7"}}));
  CHECK_THROWS_WITH(run({0, -1, 0, 0}, {{"ignore_label", "7"}, {"use_ignore", "True"}}),
                    Catch::Contains("(expected 0..9 or ignore_label 7)"));
  // Inference does not read the label (a placeholder label is common there).
  CHECK_NOTHROW(run({1, 0, 9, 12}, {}, false));
  // Probability labels (the data's shape) are no class indices.
  CHECK_NOTHROW(BindSingleOp("SoftmaxOutput", {}, {{"data", x}, {"label", RandomArray(TShape({4, 10}), 12, 0, 1)}},
                             {"label"})->Forward(true));
  // multi_output: k is axis 1; the label holds one class per (n, spatial) position.
  NDArray xm = RandomArray(TShape({1, 3, 2}), 13);
  auto multi = [&](std::vector<float> labels) {
    BindSingleOp("SoftmaxOutput", {{"multi_output", "True"}},
                 {{"data", xm}, {"label", NDArray(TShape({1, 2}), labels)}}, {"label"})->Forward(true);
  };
  CHECK_NOTHROW(multi({2, 0}));
  CHECK_THROWS_WITH(multi({2, 3}), Catch::Contains("label 3 at index 1 is out of range for 3 classes"));
}

TEST_CASE("SoftmaxOutput backward checks labels changed after Forward", "[ops][softmax_output]") {
  NDArray x = RandomArray(TShape({2, 3}), 14), label(TShape({2}), {0, 2});
  auto exec = BindSingleOp("SoftmaxOutput", {}, {{"data", x}, {"label", label}}, {"label"});
  exec->Forward(true);
  exec->arg_dict()["op_label"].SetFlat(1, 3.0f);
  CHECK_THROWS_WITH(exec->Backward(), Catch::Contains("label 3 at index 1 is out of range for 3 classes"));
}
