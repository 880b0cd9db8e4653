// _contrib_BilinearResize2D and _contrib_AdaptiveAvgPooling2D against PyTorch's
// interpolate(mode='bilinear') and adaptive_avg_pool2d: outputs and input gradients from
// tests/goldens/resize (scripts/make_resize_goldens.py).
#include <symbind/io/npy.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kDir = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/resize/";

void CheckAgainstTorch(const std::string& stem, const std::string& op, const KwArgs& params) {
  INFO(stem);
  NDArray x = LoadNpy(kDir + "input.npy");
  auto exec = BindSingleOp(op, params, {{"data", x}});
  exec->Forward(true);
  RequireClose(exec->outputs()[0], LoadNpy(kDir + stem + "_out.npy"), 1e-5f, 1e-4f, "output");
  exec->Backward({LoadNpy(kDir + stem + "_head.npy")});
  RequireClose(exec->grad_arrays()[0], LoadNpy(kDir + stem + "_grad.npy"), 1e-5f, 1e-4f, "gradient");
}
}  // namespace

TEST_CASE("BilinearResize2D matches PyTorch", "[ops][BilinearResize2D][goldens]") {
  struct Case {
    int h, w;
    bool align;
  };
  for (const Case& c : {Case{11, 9, true}, Case{11, 9, false}, Case{3, 2, true}, Case{3, 2, false},
                        Case{1, 4, true}, Case{14, 3, false}}) {
    std::string stem = "bilinear_" + std::to_string(c.h) + "x" + std::to_string(c.w) + (c.align ? "_align" : "_noalign");
    CheckAgainstTorch(stem, "_contrib_BilinearResize2D",
                      {{"height", std::to_string(c.h)}, {"width", std::to_string(c.w)},
                       {"align_corners", c.align ? "True" : "False"}});
  }
}

TEST_CASE("AdaptiveAvgPooling2D matches PyTorch", "[ops][AdaptiveAvgPooling2D][goldens]") {
  for (const char* size : {"4x2", "3x3", "10x8"}) {
    std::string s(size);
    std::string tuple = "(" + s.substr(0, s.find('x')) + "," + s.substr(s.find('x') + 1) + ")";
    CheckAgainstTorch(std::string("adaptive_") + size, "_contrib_AdaptiveAvgPooling2D", {{"output_size", tuple}});
  }
}
