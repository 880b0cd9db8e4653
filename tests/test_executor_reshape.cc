// Executor::Reshape (MXNet's semantics): the new executor computes what a fresh SimpleBind at
// the new shapes computes, shares the arrays whose shapes stay, and refuses what MXNet refuses.
#include "model_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Outputs of `exec` on `input` (copied into its data array).
std::vector<NDArray> RunOn(Executor& exec, const NDArray& input) {
  NDArray data = exec.arg_dict().at("data");
  input.CopyTo(&data);
  exec.Forward(false);
  return CopyOutputs(exec);
}
}  // namespace

TEST_CASE("Reshape gives a fresh SimpleBind's outputs and shares the parameters", "[executor][reshape][real][shared]") {
  const TShape bound({1, 3, 64, 64});
  const SharedModel m = ResNet18Logits(bound);
  auto exec = BindShared(m, NDArray(bound));
  const NDArray first = RandomArray(bound, 7);
  const std::vector<NDArray> before = RunOn(*exec, first);

  // Smaller (2x3x32x32 has fewer elements) needs no flag; larger needs allow_up_sizing.
  for (const TShape& shape : {TShape({2, 3, 32, 32}), TShape({2, 3, 80, 80})}) {
    INFO(shape);
    const bool grows = shape.Size() > bound.Size();
    auto reshaped = exec->Reshape({{"data", shape}}, false, grows);
    REQUIRE(reshaped->arg_dict().at("data").shape() == shape);
    const NDArray input = RandomArray(shape, 8);
    auto fresh = BindShared(m, NDArray(shape));
    CHECK(BitIdentical(RunOn(*reshaped, input), RunOn(*fresh, input)));

    for (auto& kv : m.params) CHECK(reshaped->arg_dict().at(kv.first).SharesStorageWith(kv.second));
    for (auto& kv : m.aux) CHECK(reshaped->aux_dict().at(kv.first).SharesStorageWith(kv.second));
    CHECK_FALSE(reshaped->arg_dict().at("data").SharesStorageWith(exec->arg_dict().at("data")));
    CHECK_FALSE(reshaped->outputs()[0].SharesStorageWith(exec->outputs()[0]));
  }
  // The original executor is unchanged.
  CHECK(exec->arg_dict().at("data").shape() == bound);
  CHECK(BitIdentical(RunOn(*exec, first), before));
}

TEST_CASE("Reshape of a training executor shares gradients of unchanged arguments", "[executor][reshape]") {
  Symbol data = Symbol::Variable("data");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 3).SetInput("data", data).CreateSymbol("fc");
  Symbol net = OpBuilder("SoftmaxOutput").SetInput("data", fc).CreateSymbol("softmax");
  auto exec = SimpleBind(net, Context::CPU(), {{"data", RandomArray(TShape({4, 5}), 1)}});
  auto reshaped = exec->Reshape({{"data", TShape({2, 5})}, {"softmax_label", TShape({2})}});
  CHECK(reshaped->grad_dict().at("fc_weight").SharesStorageWith(exec->grad_dict().at("fc_weight")));
  CHECK(reshaped->grad_dict().at("data").is_none());  // grad_req null stays null
  CHECK(reshaped->grad_reqs() == exec->grad_reqs());

  // Gradients equal those of a fresh bind at the new shape over the same weights.
  const NDArray x = RandomArray(TShape({2, 5}), 2);
  const NDArray label(TShape({2}), {0, 2});
  auto fresh = SimpleBind(net, Context::CPU(),
                          {{"data", x.Copy()}, {"softmax_label", label.Copy()},
                           {"fc_weight", exec->arg_dict().at("fc_weight")},
                           {"fc_bias", exec->arg_dict().at("fc_bias")}});
  NDArray rx = reshaped->arg_dict().at("data"), rl = reshaped->arg_dict().at("softmax_label");
  x.CopyTo(&rx);
  label.CopyTo(&rl);
  for (Executor* e : {reshaped.get(), fresh.get()}) {
    e->Forward(true);
    e->Backward();
  }
  CHECK(BitIdentical({reshaped->grad_dict().at("fc_weight"), reshaped->grad_dict().at("fc_bias")},
                     {fresh->grad_dict().at("fc_weight"), fresh->grad_dict().at("fc_bias")}));
}

TEST_CASE("Reshape refuses what MXNet refuses, with the flag that allows it", "[executor][reshape][real][mtcnn][shared]") {
  const SharedModel m = LoadMtcnnModel("det2");
  auto exec = BindShared(m, NDArray(TShape({4, 3, 24, 24})));
  // The label follows the batch but was not given.
  CHECK_THROWS_AS(exec->Reshape({{"data", TShape({2, 3, 24, 24})}}), ShapeError);
  CHECK_THROWS_WITH(exec->Reshape({{"data", TShape({2, 3, 24, 24})}}),
                    Catch::Contains("'prob1_label'") && Catch::Contains("partial_shaping"));
  CHECK(exec->Reshape({{"data", TShape({2, 3, 24, 24})}}, true)->outputs()[0].shape()[0] == 2);
  // Growing.
  CHECK_THROWS_WITH(exec->Reshape({{"data", TShape({8, 3, 24, 24})}}, true),
                    Catch::Contains("'data' would grow from (4,3,24,24) to (8,3,24,24)") &&
                        Catch::Contains("allow_up_sizing"));
  CHECK(exec->Reshape({{"data", TShape({8, 3, 24, 24})}}, true, true)->outputs()[0].shape()[0] == 8);
  // R-Net's fully connected layer fixes the spatial size: its weight would have to change.
  CHECK_THROWS_WITH(exec->Reshape({{"data", TShape({4, 3, 30, 30})}, {"prob1_label", TShape({4})}}, false, true),
                    Catch::Contains("_weight' would change"));
  CHECK_THROWS_WITH(exec->Reshape({{"data", TShape({4, 3, -1, 24})}}),
                    Catch::Contains("shape given for 'data' is incomplete: (4,3,?,24)"));
  CHECK_THROWS_WITH(exec->Reshape({{"date", TShape({4, 3, 24, 24})}}),
                    Catch::Contains("'date' is not an input") && Catch::Contains("data, "));
}
