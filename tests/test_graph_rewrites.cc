// Inference graph rewrites (predict/graph_rewrites.h): a Predictor with BatchNorm folded must
// match the same Predictor without it (every op run as written, the reference path) within
// 1e-4 relative on every real and generated model, and leave the caller's symbol and arrays
// as they were.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <symbind/io/symbol_json.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/predict/graph_rewrites.h>
#include <symbind/predict/predictor.h>

#include "model_test_util.h"
#include "test_io_util.h"

using namespace symbind;
using namespace symbind::test;
using symbind_test::SharedDir;

namespace {
// max |got - want| / max |want| over one output.
double RelativeDifference(const NDArray& got, const NDArray& want) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<float> a = got.ToVector(), b = want.ToVector();
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(std::isfinite(a[i]));
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return diff / scale;
}

std::map<std::string, NDArray> DeepCopy(const std::map<std::string, NDArray>& m) {
  std::map<std::string, NDArray> out;
  for (auto& kv : m) out[kv.first] = kv.second.Copy();
  return out;
}

bool SameBits(const std::map<std::string, NDArray>& a, const std::map<std::string, NDArray>& b) {
  if (a.size() != b.size()) return false;
  for (auto& kv : a) {
    const NDArray& other = b.at(kv.first);
    if (kv.second.shape() != other.shape() || std::memcmp(kv.second.raw_data(), other.raw_data(), other.bytes()) != 0)
      return false;
  }
  return true;
}

size_t CountOps(const Symbol& symbol, const std::string& op) {
  Graph g(symbol);
  return std::count_if(g.nodes().begin(), g.nodes().end(), [&](const Graph::NodeInfo& n) {
    return !n.node->is_variable() && n.node->attrs.op->name == op;
  });
}

struct FoldResult {
  double worst = 0;  // largest relative difference over the outputs
  size_t folded = 0;
};

// Runs `m` on one Gaussian input with and without folding; checks that the caller's symbol
// and arrays are unchanged and that names and shapes of the outputs agree.
// `m` bound without a rewrite (`without` options) and with the defaults, on one Gaussian input.
struct BoundPair {
  Predictor reference, rewritten;
};
BoundPair BindWithAndWithout(const SharedModel& m, const TShape& data_shape, const PredictorOptions& without,
                             const PredictorOptions& with = {}) {
  NDArray input(data_shape);
  FillGaussian(input, 17, "rewrite-input");
  BoundPair p{Predictor(m.symbol, m.params, m.aux, {{"data", data_shape}}, without),
              Predictor(m.symbol, m.params, m.aux, {{"data", data_shape}}, with)};
  CHECK(p.rewritten.output_names() == p.reference.output_names());
  p.reference.SetInput("data", input);
  p.rewritten.SetInput("data", input);
  return p;
}

FoldResult CompareFolded(const SharedModel& m, const TShape& data_shape) {
  const std::string json_before = SaveSymbolJSON(m.symbol);
  const auto params_before = DeepCopy(m.params), aux_before = DeepCopy(m.aux);
  PredictorOptions unfolded_options;
  unfolded_options.disabled_passes = {"fold_batch_norm"};
  BoundPair pair = BindWithAndWithout(m, data_shape, unfolded_options);
  Predictor &reference = pair.reference, &folded = pair.rewritten;
  CHECK(reference.folded().empty());
  reference.Forward();
  folded.Forward();
  FoldResult r;
  r.folded = folded.folded().size();
  REQUIRE(folded.Outputs().size() == reference.Outputs().size());
  for (size_t i = 0; i < folded.Outputs().size(); ++i)
    r.worst = std::max(r.worst, RelativeDifference(folded.Output(i), reference.Output(i)));
  CHECK(SaveSymbolJSON(m.symbol) == json_before);
  CHECK(SameBits(m.params, params_before));
  CHECK(SameBits(m.aux, aux_before));
  return r;
}

SharedModel GeneratedModel(const std::string& path, const TShape& data_shape) {
  return GaussianModel(LoadSymbolFile(path), data_shape);
}
}  // namespace

TEST_CASE("FoldBatchNorm: real models without BatchNorm are run as they are", "[predict][rewrite][real][shared]") {
  for (const char* name : {"det1", "det2", "det3"}) {
    SharedModel m = LoadMtcnnModel(name);
    const int side = std::string(name) == "det1" ? 48 : std::string(name) == "det2" ? 24 : 48;
    FoldResult r = CompareFolded(m, TShape({2, 3, side, side}));
    CHECK(r.folded == 0);
    CHECK(r.worst == 0);
  }
  SharedModel lenet;
  LoadCheckpoint(std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet", 8, &lenet.symbol,
                 &lenet.params, &lenet.aux);
  FoldResult r = CompareFolded(lenet, TShape({4, 1, 28, 28}));
  CHECK(r.folded == 0);
  CHECK(r.worst == 0);
  SharedModel squeezenet =
      GeneratedModel(SharedDir() + "/models/symbols/squeezenet_v1.1-symbol.json", TShape({1, 3, 96, 96}));
  CHECK(CompareFolded(squeezenet, TShape({1, 3, 96, 96})).worst == 0);
}

