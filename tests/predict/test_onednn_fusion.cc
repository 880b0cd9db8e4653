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
