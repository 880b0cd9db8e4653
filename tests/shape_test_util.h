// Helpers shared by the shape and spatial op tests (tests/ops/tensor/, tests/ops/nn/test_upsampling.cc).
#pragma once
#include <functional>
#include <string>

#include "op_test_util.h"

namespace symbind::test {

// The message of the symbind::Error `f` throws, or "" when it throws none.
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Element (n, c, y, x) of an NCHW array.
inline float At4(const NDArray& a, int64_t n, int64_t c, int64_t y, int64_t x) {
  const TShape& s = a.shape();
  return a.GetFlat(((n * s[1] + c) * s[2] + y) * s[3] + x);
}

// Shape inference of a single-op symbol over input "data".
inline TShape OutShape(const std::string& op, const KwArgs& params, const TShape& data) {
  Symbol s = Symbol::Create(op, "op", params, {{"data", Symbol::Variable("data")}});
  return InferShape(s, {{"data", data}}).out_shapes[0];
}

// Multi-index of flat `i` in `s`, and back.
inline std::vector<int64_t> Unravel(int64_t i, const TShape& s) {
  std::vector<int64_t> idx(static_cast<size_t>(s.ndim()));
  for (int d = s.ndim() - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}
inline int64_t Ravel(const std::vector<int64_t>& idx, const TShape& s) {
  int64_t f = 0;
  for (int d = 0; d < s.ndim(); ++d) f = f * s[d] + idx[d];
  return f;
}

}  // namespace symbind::test