TEST_CASE("FoldBatchNorm: ResNet-18/50, MobileNet v2, MobileFaceNet and RetinaFace match the unfolded graph", "[predict][rewrite][real][shared]") {
  const std::string bench = std::string(SYMBIND_SOURCE_DIR) + "/bench/models/";
  struct Case {
    std::string path;
    TShape shape;
    int not_folded;  // BatchNorm nodes left (a head), or -1: not every one follows a layer
  };
  const std::vector<Case> cases{
      {SharedDir() + "/models/symbols/resnet-18-symbol.json", TShape({2, 3, 64, 64}), -1},
      {bench + "resnet-50-symbol.json", TShape({1, 3, 64, 64}), -1},
      {bench + "mobilenet-v2-symbol.json", TShape({1, 3, 96, 96}), 0},
      {bench + "mobilefacenet-symbol.json", TShape({1, 3, 112, 112}), 1},
      // 100x100: the FPN's upsampled maps (8x8, 14x14) are really cropped (to 7x7, 13x13).
      {bench + "retinaface-mnet25-symbol.json", TShape({1, 3, 100, 100}), 0}};
  for (const Case& c : cases) {
    INFO(c.path);
    SharedModel m = GeneratedModel(c.path, c.shape);
    FoldResult r = CompareFolded(m, c.shape);
    CHECK(r.worst <= 1e-4);
    CHECK(r.folded > 0);
    if (c.not_folded >= 0) CHECK(r.folded + c.not_folded == CountOps(m.symbol, "BatchNorm"));
  }
}

TEST_CASE("FoldBatchNorm: only pairs whose folding nobody can see, weights and bias as BatchNorm scales them", "[predict][rewrite]") {
  // conv (with bias) -> bn (learned gamma) -> fc -> bn2 -> relu: both folded. conv2's output
  // is also a head, and bn4 is one, so their BatchNorms stay.
  Symbol data = Symbol::Variable("data");
  Symbol conv = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("num_filter", 4)
                    .SetInput("data", data).CreateSymbol("conv");
  Symbol bn = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetParam("eps", 1e-2)
                  .SetInput("data", conv).CreateSymbol("bn");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetParam("no_bias", true)
                  .SetInput("data", bn).CreateSymbol("fc");
  Symbol bn2 = OpBuilder("BatchNorm").SetInput("data", fc).CreateSymbol("bn2");
  Symbol conv2 = OpBuilder("Convolution").SetParam("kernel", "(1,1)").SetParam("num_filter", 3)
                     .SetInput("data", bn).CreateSymbol("conv2");
  Symbol bn3 = OpBuilder("BatchNorm").SetInput("data", conv2).CreateSymbol("bn3");
  Symbol relu = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", bn2).CreateSymbol("relu");
  Symbol conv4 = OpBuilder("Convolution").SetParam("kernel", "(1,1)").SetParam("num_filter", 2)
                     .SetInput("data", bn).CreateSymbol("conv4");
  Symbol bn4 = OpBuilder("BatchNorm").SetInput("data", conv4).CreateSymbol("bn4");
  Symbol net = Symbol::Group({relu, bn3, conv2, bn4});
  const TShape shape({2, 3, 6, 6});
  SharedModel m = GaussianModel(net, shape);

  RewrittenGraph r = FoldBatchNorm(net, m.params, m.aux);
  CHECK(r.folded == std::vector<std::string>{"bn", "bn2"});
  CHECK(r.symbol.ListOutputs() == net.ListOutputs());
  CHECK(CountOps(r.symbol, "BatchNorm") == 2);
  CHECK(r.args.count("conv_folded_bias") == 1);
  CHECK(r.args.count("bn_gamma") == 0);  // arrays the rewritten graph no longer reads are gone
  CHECK(r.aux.count("bn3_moving_mean") == 1);

  // The folded parameters, computed here in double from MXNet's inference formula.
  const float* w = m.params.at("conv_weight").fdata();
  const float* w_folded = r.args.at("conv_folded_weight").fdata();
  for (int c = 0; c < 4; ++c) {
    const double scale = m.params.at("bn_gamma").fdata()[c] / std::sqrt(m.aux.at("bn_moving_var").fdata()[c] + 1e-2);
    for (int i = 0; i < 27; ++i) CHECK(w_folded[c * 27 + i] == Approx(w[c * 27 + i] * scale).epsilon(1e-6));
    const double bias = (m.params.at("conv_bias").fdata()[c] - m.aux.at("bn_moving_mean").fdata()[c]) * scale +
                        m.params.at("bn_beta").fdata()[c];
    CHECK(r.args.at("conv_folded_bias").fdata()[c] == Approx(bias).epsilon(1e-6).margin(1e-7));
  }

  FoldResult compared = CompareFolded(m, shape);
  CHECK(compared.folded == 2);
  CHECK(compared.worst <= 1e-5);
  // Reshape keeps the folded graph and its arrays.
  Predictor p(m.symbol, m.params, m.aux, {{"data", shape}});
  Predictor wide = p.Reshape({{"data", TShape({3, 3, 6, 6})}});
  CHECK(wide.folded() == p.folded());
  CHECK(wide.Output("relu_output").shape() == TShape({3, 5}));
  CHECK(wide.executor().arg_dict().at("conv_folded_weight").SharesStorageWith(
      p.executor().arg_dict().at("conv_folded_weight")));
}

