// Helpers for the quantized-operator tests: ranges, random quantized tensors, and one call of an
// op returning all its outputs. References in the tests are written from the semantics in
// docs/quantization.md, element by element.
#pragma once
#include <cmath>
#include <random>

#include "op_test_util.h"

namespace symbind {
namespace test {

// A range input: float32 of shape (1,).
inline NDArray Range(float v) { return NDArray(TShape({1}), std::vector<float>{v}); }

// Integers uniform in [lo, hi] as an array of `type`.
inline NDArray RandomLevels(const TShape& shape, DType type, int lo, int hi, uint64_t seed) {
  NDArray a(shape, type);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, static_cast<float>(dist(rng)));
  return a;
}

// Every output of one forward call of `op` (`int8_even_weights`: OpContext's).
inline std::vector<NDArray> RunAll(const std::string& op, const KwArgs& params,
                                   const std::map<std::string, NDArray>& inputs, bool int8_even_weights = false) {
  auto exec = BindSingleOp(op, params, inputs, {}, OpReq::kNull);
  exec->set_int8_even_weights(int8_even_weights);
  exec->Forward(false);
  std::vector<NDArray> outs;
  for (const NDArray& o : exec->outputs()) outs.push_back(o.Copy());
  return outs;
}

// round half to even, then clamp to [lo, hi] (the reference's rounding, in double).
inline double RoundClamp(double v, double lo, double hi) { return std::min(hi, std::max(lo, std::nearbyint(v))); }

}  // namespace test
}  // namespace symbind
