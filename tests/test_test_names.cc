// ctest registers every TEST_CASE by name (catch_discover_tests in tests/CMakeLists.txt). A ';'
// in a name is CMake's list separator: the name was cut there and the ctest entry ran no test at
// all while reporting success (13 cases never ran in CI that way). A '[' starts a tag in
// Catch's test spec, so the entry would not find its case either.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

TEST_CASE("Every TEST_CASE name can be run by ctest: no semicolon, no bracket", "[meta]") {
  namespace fs = std::filesystem;
  const std::regex test_case(R"re(TEST_CASE\(\s*"((?:[^"\\]|\\.)*)")re");
  int names = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(SYMBIND_SOURCE_DIR) / "tests")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    for (std::sregex_iterator it(source.begin(), source.end(), test_case), end; it != end; ++it) {
      const std::string name = (*it)[1];
      ++names;
      INFO(entry.path().string() << ": \"" << name << "\"");
      CHECK(name.find(';') == std::string::npos);
      CHECK(name.find('[') == std::string::npos);
    }
  }
  CHECK(names > 400);  // the scan found the suite
}