TEST_CASE("FoldBatchNorm: a folded weight that kernels read through packed forms is never kept whole", "[predict][rewrite]") {
  // conv: a 3x3 layer the packed or Winograd kernels take (forms only); dw: a depthwise layer,
  // whose kernel reads the folded weight itself.
  Symbol data = Symbol::Variable("data");
  Symbol conv = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("pad", "(1,1)").SetParam("num_filter", 32)
                    .SetInput("data", data).CreateSymbol("conv");
  Symbol bn = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", conv).CreateSymbol("bn");
  Symbol dw = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("pad", "(1,1)").SetParam("num_filter", 32)
                  .SetParam("num_group", 32).SetInput("data", bn).CreateSymbol("dw");
  Symbol bn2 = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", dw).CreateSymbol("bn2");
  Symbol relu = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", bn2).CreateSymbol("relu");
  const TShape shape({1, 16, 20, 20});
  SharedModel m = GaussianModel(relu, shape);
  FoldResult compared = CompareFolded(m, shape);
  CHECK(compared.folded == 2);
  CHECK(compared.worst <= 1e-5);

  NDArray input(shape);
  FillGaussian(input, 5, "folded-input");
  Predictor reference(m.symbol, m.params, m.aux, {{"data", shape}});
  reference.SetInput("data", input);
  reference.Forward();
  Predictor p(m.symbol, m.params, m.aux, {{"data", shape}});
  p.SetInput("data", input);
  // The caller's arrays are writable: a write after binding must not reach the folded weights.
  const NDArray saved = m.params.at("conv_weight").Copy();
  m.params.at("conv_weight").Fill(0.0f);
  p.Forward();
  p.Forward();
  saved.CopyTo(&m.params.at("conv_weight"));
  CHECK(p.Output(0).ToVector() == reference.Output(0).ToVector());
  const auto& bound = p.executor().arg_dict();
  CHECK(bound.at("conv_folded_weight").storage()->deferred_pending());
  CHECK_FALSE(bound.at("dw_folded_weight").storage()->deferred_pending());
  // Reading it still gives the folded values (computed now).
  const NDArray folded = bound.at("conv_folded_weight");
  const double scale0 = m.params.at("bn_gamma").fdata()[0] / std::sqrt(m.aux.at("bn_moving_var").fdata()[0] + 1e-3);
  CHECK(folded.GetFlat(4) == Approx(m.params.at("conv_weight").fdata()[4] * scale0).epsilon(1e-6));
  CHECK_FALSE(folded.storage()->deferred_pending());
}

namespace {
enum class Fusion { kActivations, kBlocks, kResidualAdds };
// Runs `m` with every rewrite and without one fusion and the residual-add fusion (which takes
// the convolutions and adds the others leave; kResidualAdds: without it alone, and no block
// fusion on either side, which would take MobileFaceNet's adds), all with
// BatchNorm folded, at 1, 2 and 4 threads, with the convolution fast paths on and off: the
// outputs must be bit-identical, the arguments listed alike, and the caller's symbol and arrays
// unchanged. Returns the nodes that fusion took away (fused_blocks() for kBlocks).
std::vector<std::string> CheckFusedBitIdentical(const SharedModel& m, const TShape& data_shape,
                                                Fusion fusion = Fusion::kActivations) {
  const std::string json_before = SaveSymbolJSON(m.symbol);
  const auto params_before = DeepCopy(m.params);
  PredictorOptions unfused_options, fused_options;
  if (fusion == Fusion::kBlocks) unfused_options.disabled_passes.insert("fuse_inverted_residuals");
  if (fusion == Fusion::kActivations) unfused_options.disabled_passes.insert("fuse_activations");
  if (fusion == Fusion::kResidualAdds) {
    unfused_options.disabled_passes.insert("fuse_inverted_residuals");
    fused_options.disabled_passes.insert("fuse_inverted_residuals");
  }
  unfused_options.disabled_passes.insert("fuse_residual_adds");
  BoundPair pair = BindWithAndWithout(m, data_shape, unfused_options, fused_options);
  Predictor &reference = pair.reference, &fused = pair.rewritten;
  // fused(): the activations' fusions, then the residual adds'.
  const std::vector<std::string>& before = reference.fused();
  REQUIRE(fused.fused().size() >= before.size());
  CHECK(std::equal(before.begin(), before.end(), fused.fused().begin()));
  std::vector<std::string> taken = fused.fused();
  if (fusion == Fusion::kBlocks) {
    CHECK(reference.fused_blocks().empty());
    taken = fused.fused_blocks();
  } else if (fusion == Fusion::kActivations) {
    CHECK(before.empty());
  } else {
    taken.erase(taken.begin(), taken.begin() + static_cast<std::ptrdiff_t>(before.size()));
  }
  CHECK(fused.executor().graph().ListArguments() == reference.executor().graph().ListArguments());
  const bool fast_paths = conv::FastPathsEnabled();
  for (bool fast : {true, false}) {
    conv::SetFastPathsEnabled(fast);
    for (int threads : {1, 2, 4}) {
      INFO("fast paths " << fast << ", threads " << threads);
      ScopedNumThreads scoped(threads);
      reference.Forward();
      fused.Forward();
      CHECK(BitIdentical(CopyOutputs(fused.executor()), CopyOutputs(reference.executor())));
    }
  }
  conv::SetFastPathsEnabled(fast_paths);
  CHECK(SaveSymbolJSON(m.symbol) == json_before);
  CHECK(SameBits(m.params, params_before));
  return taken;
}
}  // namespace

