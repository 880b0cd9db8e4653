// Replays the committed fuzzing regression corpus (fuzz/regression/<target>/) through the
// fuzz targets' own code (fuzz/fuzz_targets.h), so that every input that once crashed a
// fuzzer, or broke one of its round-trip invariants, stays fixed in every normal test run
// (and under ASan/UBSan in the sanitizer build).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "../fuzz/fuzz_targets.h"

namespace {
namespace fs = std::filesystem;

using Target = std::function<void(const uint8_t*, size_t)>;

const std::map<std::string, Target>& Targets() {
  static const std::map<std::string, Target> targets{
      {"ndarray_file", symbind::fuzz::NDArrayFileTarget},
      {"symbol_json", symbind::fuzz::SymbolJSONTarget},
      {"param", symbind::fuzz::ParamTarget},
      {"model_file", symbind::fuzz::ModelFileTarget},
  };
  return targets;
}

std::string ReadBytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("fuzz regression inputs run cleanly through their targets", "[fuzz][io]") {
  const fs::path root = fs::path(SYMBIND_SOURCE_DIR) / "fuzz" / "regression";
  REQUIRE(fs::is_directory(root));
  size_t replayed = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string name = dir.path().filename().string();
    INFO("fuzz/regression/" << name);
    // Every directory names a target (a misnamed one would silently replay nothing).
    REQUIRE(Targets().count(name) == 1);
    for (const auto& file : fs::directory_iterator(dir.path())) {
      INFO("input " << file.path().filename().string());
      const std::string bytes = ReadBytes(file.path());
      CHECK_NOTHROW(Targets().at(name)(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      ++replayed;
    }
  }
  CHECK(replayed > 0);
}

TEST_CASE("fuzz targets report a broken invariant as an exception", "[fuzz]") {
  // The replay above only means something if a broken round trip surfaces: Require throws.
  CHECK_THROWS_AS(symbind::fuzz::Require(false, "x"), symbind::fuzz::FuzzInvariantBroken);
  CHECK_NOTHROW(symbind::fuzz::Require(true, "x"));
}
