// MXNet's seeding as its Python frontend relies on it: an executor's random operators draw from
// the process's sequence, so MXRandomSeed restarts them (the same draws after the same seed) and
// each forward draws anew.
#include <catch2/catch.hpp>
#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include <string>
#include <vector>

namespace {
std::vector<float> ForwardValues(ExecutorHandle exec) {
  REQUIRE(MXExecutorForward(exec, 1) == 0);
  uint32_t n = 0;
  NDArrayHandle* outs = nullptr;
  REQUIRE(MXExecutorOutputs(exec, &n, &outs) == 0);
  REQUIRE(n == 1);
  std::vector<float> v(64);
  REQUIRE(MXNDArraySyncCopyToCPU(outs[0], v.data(), v.size()) == 0);
  REQUIRE(MXNDArrayFree(outs[0]) == 0);
  return v;
}
}  // namespace

TEST_CASE("C API executors draw random numbers from the sequence MXRandomSeed restarts", "[capi][python][random]") {
  OpHandle op = nullptr;
  REQUIRE(NNGetOpHandle("_random_uniform", &op) == 0);
  const char* keys[] = {"shape"};
  const char* vals[] = {"(64,)"};
  SymbolHandle sym = nullptr;
  REQUIRE(MXSymbolCreateAtomicSymbol(op, 1, keys, vals, &sym) == 0);
  REQUIRE(MXSymbolCompose(sym, "u", 0, nullptr, nullptr) == 0);
  ExecutorHandle exec = nullptr;
  REQUIRE(MXExecutorBindEX(sym, 1, 0, 0, nullptr, nullptr, nullptr, 0, nullptr, nullptr, nullptr, 0, nullptr, nullptr,
                           &exec) == 0);
  REQUIRE(MXRandomSeed(11) == 0);
  const std::vector<float> first = ForwardValues(exec), second = ForwardValues(exec);
  CHECK(first != second);  // each forward draws anew
  REQUIRE(MXRandomSeed(11) == 0);
  CHECK(ForwardValues(exec) == first);  // the same seed, the same draws
  REQUIRE(MXRandomSeed(12) == 0);
  CHECK(ForwardValues(exec) != first);
  for (float x : first) {
    CHECK(x >= 0.0f);
    CHECK(x < 1.0f);
  }
  REQUIRE(MXExecutorFree(exec) == 0);
  REQUIRE(MXSymbolFree(sym) == 0);
}