TEST_CASE("FuseActivations: relu and clip after a Convolution fused, bit-identical, the rest left as is", "[predict][rewrite]") {
  auto conv = [](const char* name, const Symbol& in, const char* kernel, int filters) {
    return OpBuilder("Convolution").SetParam("kernel", kernel).SetParam("pad", std::string(kernel) == "(3,3)" ? "(1,1)" : "(0,0)")
        .SetParam("num_filter", filters).SetInput("data", in).CreateSymbol(name);
  };
  auto act = [](const char* name, const Symbol& in, const char* type) {
    return OpBuilder("Activation").SetParam("act_type", type).SetInput("data", in).CreateSymbol(name);
  };
  auto clip = [](const char* name, const Symbol& in, const char* lo, const char* hi) {
    return OpBuilder("clip").SetParam("a_min", lo).SetParam("a_max", hi).SetInput("data", in).CreateSymbol(name);
  };
  Symbol data = Symbol::Variable("data");
  Symbol relu1 = act("relu1", conv("conv1", data, "(3,3)", 16), "relu");               // fused
  Symbol clip2 = clip("clip2", conv("conv2", relu1, "(1,1)", 24), "-0.5", "0.25");      // fused
  Symbol sig3 = act("sig3", conv("conv3", clip2, "(3,3)", 8), "sigmoid");              // not relu
  Symbol conv4 = conv("conv4", clip2, "(1,1)", 8);
  Symbol add4 = OpBuilder("elemwise_add").SetInput("lhs", act("relu4", conv4, "relu")).SetInput("rhs", conv4)
                    .CreateSymbol("add4");                                              // conv4 read twice
  Symbol relu5 = act("relu5", conv("conv5", clip2, "(1,1)", 4), "relu");               // a head
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetInput("data", clip2).CreateSymbol("fc");
  Symbol relu6 = act("relu6", fc, "relu");                                             // not a convolution
  Symbol dw = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("pad", "(1,1)").SetParam("num_filter", 24)
                  .SetParam("num_group", 24).SetInput("data", clip2).CreateSymbol("dw7");
  Symbol clip7 = clip("clip7", dw, "0", "6");                                          // fused (depthwise)
  Symbol pool7 = OpBuilder("Pooling").SetParam("kernel", "(2,2)").SetParam("stride", "(2,2)")
                     .SetInput("data", clip7).CreateSymbol("pool7");
  Symbol net = Symbol::Group({sig3, add4, relu5, relu6, pool7});
  const TShape shape({2, 3, 20, 20});  // 3x3 with 16 -> 16 channels would take Winograd; 1x1 the packed GEMM
  SharedModel m = GaussianModel(net, shape);

  RewrittenGraph r = FuseActivations(net, m.params, m.aux);
  CHECK(r.folded == std::vector<std::string>{"relu1", "clip2", "clip7"});
  CHECK(r.symbol.ListOutputs() == net.ListOutputs());
  CHECK(r.symbol.ListArguments() == net.ListArguments());
  CHECK(CountOps(r.symbol, "_fused_conv_act") == 3);
  CHECK(CountOps(r.symbol, "Activation") == 4);
  CHECK(CountOps(net, "_fused_conv_act") == 0);  // the caller's graph is untouched
  CHECK(CheckFusedBitIdentical(m, shape) == r.folded);
}

TEST_CASE("FuseActivations: LeakyReLU leaky and prelu after a Convolution fused, bit-identical, gamma stays an argument",
          "[predict][rewrite]") {
  auto conv = [](const char* name, const Symbol& in, const char* kernel, int filters, int groups = 1) {
    return OpBuilder("Convolution").SetParam("kernel", kernel).SetParam("pad", std::string(kernel) == "(1,1)" ? "(0,0)" : "(1,1)")
        .SetParam("num_filter", filters).SetParam("num_group", groups).SetInput("data", in).CreateSymbol(name);
  };
  auto leaky = [](const char* name, const Symbol& in, const char* type, const Symbol* gamma = nullptr) {
    OpBuilder b("LeakyReLU");
    if (type) b.SetParam("act_type", type);
    b.SetInput("data", in);
    if (gamma) b.SetInput("gamma", *gamma);
    return b.CreateSymbol(name);
  };
  Symbol data = Symbol::Variable("data");
  Symbol g1 = Symbol::Variable("prelu1_gamma"), g2 = Symbol::Variable("prelu2_gamma"), g3 = Symbol::Variable("prelu3_gamma");
  Symbol g5 = Symbol::Variable("prelu5_gamma");
  Symbol prelu1 = leaky("prelu1", conv("conv1", data, "(3,3)", 16), "prelu", &g1);       // fused (packed / im2col)
  Symbol prelu2 = leaky("prelu2", conv("conv2", prelu1, "(3,3)", 16, 16), "prelu", &g2);  // fused (depthwise)
  Symbol prelu3 = leaky("prelu3", conv("conv3", prelu2, "(1,1)", 24), "prelu", &g3);      // fused (packed GEMM)
  Symbol leaky4 = OpBuilder("LeakyReLU").SetParam("act_type", "leaky").SetParam("slope", "0.1")
                      .SetInput("data", conv("conv4", prelu3, "(3,3)", 40)).CreateSymbol("leaky4");  // fused (Winograd)
  Symbol default5 = leaky("leaky5", conv("conv5", leaky4, "(1,1)", 8), nullptr);          // fused: act_type defaults to leaky
  Symbol prelu6 = leaky("prelu6", conv("conv6", leaky4, "(1,1)", 8), "prelu", &g5);       // gamma (1,): left
  Symbol elu7 = leaky("elu7", conv("conv7", leaky4, "(1,1)", 8), "elu");                  // not leaky / prelu
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 6).SetInput("data", leaky4).CreateSymbol("fc");
  Symbol prelu8 = OpBuilder("LeakyReLU").SetParam("act_type", "leaky").SetInput("data", fc).CreateSymbol("leaky8");  // not a convolution
  Symbol flat5 = OpBuilder("Flatten").SetInput("data", default5).CreateSymbol("flat5");    // leaky5 no head
  Symbol net = Symbol::Group({flat5, prelu6, elu7, prelu8});
  const TShape shape({2, 3, 14, 13});
  SharedModel m = GaussianModel(net, shape);
  // Slopes of both signs, zero (x < 0 then gives -0) and above 1, not the near-1 Gaussians.
  for (const char* name : {"prelu1_gamma", "prelu2_gamma", "prelu3_gamma"}) {
    float* p = m.params.at(name).fdata();
    for (int64_t i = 0; i < m.params.at(name).Size(); ++i) p[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  }
  m.params["prelu5_gamma"] = NDArray(TShape({1}));  // one slope broadcast over the channels
  m.params["prelu5_gamma"].fdata()[0] = 0.3f;

  RewrittenGraph r = FuseActivations(net, m.params, m.aux);
  CHECK(r.folded == std::vector<std::string>{"prelu1", "prelu2", "prelu3", "leaky4", "leaky5"});
  CHECK(r.symbol.ListArguments() == net.ListArguments());  // every gamma still read, in its place
  CHECK(r.symbol.ListOutputs() == net.ListOutputs());
  CHECK(CountOps(r.symbol, "_fused_conv_act") == 5);
  CHECK(CountOps(r.symbol, "LeakyReLU") == 3);
  CHECK(CheckFusedBitIdentical(m, shape) == r.folded);
}

