// Shape and size arithmetic that refuses to wrap. Every shape inference and size computation
// that multiplies or adds user-controlled dims or parameters goes through these, so a huge
// dilate, stride, pad or reps is a ShapeError naming the parameter instead of a wrapped,
// plausible-looking shape (graph inference prefixes the node's name and op).
#pragma once
#include <cstdint>

#include "error.h"

namespace symbind {

// a * b; `what...` (streamed) names the quantity being computed for the message.
template <typename... What>
int64_t CheckedMul(int64_t a, int64_t b, const What&... what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw ShapeError(StrCat(what..., ": ", a, " * ", b, " overflows int64"));
  return r;
}

// a + b; as CheckedMul.
template <typename... What>
int64_t CheckedAdd(int64_t a, int64_t b, const What&... what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw ShapeError(StrCat(what..., ": ", a, " + ", b, " overflows int64"));
  return r;
}

// count * elem_size as a byte count; as CheckedMul (sizes of views, files, buffers).
template <typename... What>
size_t CheckedBytes(int64_t count, size_t elem_size, const What&... what) {
  return static_cast<size_t>(CheckedMul(count, static_cast<int64_t>(elem_size), what...));
}

}  // namespace symbind
