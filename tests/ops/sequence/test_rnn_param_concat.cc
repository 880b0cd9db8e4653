// _rnn_param_concat: computes as Concat (values and gradients), and infers two unknown inputs
// from the output as equal halves, as Gluon's bidirectional RNN exports need.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_rnn_param_concat concatenates and splits the gradient as Concat", "[ops][rnn]") {
  const KwArgs params{{"num_args", "3"}, {"dim", "0"}};
  const NDArray a = RandomArray({4}, 1), b = RandomArray({2}, 2), c = RandomArray({3}, 3);
  const NDArray y = RunForward("_rnn_param_concat", params, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  REQUIRE(y.shape() == TShape({9}));
  for (int64_t i = 0; i < 9; ++i)
    CHECK(y.GetFlat(i) == (i < 4 ? a.GetFlat(i) : i < 6 ? b.GetFlat(i - 4) : c.GetFlat(i - 6)));
  CheckGradients("_npi_rnn_param_concat", params, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  CheckGradients("_rnn_param_concat", {{"num_args", "2"}, {"dim", "1"}},
                 {{"arg0", RandomArray({2, 3}, 4)}, {"arg1", RandomArray({2, 1}, 5)}});
}

TEST_CASE("_rnn_param_concat infers the two unknown i2h weights of a bidirectional RNN", "[ops][rnn]") {
  // A bidirectional one-layer rnn_tanh, H = 2, input size 3: i2h weights (2*3 each) unknown
  // without the data; h2h weights and biases known.
  Symbol w0 = Symbol::Variable("l0_i2h_weight"), w1 = Symbol::Variable("r0_i2h_weight");
  Symbol rest = Symbol::Variable("rest");
  Symbol packed = Symbol::Create("_rnn_param_concat", "concat", {{"num_args", "3"}, {"dim", "0"}}, {},
                                 {w0, w1, rest});
  Symbol rnn = Symbol::Create("RNN", "rnn", {{"mode", "rnn_tanh"}, {"state_size", "2"}, {"num_layers", "1"},
                                             {"bidirectional", "True"}},
                              {{"parameters", packed}});
  // Packed size (3 + 2 + 2) * 2 * 2 = 28; rest = 2 * (2*2) h2h + 2 * 4 biases = 16.
  ShapeInferResult r = InferShape(rnn, {{"rnn_data", TShape({5, 1, 3})}, {"rest", TShape({16})}});
  const auto names = rnn.ListArguments();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == "l0_i2h_weight" || names[i] == "r0_i2h_weight") CHECK(r.arg_shapes[i] == TShape({6}));
  CHECK_THROWS_AS(InferShape(rnn, {{"rnn_data", TShape({5, 1, 3})}, {"rest", TShape({17})}}), ShapeError);
}