TEST_CASE("FuseActivations: relu, clip and leaky after a BatchNorm left unfolded fused into it, bit-identical",
          "[predict][rewrite]") {
  auto bn = [](const std::string& name, const Symbol& in, bool mean_var = false) {
    OpBuilder b("BatchNorm");
    b.SetParam("fix_gamma", "False").SetInput("data", in);
    if (mean_var) b.SetParam("output_mean_var", "True");
    return b.CreateSymbol(name);
  };
  auto act = [](const std::string& op, const std::string& name, const Symbol& in,
                const std::vector<std::pair<std::string, std::string>>& params) {
    OpBuilder b(op);
    for (auto& [k, v] : params) b.SetParam(k, v);
    return b.SetInput("data", in).CreateSymbol(name);
  };
  Symbol data = Symbol::Variable("data");
  Symbol pool = OpBuilder("Pooling").SetParam("kernel", "(2,2)").SetParam("stride", "(2,2)").SetInput("data", data)
                    .CreateSymbol("pool");  // no layer to fold into
  Symbol r1 = act("Activation", "r1", bn("bn1", pool), {{"act_type", "relu"}});                   // fused
  Symbol k2 = act("clip", "k2", bn("bn2", r1), {{"a_min", "-0.5"}, {"a_max", "0.25"}});           // fused
  Symbol l3 = act("LeakyReLU", "l3", bn("bn3", k2), {{"act_type", "leaky"}, {"slope", "0.3"}});   // fused
  Symbol bn4 = bn("bn4", l3, true);
  Symbol r4 = act("Activation", "r4", bn4[0], {{"act_type", "relu"}});  // bn4's mean and var are outputs too
  Symbol s5 = act("Activation", "s5", bn("bn5", r4), {{"act_type", "sigmoid"}});                  // not relu
  Symbol net = Symbol::Group({s5, bn4[1], bn4[2]});
  const TShape shape({2, 6, 10, 10});
  SharedModel m = GaussianModel(net, shape);
  RewrittenGraph r = FuseActivations(net, m.params, m.aux);
  CHECK(r.folded == std::vector<std::string>{"r1", "k2", "l3"});
  CHECK(r.symbol.ListArguments() == net.ListArguments());
  CHECK(r.symbol.ListAuxiliaryStates() == net.ListAuxiliaryStates());
  CHECK(CountOps(r.symbol, "_fused_batch_norm_act") == 3);
  CHECK(CheckFusedBitIdentical(m, shape) == r.folded);
}

TEST_CASE("FuseActivations: MobileNet v2, MobileFaceNet, ResNet-18 and SqueezeNet bit-identical to the unfused graph", "[predict][rewrite][real][shared]") {
  const std::string bench = std::string(SYMBIND_SOURCE_DIR) + "/bench/models/";
  struct Case {
    std::string path;
    TShape shape;
    size_t fused;  // relu / clip nodes that follow a convolution read by nothing else, and residual adds' convolutions
  };
  // ResNet-18 (pre-activation): relus follow BatchNorms; fused are those after a folded one
  // (relu0 after conv0 and each unit's relu2 after conv1: 1 + 8), those after a BatchNorm left
  // (each unit's bn1 after the previous add, and bn1 before the pooling: 8 + 1), each unit's
  // conv2 into its add (8) and the BatchNorms after the adds into them (8). MobileNet v2: 35
  // clips after convolutions (its adds go into the blocks). SqueezeNet: 26 relus, each after a
  // convolution (conv1, 8 fires x 3, conv10). MobileFaceNet: 33 prelus, each after a convolution
  // (with BatchNorm folded in between; its adds go into the blocks).
  const std::vector<Case> cases{{bench + "mobilenet-v2-symbol.json", TShape({1, 3, 64, 64}), 35},
                                {bench + "mobilefacenet-symbol.json", TShape({1, 3, 112, 112}), 33},
                                {SharedDir() + "/models/symbols/resnet-18-symbol.json", TShape({1, 3, 64, 64}), 9 + 9 + 8 + 8},
                                {SharedDir() + "/models/symbols/squeezenet_v1.1-symbol.json", TShape({1, 3, 64, 64}), 26}};
  for (const Case& c : cases) {
    INFO(c.path);
    CHECK(CheckFusedBitIdentical(GeneratedModel(c.path, c.shape), c.shape).size() == c.fused);
  }
}

