// docs/ops.md is generated from the registry; this test fails when it drifts.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <symbind/core/op_docs.h>

TEST_CASE("docs/ops.md matches the operator registry", "[docs]") {
  const std::string path = std::string(SYMBIND_SOURCE_DIR) + "/docs/ops.md";
  const std::string generated = symbind::OperatorsMarkdown();
  if (std::getenv("SYMBIND_UPDATE_DOCS")) {
    std::ofstream(path, std::ios::binary) << generated;
    WARN("rewrote " << path);
  }
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream committed;
  committed << f.rdbuf();
  INFO("regenerate with: SYMBIND_UPDATE_DOCS=1 ./build/tests/symbind_tests \"[docs]\"");
  CHECK(committed.str() == generated);
}
