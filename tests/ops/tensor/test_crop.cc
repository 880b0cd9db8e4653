// Crop: forward with h_w, crop_like and center_crop, gradients, the fcn32s configuration.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/symbol_json.h>
#include "shared_dir.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Crop forward with h_w, crop_like and center_crop", "[ops][Crop]") {
  NDArray x = RandomArray(TShape({2, 2, 6, 7}), 11);
  struct Case {
    KwArgs params;
    bool like;
    int64_t oy, ox;
  };
  std::vector<Case> cases = {
      {{{"num_args", "1"}, {"h_w", "(3, 4)"}, {"offset", "(2, 1)"}}, false, 2, 1},
      {{{"num_args", "1"}, {"h_w", "(3, 4)"}, {"center_crop", "True"}}, false, 1, 1},  // floor(3/2)
      {{{"num_args", "2"}, {"offset", "(1, 3)"}}, true, 1, 3},
      {{{"num_args", "2"}, {"center_crop", "True"}}, true, 1, 1}};
  NDArray like = RandomArray(TShape({1, 5, 3, 4}), 12);
  for (auto& c : cases) {
    std::map<std::string, NDArray> in = {{"arg0", x}};
    if (c.like) in["arg1"] = like;
    NDArray y = RunForward("Crop", c.params, in);
    REQUIRE(y.shape() == TShape({2, 2, 3, 4}));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t ch = 0; ch < 2; ++ch)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 4; ++j) CHECK(At4(y, n, ch, i, j) == At4(x, n, ch, i + c.oy, j + c.ox));
  }
}

TEST_CASE("Crop gradients: zero padding for data, zero for crop_like", "[ops][Crop][grad]") {
  CheckGradients("Crop", {{"num_args", "1"}, {"h_w", "(2, 3)"}, {"offset", "(1, 2)"}},
                 {{"arg0", RandomArray(TShape({1, 2, 4, 5}), 13)}});
  CheckGradients("Crop", {{"num_args", "2"}, {"center_crop", "True"}},
                 {{"arg0", RandomArray(TShape({1, 2, 5, 5}), 14)}, {"arg1", RandomArray(TShape({1, 1, 2, 3}), 15)}});
}

TEST_CASE("Crop as configured in fcn32s", "[ops][Crop][shape]") {
  KwArgs fcn = {{"num_args", "2"}, {"offset", "(19, 19)"}};
  Symbol crop = Symbol::Create("Crop", "upscore", fcn, {},
                               {Symbol::Variable("bigscore"), Symbol::Variable("data")});
  CHECK(crop.ListArguments() == std::vector<std::string>{"bigscore", "data"});
  auto r = InferShape(crop, {{"bigscore", TShape({1, 21, 576, 576})}, {"data", TShape({1, 3, 500, 500})}});
  CHECK(r.out_shapes[0] == TShape({1, 21, 500, 500}));
  // Same parameters on a small case: forward and gradients.
  NDArray big = RandomArray(TShape({1, 2, 24, 23}), 16), data = RandomArray(TShape({1, 3, 4, 3}), 17);
  NDArray y = RunForward("Crop", fcn, {{"arg0", big}, {"arg1", data}});
  REQUIRE(y.shape() == TShape({1, 2, 4, 3}));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j) CHECK(At4(y, 0, c, i, j) == At4(big, 0, c, i + 19, j + 19));
  GradCheckOptions opt;
  opt.no_grad = {"arg1"};
  CheckGradients("Crop", fcn, {{"arg0", RandomArray(TShape({1, 1, 24, 23}), 18)}, {"arg1", data}}, opt);
  std::string err = ErrorOf([&] {
    InferShape(crop, {{"bigscore", TShape({1, 21, 510, 576})}, {"data", TShape({1, 3, 500, 500})}});
  });
  CHECK_THAT(err, Catch::Contains("offset (19,19) does not fit"));
}

TEST_CASE("Crop node of the real fcn32s graph", "[ops][Crop][shape][shared]") {
  Symbol net = LoadSymbolFile(symbind_test::SharedDir() + "/models/symbols/fcn32s-symbol.json");
  Symbol internals = net.GetInternals();
  Symbol bigscore = internals["bigscore_output"], upscore = internals["upscore_output"];
  const Node& crop = *upscore.outputs()[0].node;
  CHECK(crop.attrs.op->name == "Crop");
  CHECK(crop.attrs.dict == KwArgs{{"num_args", "2"}, {"offset", "(19, 19)"}});
  auto shapes = InferShape(Symbol::Group({bigscore, upscore}), {{"data", TShape({1, 3, 500, 500})}});
  // bigscore (Deconvolution's output) leaves room for the (19, 19) offset.
  CHECK(shapes.out_shapes[0][2] >= 500 + 19);
  CHECK(shapes.out_shapes[0][3] >= 500 + 19);
  CHECK(shapes.out_shapes[1] == TShape({1, 21, 500, 500}));
}

// ------------------------------------------------------------------------------------------
// Pad

