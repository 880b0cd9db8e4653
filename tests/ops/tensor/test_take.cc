// Embedding and take: index modes, gradients to the weight only.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Embedding forward clips indices, gradient goes to weight only", "[ops][Embedding][grad]") {
  NDArray w = RandomArray(TShape({5, 3}), 24);
  // Float indices are truncated, then clipped to [0, input_dim-1] as MXNet does.
  NDArray idx(TShape({2, 3}), {0.0f, 4.0f, 2.7f, -1.0f, 7.0f, 1.0f});
  std::vector<int64_t> rows = {0, 4, 2, 0, 4, 1};
  KwArgs p = {{"input_dim", "5"}, {"output_dim", "3"}};
  NDArray y = RunForward("Embedding", p, {{"data", idx}, {"weight", w}});
  REQUIRE(y.shape() == TShape({2, 3, 3}));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 3; ++j) CHECK(y.GetFlat(i * 3 + j) == w.GetFlat(rows[i] * 3 + j));
  GradCheckOptions opt;
  opt.no_grad = {"data"};
  CheckGradients("Embedding", p, {{"data", idx}, {"weight", w}}, opt);  // repeated rows accumulate
  // With a gradient requested for data, it is zero.
  auto exec = BindSingleOp("Embedding", p, {{"data", idx}, {"weight", w}});
  exec->Forward(true);
  exec->Backward({RandomArray(TShape({2, 3, 3}), 25)});
  for (int64_t i = 0; i < 6; ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 0.0f);
  // Shapes, types and parameters.
  Symbol e = Symbol::Create("Embedding", "emb", {{"input_dim", "10"}, {"output_dim", "4"}, {"sparse_grad", "True"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(e.ListArguments() == std::vector<std::string>{"data", "emb_weight"});
  auto r = InferShape(e, {{"data", TShape({7})}});
  CHECK(r.arg_shapes[1] == TShape({10, 4}));
  CHECK(r.out_shapes[0] == TShape({7, 4}));
  Symbol e16 = Symbol::Create("Embedding", "e16", {{"input_dim", "10"}, {"output_dim", "4"}, {"dtype", "float16"}},
                              {{"data", Symbol::Variable("data")}});
  auto t = InferType(e16, {{"data", DType::kInt32}});
  CHECK(t.arg_types[1] == DType::kFloat16);
  CHECK(t.out_types[0] == DType::kFloat16);
  CHECK_THROWS_AS(Symbol::Create("Embedding", "bad", {{"input_dim", "0"}, {"output_dim", "4"}}, {}), ParamError);
}

TEST_CASE("take along axes with clip, wrap and raise", "[ops][take][grad]") {
  NDArray a = RandomArray(TShape({4, 3, 2}), 26);
  NDArray idx(TShape({2, 2}), {1.0f, -1.0f, 5.0f, 1.0f});
  for (std::string mode : {"clip", "wrap"}) {
    for (int axis : {0, 1, -1}) {
      INFO(mode << " axis " << axis);
      int ax = axis < 0 ? axis + 3 : axis;
      int64_t n = a.shape()[ax];
      KwArgs p = {{"axis", std::to_string(axis)}, {"mode", mode}};
      NDArray y = RunForward("take", p, {{"a", a}, {"indices", idx}});
      std::vector<int64_t> os;
      for (int d = 0; d < ax; ++d) os.push_back(a.shape()[d]);
      os.push_back(2);
      os.push_back(2);
      for (int d = ax + 1; d < 3; ++d) os.push_back(a.shape()[d]);
      REQUIRE(y.shape() == TShape(os));
      for (int64_t k = 0; k < y.Size(); ++k) {
        auto oi = Unravel(k, y.shape());
        int64_t raw = static_cast<int64_t>(idx.GetFlat(oi[ax] * 2 + oi[ax + 1]));
        int64_t j = mode == "clip" ? std::min<int64_t>(std::max<int64_t>(raw, 0), n - 1) : ((raw % n) + n) % n;
        std::vector<int64_t> ai;
        for (int d = 0; d < ax; ++d) ai.push_back(oi[d]);
        ai.push_back(j);
        for (int d = ax + 2; d < static_cast<int>(oi.size()); ++d) ai.push_back(oi[d]);
        CHECK(y.GetFlat(k) == a.GetFlat(Ravel(ai, a.shape())));
      }
      GradCheckOptions opt;
      opt.no_grad = {"indices"};
      CheckGradients("take", p, {{"a", a}, {"indices", idx}}, opt);
    }
  }
  NDArray ok(TShape({2}), {0.0f, 3.0f});
  CHECK(RunForward("take", {{"mode", "raise"}}, {{"a", a}, {"indices", ok}}).shape() == TShape({2, 3, 2}));
  CHECK_THAT(ErrorOf([&] { RunForward("take", {{"mode", "raise"}}, {{"a", a}, {"indices", idx}}); }),
             Catch::Contains("out of bounds"));
  Symbol t = Symbol::Create("take", "t", {{"axis", "3"}}, {});
  CHECK(t.ListArguments() == std::vector<std::string>{"t_a", "t_indices"});
  CHECK_THAT(ErrorOf([&] { InferShape(t, {{"t_a", TShape({4, 3, 2})}, {"t_indices", TShape({5})}}); }),
             Catch::Contains("axis 3 is out of range"));
}
