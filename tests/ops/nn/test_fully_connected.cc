// FullyConnected: forward against a naive matmul, gradients, shape inference.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("FullyConnected forward matches a naive matmul", "[ops][fc]") {
  for (bool flatten : {true, false}) {
    NDArray x = RandomArray(TShape({3, 2, 4}), 1), w = RandomArray(TShape({5, flatten ? 8 : 4}), 2),
            b = RandomArray(TShape({5}), 3);
    NDArray y = RunForward("FullyConnected", {{"num_hidden", "5"}, {"flatten", flatten ? "True" : "False"}},
                           {{"data", x}, {"weight", w}, {"bias", b}});
    int64_t rows = flatten ? 3 : 6, k = flatten ? 8 : 4;
    NDArray want(flatten ? TShape({3, 5}) : TShape({3, 2, 5}));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < 5; ++j) {
        double s = b.GetFlat(j);
        for (int64_t i = 0; i < k; ++i) s += x.GetFlat(r * k + i) * w.GetFlat(j * k + i);
        want.SetFlat(r * 5 + j, static_cast<float>(s));
      }
    RequireClose(y, want);
  }
}

TEST_CASE("FullyConnected gradients", "[ops][fc][grad]") {
  CheckGradients("FullyConnected", {{"num_hidden", "3"}},
                 {{"data", RandomArray(TShape({2, 4}), 4)}, {"weight", RandomArray(TShape({3, 4}), 5)},
                  {"bias", RandomArray(TShape({3}), 6)}});
  CheckGradients("FullyConnected", {{"num_hidden", "2"}, {"no_bias", "True"}, {"flatten", "False"}},
                 {{"data", RandomArray(TShape({2, 3, 4}), 7)}, {"weight", RandomArray(TShape({2, 4}), 8)}});
}

TEST_CASE("FullyConnected infers weight and bias shapes", "[ops][fc][shape]") {
  Symbol fc = Symbol::Create("FullyConnected", "fc1", {{"num_hidden", "10"}},
                             {{"data", Symbol::Variable("data")}});
  auto r = InferShape(fc, {{"data", TShape({7, 3, 5})}});
  CHECK(r.arg_shapes == std::vector<TShape>{TShape({7, 3, 5}), TShape({10, 15}), TShape({10})});
  CHECK(r.out_shapes[0] == TShape({7, 10}));
  CHECK(fc.ListArguments() == std::vector<std::string>{"data", "fc1_weight", "fc1_bias"});
}


TEST_CASE("FullyConnected takes an unknown batch size from its output", "[ops][fc][shape]") {
  // fc(a) + c with a = (?, 10) and c = (5, ?): the sum fixes the output to (5, 21), and the
  // batch flows back into a.
  Symbol a = Symbol::Variable("a");
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "21"}}, {{"data", a}});
  Symbol sum = Symbol::Create("elemwise_add", "sum", {}, {{"lhs", fc}, {"rhs", Symbol::Variable("c")}});
  auto r = InferShape(sum, {{"a", TShape({-1, 10})}, {"c", TShape({5, -1})}});
  CHECK(r.arg_shapes[0] == TShape({5, 10}));
  CHECK(r.arg_shapes.back() == TShape({5, 21}));
  // Without flattening every leading dim flows back.
  Symbol fc3 = Symbol::Create("FullyConnected", "fc3", {{"num_hidden", "4"}, {"flatten", "false"}}, {{"data", a}});
  Symbol sum3 = Symbol::Create("elemwise_add", "sum3", {}, {{"lhs", fc3}, {"rhs", Symbol::Variable("c")}});
  auto r3 = InferShape(sum3, {{"a", TShape({-1, -1, 6})}, {"c", TShape({2, 3, 4})}});
  CHECK(r3.arg_shapes[0] == TShape({2, 3, 6}));
}