TEST_CASE("FuseResidualAdds: residual adds and the activation after them fused into the convolution, bit-identical",
          "[predict][rewrite]") {
  auto conv = [](const std::string& name, const Symbol& in, int kernel, int filters) {
    auto pair = [](int v) { return "(" + std::to_string(v) + "," + std::to_string(v) + ")"; };
    return OpBuilder("Convolution").SetParam("kernel", pair(kernel)).SetParam("pad", pair(kernel / 2))
        .SetParam("num_filter", filters).SetInput("data", in).CreateSymbol(name);
  };
  auto add = [](const std::string& name, const Symbol& a, const Symbol& b) {
    return OpBuilder("elemwise_add").SetInput("lhs", a).SetInput("rhs", b).CreateSymbol(name);
  };
  auto relu = [](const std::string& name, const Symbol& in) {
    return OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", in).CreateSymbol(name);
  };
  Symbol data = Symbol::Variable("data");
  Symbol s1 = add("s1", conv("c1", data, 3, 16), data);             // fused, residual last; s1 read twice
  Symbol r2 = relu("r2", add("s2", s1, conv("c2", s1, 1, 16)));     // fused with the relu, residual first
  Symbol s3 = OpBuilder("add_n").SetParam("num_args", 2).SetInput("arg0", conv("c3", r2, 1, 16)).SetInput("arg1", r2)
                  .CreateSymbol("s3");
  Symbol k3 = OpBuilder("clip").SetParam("a_min", "-1").SetParam("a_max", "0.5").SetInput("data", s3)
                  .CreateSymbol("k3");                                // add_n of two: fused with the clip
  Symbol s4 = add("s4", conv("c4", k3, 3, 16), k3);                 // a head: fused, the relu after it not
  Symbol r4 = relu("r4", s4);
  Symbol c5 = conv("c5", r4, 1, 16);
  Symbol s5 = add("s5", c5, r4);                                    // c5 also read by a pooling: not fused
  Symbol p5 = OpBuilder("Pooling").SetParam("kernel", "(2,2)").SetParam("global_pool", "True").SetInput("data", c5)
                  .CreateSymbol("p5");
  Symbol s6 = add("s6", relu("r6", conv("c6", s5, 1, 16)), s5);     // relu before the add: c6 + r6 fused, no residual
  Symbol c7 = conv("c7", s6, 1, 16);
  Symbol s7 = add("s7", c7, c7);                                    // the same output twice: not fused
  // Wide 1x1 tiles (many positions), a 3x3 convolution (16 channels: Winograd), and at 4x4 the
  // deep 1x1 layer's tall tiles.
  Symbol c8 = conv("c8", s7, 1, 64);
  Symbol s8 = relu("r8", add("s8", conv("c8b", c8, 1, 64), c8));
  Symbol pool = OpBuilder("Pooling").SetParam("kernel", "(4,4)").SetParam("stride", "(4,4)").SetInput("data", s8)
                    .CreateSymbol("pool");
  Symbol s9 = add("s9", conv("c9", pool, 1, 64), pool);
  // Pre-activation units: each sum read by the next add and by a BatchNorm (+ relu) before the
  // next convolution, which becomes the sum's second output (at 4x4 made by the pass after the
  // convolution; the packed path's own is tested in test_conv_fast_paths.cc).
  auto bn = [](const std::string& name, const Symbol& in) {
    return OpBuilder("BatchNorm").SetParam("fix_gamma", "False").SetParam("eps", "2e-5").SetInput("data", in)
        .CreateSymbol(name);
  };
  Symbol s10 = add("s10", conv("u1", relu("r9b", bn("bn9", s9)), 1, 64), s9);
  // A BatchNorm without activation, every parameter at its default (eps 1e-3, fix_gamma).
  Symbol b2 = OpBuilder("BatchNorm").SetInput("data", s10).CreateSymbol("b2");
  Symbol s11 = add("s11", conv("u2", b2, 1, 64), s10);
  Symbol net = Symbol::Group({s4, p5, s11});
  const TShape shape({2, 16, 16, 16});
  SharedModel m = GaussianModel(net, shape);

  RewrittenGraph acts = FuseActivations(net, m.params, m.aux);
  RewrittenGraph r = FuseResidualAdds(acts.symbol, m.params, m.aux);
  CHECK(acts.folded == std::vector<std::string>{"r6", "r9b"});
  CHECK(r.folded == std::vector<std::string>{"c1", "c2", "s2", "c3", "s3", "c4", "c8b", "s8", "c9", "u1", "u2",
                                             "bn9", "b2"});
  CHECK(r.symbol.ListOutputs() == net.ListOutputs());
  CHECK(r.symbol.ListArguments() == net.ListArguments());  // residuals where the adds read them
  CHECK(r.symbol.ListAuxiliaryStates() == net.ListAuxiliaryStates());
  CHECK(CountOps(r.symbol, "elemwise_add") == 3);  // s5, s6, s7
  CHECK(CountOps(r.symbol, "add_n") == 0);
  CHECK(CountOps(r.symbol, "Activation") == 1);  // r4, after a head
  CHECK(CountOps(r.symbol, "BatchNorm") + CountOps(r.symbol, "_fused_batch_norm_act") == 0);
  CHECK(CountOps(acts.symbol, "elemwise_add") == 10);  // the rewrite's input is untouched
  CHECK(CheckFusedBitIdentical(m, shape, Fusion::kResidualAdds) == r.folded);
  // Without the relu fused first, c6 is a Convolution read by the relu, not the add, and bn9's
  // relu stays on its own: the same nodes are fused (bn9's second output without the relu).
  CHECK(FuseResidualAdds(net, m.params, m.aux).folded == r.folded);
}

