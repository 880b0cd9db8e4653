// The README's C++ snippets, compiled as written and run: each ```cpp block of README.md is
// extracted at configure time (tests/CMakeLists.txt) and included inside a function here, whose
// checks then read the snippet's variables. The snippets' own `#include <symbind/symbind.h>`
// is a no-op there (already included), and `using namespace` is allowed in a function.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include <symbind/symbind.h>

#include "snippet_count.h"
#include "test_io_util.h"

namespace {

// Runs the snippets in a directory of their own, where models/ and docs/ are the source tree's
// (the README's relative paths) and the files they write stay out of the source tree.
class SnippetDirectory {
 public:
  SnippetDirectory() : previous_(std::filesystem::current_path()) {
    const std::filesystem::path dir = symbind_test::TempPath("readme");
    std::filesystem::create_directories(dir);
    for (const char* sub : {"models", "docs"})
      if (!std::filesystem::exists(dir / sub))
        std::filesystem::create_directory_symlink(std::filesystem::path(SYMBIND_SOURCE_DIR) / sub, dir / sub);
    std::filesystem::current_path(dir);
  }
  ~SnippetDirectory() { std::filesystem::current_path(previous_); }
  SnippetDirectory(const SnippetDirectory&) = delete;
  SnippetDirectory& operator=(const SnippetDirectory&) = delete;

 private:
  std::filesystem::path previous_;
};

}  // namespace

TEST_CASE("README: every C++ snippet is compiled and run by this file", "[readme][docs]") {
  // A new snippet in README.md needs its own test case below.
  CHECK(SYMBIND_README_SNIPPET_COUNT == 4);
}

TEST_CASE("README: building, binding and training a network by hand", "[readme][docs]") {
#include "snippet_1.inc"
  CHECK(shapes.out_shapes.at(0) == symbind::TShape({32, 10}));
  const std::map<std::string, symbind::NDArray> grads = exec->grad_dict();
  CHECK(grads.at("fc1_weight").shape() == symbind::TShape({128, 784}));
  const symbind::NDArray& fc2_grad = grads.at("fc2_weight");
  bool nonzero = false;
  for (int64_t i = 0; i < fc2_grad.Size(); ++i) nonzero = nonzero || fc2_grad.GetFlat(i) != 0.0f;
  CHECK(nonzero);  // the backward pass ran
}

TEST_CASE("README: a pretrained model through Predictor", "[readme][docs]") {
  SnippetDirectory in_snippet_directory;
  using namespace symbind;  // as the README's first snippet declares for the rest
#include "snippet_2.inc"
  REQUIRE(prob.shape() == symbind::TShape({1, 10}));
  float sum = 0;
  for (int64_t i = 0; i < prob.Size(); ++i) sum += prob.GetFlat(i);
  CHECK(sum == Approx(1.0f));  // softmax probabilities
}

TEST_CASE("README: an image decoded, resized and normalised into a network input", "[readme][docs][image]") {
  SnippetDirectory in_snippet_directory;
  using namespace symbind;  // as the README's first snippet declares for the rest
#include "snippet_3.inc"
  REQUIRE(input.shape() == symbind::TShape({1, 3, 224, 224}));
  // Channel 0 of the top-left pixel is (red - 123.68) * 0.017.
  CHECK(input.At({0, 0, 0, 0}) == Approx((resized.at(0, 0)[0] - 123.68f) * 0.017f));
}

TEST_CASE("README: a one-file .symbind model saved, mapped and bound", "[readme][docs][model_file]") {
  SnippetDirectory in_snippet_directory;
  using namespace symbind;  // as the README's first snippet declares for the rest
#include "snippet_4.inc"
  CHECK(std::filesystem::exists("lenet.symbind"));
  p.Forward();
  CHECK(p.Output(0).shape() == symbind::TShape({1, 10}));
}
