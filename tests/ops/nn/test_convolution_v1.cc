// Convolution_v1: the naive convolution of conv_test_util.h as reference, gradients by finite
// differences, the v1 parameter set (2-D/3-D kernels only, no NCW layout).
#include "conv_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Convolution_v1 computes a 2-D convolution", "[ops][Convolution_v1][grad]") {
  const ConvCase cc({3, 3}, {2, 2}, {}, {1, 1}, 6, 2);
  NDArray x = RandomArray(TShape({2, 4, 6, 5}), 1), w = RandomArray(WeightShape(cc, 4), 2),
          b = RandomArray(TShape({6}), 3);
  RequireClose(RunForward("Convolution_v1", cc.Params(), {{"data", x}, {"weight", w}, {"bias", b}}),
               NaiveConv(x, w, &b, cc), 1e-4f);
  NDArray xs = RandomArray(TShape({1, 2, 4, 4}), 4), ws = RandomArray(TShape({3, 2, 2, 2}), 5);
  CheckGradients("Convolution_v1", {{"kernel", "(2, 2)"}, {"num_filter", "3"}, {"no_bias", "True"}},
                 {{"data", xs}, {"weight", ws}});
}

TEST_CASE("Convolution_v1 has MXNet's v1 parameters and infers weight shapes", "[ops][Convolution_v1][shape]") {
  Symbol s = Symbol::Create("Convolution_v1", "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "c_weight", "c_bias"});
  auto r = InferShape(s, {{"data", TShape({2, 3, 10, 10})}});
  CHECK(r.arg_shapes[1] == TShape({8, 3, 3, 3}));
  CHECK(r.out_shapes[0] == TShape({2, 8, 8, 8}));
  CHECK_THROWS_AS(Symbol::Create("Convolution_v1", "c", {{"kernel", "(3,)"}, {"num_filter", "8"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("Convolution_v1", "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"layout", "NCW"}}, {}),
                  ParamError);
  // Parameters of the current Convolution that v1 lacks are unknown keys.
  CHECK_THROWS_AS(Symbol::Create("Convolution_v1", "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"foo", "1"}}, {}),
                  ParamError);
}