TEST_CASE("FuseResidualAdds: a BatchNorm whose sum the depth-first order reaches first elsewhere stays a node",
          "[predict][rewrite]") {
  auto conv = [](const std::string& name, const Symbol& in) {
    return OpBuilder("Convolution").SetParam("kernel", "(1,1)").SetParam("num_filter", 8).SetInput("data", in)
        .CreateSymbol(name);
  };
  auto bn = [](const std::string& name, const Symbol& in) {
    return OpBuilder("BatchNorm").SetInput("data", in).CreateSymbol(name);
  };
  Symbol data = Symbol::Variable("data");
  Symbol s1 = OpBuilder("elemwise_add").SetInput("lhs", conv("c1", data)).SetInput("rhs", data).CreateSymbol("s1");
  // shortcut + branch: the add visits s1 first, then the branch reaches c3 (and its weight)
  // before bn2, so bn2's gamma, beta and statistics, as inputs of s1's node, would be listed
  // before c3's weight.
  Symbol mul = OpBuilder("elemwise_mul").SetInput("lhs", conv("c3", s1)).SetInput("rhs", bn("bn2", s1))
                   .CreateSymbol("mul");
  Symbol s2 = OpBuilder("elemwise_add").SetInput("lhs", s1).SetInput("rhs", conv("c2", mul)).CreateSymbol("s2");
  const TShape shape({1, 8, 6, 6});
  SharedModel m = GaussianModel(s2, shape);
  RewrittenGraph r = FuseResidualAdds(s2, m.params, m.aux);
  CHECK(r.folded == std::vector<std::string>{"c1", "c2"});
  CHECK(CountOps(r.symbol, "BatchNorm") == 1);
  CHECK(r.symbol.ListArguments() == s2.ListArguments());
  CHECK(r.symbol.ListAuxiliaryStates() == s2.ListAuxiliaryStates());
  CHECK(CheckFusedBitIdentical(m, shape, Fusion::kResidualAdds) == r.folded);
}

TEST_CASE("FuseResidualAdds: ResNet-18 and ResNet-50 (pre-activation) and MobileFaceNet bit-identical to the unfused adds",
          "[predict][rewrite][real][shared]") {
  const std::string bench = std::string(SYMBIND_SOURCE_DIR) + "/bench/models/";
  struct Case {
    std::string path;
    TShape shape;
    size_t fused;  // the convolution before each add: one per ResNet unit, per MobileFaceNet residual block
  };
  // ResNet's units: each sum's BatchNorm + relu too (the next unit's bn1, and bn1 before the
  // pooling after the last).
  const std::vector<Case> cases{{SharedDir() + "/models/symbols/resnet-18-symbol.json", TShape({1, 3, 64, 64}), 8 + 8},
                                {bench + "resnet-50-symbol.json", TShape({2, 3, 64, 64}), 16 + 16},
                                {bench + "mobilefacenet-symbol.json", TShape({1, 3, 112, 112}), 12}};
  for (const Case& c : cases) {
    INFO(c.path);
    CHECK(CheckFusedBitIdentical(GeneratedModel(c.path, c.shape), c.shape, Fusion::kResidualAdds).size() == c.fused);
  }
}

TEST_CASE("FuseInvertedResiduals: blocks fused into one node, bit-identical, the rest left as is",
          "[predict][rewrite][inverted_residual]") {
  auto conv = [](const std::string& name, const Symbol& in, int kernel, int filters, int stride = 1, int groups = 1) {
    auto pair = [](int v) { return "(" + std::to_string(v) + "," + std::to_string(v) + ")"; };
    return OpBuilder("Convolution").SetParam("kernel", pair(kernel)).SetParam("stride", pair(stride))
        .SetParam("pad", pair(kernel / 2)).SetParam("num_filter", filters).SetParam("num_group", groups)
        .SetInput("data", in).CreateSymbol(name);
  };
  auto relu6 = [](const std::string& name, const Symbol& in) {
    return OpBuilder("clip").SetParam("a_min", "0").SetParam("a_max", "6").SetInput("data", in).CreateSymbol(name);
  };
  auto add = [](const std::string& name, const Symbol& a, const Symbol& b) {
    return OpBuilder("elemwise_add").SetInput("lhs", a).SetInput("rhs", b).CreateSymbol(name);
  };
  // Expansion (relu6), depthwise (relu6 or relu), projection: returns the projection.
  auto block = [&](const std::string& n, const Symbol& x, int hidden, int out, int kernel, int stride) {
    Symbol e = relu6(n + "_expand_relu6", conv(n + "_expand", x, 1, hidden));
    Symbol d = conv(n + "_dw", e, kernel, hidden, stride, hidden);
    d = kernel == 5 ? OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", d).CreateSymbol(n + "_dw_relu")
                    : relu6(n + "_dw_relu6", d);
    return conv(n + "_project", d, 1, out);
  };
  Symbol data = Symbol::Variable("data");
  Symbol a = add("a_plus", block("a", data, 24, 8, 3, 1), data);  // residual: the add fused too
  Symbol b = block("b", a, 16, 12, 3, 2);                          // stride 2, no add
  // c: the expansion also read by a pooling: not fused.
  Symbol c_expand = relu6("c_expand_relu6", conv("c_expand", b, 1, 24));
  Symbol c_project = conv("c_project", relu6("c_dw_relu6", conv("c_dw", c_expand, 3, 24, 1, 24)), 1, 12);
  Symbol c_pool = OpBuilder("Pooling").SetParam("kernel", "(2,2)").SetParam("global_pool", "True")
                      .SetInput("data", c_expand).CreateSymbol("c_pool");
  Symbol c = add("c_plus", b, c_project);
  Symbol d = block("d", c, 36, 12, 5, 1);  // 5x5; its projection is a head and read by e_plus: no add fused
  Symbol e = add("e_plus", block("e", c, 24, 12, 3, 1), d);        // added to another block's output
  Symbol f = add("f_plus", c, block("f", c, 20, 12, 3, 1));        // x + projection: fused with the add
  Symbol net = Symbol::Group({e, d, c_pool, f});
  const TShape shape({2, 8, 12, 12});
  SharedModel m = GaussianModel(net, shape);

  RewrittenGraph fused_acts = FuseActivations(net, m.params, m.aux);
  RewrittenGraph r = FuseInvertedResiduals(fused_acts.symbol, m.params, m.aux);
  std::vector<std::string> folded = r.folded;
  std::sort(folded.begin(), folded.end());
  CHECK(folded == std::vector<std::string>{"a_dw", "a_expand", "a_project", "b_dw", "b_expand", "d_dw", "d_expand",
                                           "e_dw", "e_expand", "f_dw", "f_expand", "f_project"});
  CHECK(r.symbol.ListOutputs() == net.ListOutputs());
  CHECK(r.symbol.ListArguments() == net.ListArguments());
  CHECK(CountOps(r.symbol, "_fused_inverted_residual") == 5);
  CHECK(CountOps(r.symbol, "elemwise_add") == 2);  // c_plus, e_plus
  CHECK(CountOps(fused_acts.symbol, "_fused_inverted_residual") == 0);  // the rewrite's input is untouched
  std::vector<std::string> blocks = CheckFusedBitIdentical(m, shape, Fusion::kBlocks);
  std::sort(blocks.begin(), blocks.end());
  CHECK(blocks == folded);
  // Without activation fusion nothing matches (the relu6 nodes sit between the convolutions).
  CHECK(FuseInvertedResiduals(net, m.params, m.aux).folded.empty());
}

