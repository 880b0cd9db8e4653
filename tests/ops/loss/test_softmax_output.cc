// SoftmaxOutput: softmax forward, the cross-entropy gradient in every normalisation mode, labels.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
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

namespace {
// Cross-entropy of softmax rows against integer labels: the loss whose gradient SoftmaxOutput's
// backward produces (with normalization null and grad_scale 1).
double CrossEntropy(const NDArray& prob, const NDArray& label, int64_t k, int64_t inner) {
  double loss = 0;
  int64_t groups = prob.Size() / k;
  for (int64_t g = 0; g < groups; ++g) {
    int64_t o = g / inner, i = g % inner;
    int64_t c = static_cast<int64_t>(label.GetFlat(g));
    loss -= std::log(prob.GetFlat(o * k * inner + c * inner + i));
  }
  return loss;
}
}  // namespace

TEST_CASE("SoftmaxOutput forward is softmax", "[ops][softmax_output]") {
  NDArray x = RandomArray(TShape({3, 4}), 14, -3.0f, 3.0f);
  NDArray label(TShape({3}), {0, 3, 1});
  NDArray y = RunForward("SoftmaxOutput", {}, {{"data", x}, {"label", label}});
  for (int64_t r = 0; r < 3; ++r) {
    double z = 0;
    for (int64_t c = 0; c < 4; ++c) z += std::exp(x.GetFlat(r * 4 + c));
    for (int64_t c = 0; c < 4; ++c)
      CHECK(y.GetFlat(r * 4 + c) == Approx(std::exp(x.GetFlat(r * 4 + c)) / z).epsilon(1e-5));
  }
}

TEST_CASE("SoftmaxOutput gradient is the cross-entropy gradient", "[ops][softmax_output][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 15, -2.0f, 2.0f);
  NDArray label(TShape({3}), {0, 3, 1});
  GradCheckOptions opt;
  opt.no_grad = {"label"};
  opt.loss = [&](const std::vector<NDArray>& outs) { return CrossEntropy(outs[0], label, 4, 1); };
  CheckGradients("SoftmaxOutput", {}, {{"data", x}, {"label", label}}, opt);

  // grad_scale and batch normalisation scale the same gradient.
  opt.loss = [&](const std::vector<NDArray>& outs) { return 0.5 * CrossEntropy(outs[0], label, 4, 1) / 3; };
  CheckGradients("SoftmaxOutput", {{"grad_scale", "0.5"}, {"normalization", "batch"}},
                 {{"data", x}, {"label", label}}, opt);

  // multi_output: softmax over axis 1 at every position.
  NDArray xm = RandomArray(TShape({2, 3, 2}), 16);
  NDArray lm(TShape({2, 2}), {0, 2, 1, 1});
  // MXNet normalises multi_output gradients by the spatial size (2 here) by default.
  opt.loss = [&](const std::vector<NDArray>& outs) { return CrossEntropy(outs[0], lm, 3, 2) / 2; };
  CheckGradients("SoftmaxOutput", {{"multi_output", "True"}}, {{"data", xm}, {"label", lm}}, opt);
}

TEST_CASE("SoftmaxOutput ignore_label with valid normalisation", "[ops][softmax_output]") {
  NDArray x = RandomArray(TShape({3, 4}), 17);
  NDArray label(TShape({3}), {1, -1, 2});
  auto exec = BindSingleOp("SoftmaxOutput",
                           {{"use_ignore", "True"}, {"ignore_label", "-1"}, {"normalization", "valid"}},
                           {{"data", x}, {"label", label}}, {"label"});
  exec->Forward(true);
  exec->Backward();
  const NDArray& g = exec->grad_arrays()[0];
  const NDArray& p = exec->outputs()[0];
  for (int64_t c = 0; c < 4; ++c) {
    CHECK(g.At({1, c}) == 0.0f);  // ignored row
    CHECK(g.At({0, c}) == Approx((p.At({0, c}) - (c == 1)) / 2).margin(1e-6));  // 2 valid rows
  }
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
