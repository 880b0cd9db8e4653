// FuseOneDnnConvolutions (predict/onednn_fusion.h) on a real topology: ResNet-18's float graph,
// BatchNorm folded, runs as _sg_mkldnn_conv nodes with the outputs of the unfused graph.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include <symbind/core/graph.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/graph_rewrites.h>
#include <symbind/predict/onednn_fusion.h>
#include <symbind/predict/predictor.h>

#include "../model_test_util.h"
#include "../op_test_util.h"

using namespace symbind;

TEST_CASE("FuseOneDnnConvolutions: ResNet-18 as _sg_mkldnn_conv nodes gives the unfused outputs", "[onednn_fusion][shared]") {
  const TShape shape({1, 3, 64, 64});
  const symbind::test::SharedModel m = symbind::test::ResNet18Logits(shape);
  const RewrittenGraph folded = FoldBatchNorm(m.symbol, m.params, m.aux);
  const OneDnnFusion fused = FuseOneDnnConvolutions(folded.symbol);
  auto count = [](const Symbol& s, const std::string& op) {
    size_t n = 0;
    const Graph graph(s);  // named: a temporary's nodes() would dangle in the loop
    for (const auto& info : graph.nodes()) n += !info.node->is_variable() && info.node->attrs.op->name == op;
    return n;
  };
  const size_t convs = count(folded.symbol, "Convolution");
  CHECK(convs >= 20);
  CHECK(count(fused.symbol, "_sg_mkldnn_conv") == convs);  // every convolution, with what follows it
  CHECK(count(fused.symbol, "Convolution") == 0);
  CHECK(count(fused.symbol, "elemwise_add") == 0);  // each residual add is some convolution's sum
  CHECK(fused.members.size() == convs);
  CHECK(fused.symbol.ListOutputs() == m.symbol.ListOutputs());

  const NDArray data = symbind::test::RandomArray(shape, 7);
  auto run = [&](const Symbol& s) {
    PredictorOptions o;
    for (const GraphPass& pass : GraphPasses()) o.disabled_passes.insert(pass.name);
    Predictor p(s, folded.args, folded.aux, {{"data", shape}}, o);
    p.SetInput("data", data);
    p.Forward();
    return p.Output(0).Copy();
  };
  const NDArray want = run(folded.symbol), got = run(LoadSymbolJSON(SaveSymbolJSON(fused.symbol)));
  REQUIRE(got.shape() == want.shape());
  float worst = 0, scale = 0;
  for (int64_t i = 0; i < want.Size(); ++i) {
    worst = std::max(worst, std::fabs(got.fdata()[i] - want.fdata()[i]));
    scale = std::max(scale, std::fabs(want.fdata()[i]));
  }
  INFO("max |fused - unfused| " << worst << " of " << scale);
  CHECK(worst <= 1e-5f * scale);
}

TEST_CASE("FuseOneDnnConvolutions: a BatchNorm joins only when its mean and variance outputs go unread", "[onednn_fusion]") {
  const Symbol conv = OpBuilder("Convolution").SetParam("kernel", "(1,1)").SetParam("num_filter", 4)
                          .SetInput("data", Symbol::Variable("data")).CreateSymbol("conv");
  const TShape shape({2, 3, 5, 5});
  for (const bool statistics_out : {false, true}) {
    INFO("BatchNorm's mean and variance among the outputs: " << statistics_out);
    const Symbol net = OpBuilder("BatchNorm").SetParam("output_mean_var", statistics_out ? "True" : "False")
                           .SetInput("data", conv).CreateSymbol("bn");
    const symbind::test::SharedModel m = symbind::test::GaussianModel(net, shape);
    const OneDnnFusion fused = FuseOneDnnConvolutions(net);
    REQUIRE(fused.members.size() == 1);
    const std::vector<std::string> want_members =
        statistics_out ? std::vector<std::string>{"conv"} : std::vector<std::string>{"conv", "bn"};
    CHECK(fused.members.begin()->second == want_members);
    CHECK(fused.symbol.ListOutputs() == net.ListOutputs());
    const NDArray data = symbind::test::RandomArray(shape, 3);
    auto run = [&](const Symbol& s) {
      Predictor p(s, m.params, m.aux, {{"data", shape}});
      p.SetInput("data", data);
      p.Forward();
      std::vector<NDArray> out;
      for (const auto& o : p.Outputs()) out.push_back(o.Copy());
      return out;
    };
    const std::vector<NDArray> want = run(net), got = run(LoadSymbolJSON(SaveSymbolJSON(fused.symbol)));
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      REQUIRE(got[k].shape() == want[k].shape());
      for (int64_t i = 0; i < want[k].Size(); ++i) CHECK(std::fabs(got[k].fdata()[i] - want[k].fdata()[i]) <= 1e-5f);
    }
  }
}