TEST_CASE("FuseInvertedResiduals: MobileFaceNet's prelu blocks bit-identical to the unfused ones",
          "[predict][rewrite][inverted_residual][real]") {
  // 15 blocks with prelu after the expansion and the depthwise convolution (their gammas stay
  // arguments, in the graph's order): 12 residual, 3 downsampling.
  const std::string path = std::string(SYMBIND_SOURCE_DIR) + "/bench/models/mobilefacenet-symbol.json";
  const TShape shape({2, 3, 112, 112});
  CHECK(CheckFusedBitIdentical(GeneratedModel(path, shape), shape, Fusion::kBlocks).size() == 12 * 3 + 3 * 2);
}

TEST_CASE("FuseInvertedResiduals: MobileNet v2 bit-identical to the unfused blocks", "[predict][rewrite][inverted_residual][real]") {
  // 16 blocks with an expansion: 10 residual (expansion, depthwise and projection fused into the
  // add), 6 not (expansion and depthwise fused into the projection).
  const std::string path = std::string(SYMBIND_SOURCE_DIR) + "/bench/models/mobilenet-v2-symbol.json";
  const TShape shape({2, 3, 64, 64});
  CHECK(CheckFusedBitIdentical(GeneratedModel(path, shape), shape, Fusion::kBlocks).size() == 10 * 3 + 6 * 2);
}

TEST_CASE("Graph passes: one list in a declared order, disabled by name, an unknown name an error", "[predict][rewrite]") {
  std::vector<std::string> names;
  for (const GraphPass& pass : GraphPasses()) names.push_back(pass.name);
  CHECK(names == std::vector<std::string>{"fold_batch_norm", "fuse_activations", "fuse_inverted_residuals",
                                          "fuse_residual_adds", "fuse_quantized_activations",
                                          "fuse_quantized_inverted_residuals"});
  Symbol data = Symbol::Variable("data");
  Symbol conv = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("num_filter", 4).SetInput("data", data)
                    .CreateSymbol("conv");
  Symbol bn = OpBuilder("BatchNorm").SetInput("data", conv).CreateSymbol("bn");
  Symbol relu = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", bn).CreateSymbol("relu");
  Symbol net = OpBuilder("Flatten").SetInput("data", relu).CreateSymbol("flat");
  const TShape shape({1, 2, 6, 6});
  SharedModel m = GaussianModel(net, shape);
  const PassesResult all = RunGraphPasses(net, m.params, m.aux, {});
  CHECK(all.rewritten.at("fold_batch_norm") == std::vector<std::string>{"bn"});
  CHECK(all.rewritten.at("fuse_activations") == std::vector<std::string>{"relu"});
  CHECK(CountOps(all.symbol, "_fused_conv_act") == 1);
  const PassesResult no_fold = RunGraphPasses(net, m.params, m.aux, {"fold_batch_norm"});
  CHECK(no_fold.rewritten.count("fold_batch_norm") == 0);
  CHECK(no_fold.rewritten.at("fuse_activations") == std::vector<std::string>{"relu"});  // into the BatchNorm
  CHECK(CountOps(no_fold.symbol, "_fused_batch_norm_act") == 1);
  CHECK_THROWS_WITH(RunGraphPasses(net, m.params, m.aux, {"fold_batchnorm"}),
                    Catch::Contains("no graph pass named 'fold_batchnorm'") && Catch::Contains("fuse_residual_adds"));
  PredictorOptions options;
  options.disabled_passes = {"fuse_everything"};
  CHECK_THROWS_WITH(Predictor(net, m.params, m.aux, {{"data", shape}}, options),
                    Catch::Contains("no graph pass named 'fuse_everything'"));
  // The command-line flags, mapped in one place.
  CHECK(DisabledPasses({}).empty());
  CHECK(DisabledPasses({true, false, false, false}) == std::set<std::string>{"fold_batch_norm"});
  CHECK(DisabledPasses({false, true, false, false}) ==
        std::set<std::string>{"fuse_activations", "fuse_inverted_residuals", "fuse_residual_adds",
                              "fuse_quantized_activations", "fuse_quantized_inverted_residuals"});
  CHECK(DisabledPasses({false, false, true, true}) ==
        std::set<std::string>{"fuse_inverted_residuals", "fuse_residual_adds", "fuse_quantized_inverted_residuals"});
}
