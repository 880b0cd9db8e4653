// Docs generated from code (docs/ops.md, docs/errors.md) are committed; a test compares the
// committed file with what the code generates today, so the docs cannot drift.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace symbind::test {

// Checks SYMBIND_SOURCE_DIR/<relative_path> equals `generated`. With SYMBIND_UPDATE_DOCS set,
// rewrites the file first. `tag` is the Catch2 tag that regenerates it.
inline void CheckGeneratedDoc(const std::string& relative_path, const std::string& generated,
                              const std::string& tag) {
  const std::string path = std::string(SYMBIND_SOURCE_DIR) + "/" + relative_path;
  if (std::getenv("SYMBIND_UPDATE_DOCS")) {
    std::ofstream(path, std::ios::binary) << generated;
    WARN("rewrote " << path);
  }
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream committed;
  committed << f.rdbuf();
  INFO("regenerate with: SYMBIND_UPDATE_DOCS=1 ./build/tests/symbind_tests \"" << tag << "\"");
  CHECK(committed.str() == generated);
}

}  // namespace symbind::test
