// The layers of docs/architecture.md, checked on the sources: a module includes only itself and
// the modules below it, and the C API never includes the mxnet-cpp layer built on it.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

namespace fs = std::filesystem;

// Each module and what it may include besides itself.
const std::map<std::string, std::set<std::string>>& Below() {
  static const std::map<std::string, std::set<std::string>> below = {
      {"core", {}},
      {"ops", {"core"}},
      {"executor", {"core", "ops"}},
      {"io", {"core", "ops"}},
      {"predict", {"core", "ops", "executor", "io"}},
      {"train", {"core", "ops", "executor", "io"}},
      {"vision", {"core", "ops", "executor", "io", "predict", "train"}},
      {"capi", {"core", "ops", "executor", "io", "predict", "train", "vision"}},
      {"compat", {"core", "ops", "executor", "io", "predict", "train", "vision"}},
  };
  return below;
}

// Lines of `path` that break the rule, as "file:line: text".
std::vector<std::string> Violations(const std::string& module, const fs::path& path) {
  static const std::regex symbind_include(R"(^\s*#\s*include\s*<symbind/([a-z_]+)/)");
  static const std::regex compat_include(R"(^\s*#\s*include\s*[<"](compat_internal\.h|mxnet-cpp/))");
  const std::set<std::string>& allowed = Below().at(module);
  std::vector<std::string> found;
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::smatch m;
    const bool upward = std::regex_search(line, m, symbind_include) && m[1] != module &&
                        Below().count(m[1]) && !allowed.count(m[1]);
    const bool capi_on_compat = module == "capi" && std::regex_search(line, compat_include);
    if (upward || capi_on_compat) found.push_back(path.string() + ":" + std::to_string(number) + ": " + line);
  }
  return found;
}

}  // namespace

TEST_CASE("Layering: every module includes only the modules below it", "[layering]") {
  std::vector<std::string> violations;
  size_t files = 0;
  for (const auto& [module, below] : Below()) {
    const fs::path dir = fs::path(SYMBIND_SOURCE_DIR) / module;
    REQUIRE(fs::is_directory(dir));
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      ++files;
      for (std::string& v : Violations(module, entry.path())) violations.push_back(std::move(v));
    }
  }
  CHECK(files > 300);  // the walk found the sources
  INFO("includes against docs/architecture.md's layers:\n" << [&] {
    std::string all;
    for (const std::string& v : violations) all += v + "\n";
    return all;
  }());
  CHECK(violations.empty());
}
