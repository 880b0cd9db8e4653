#pragma once
// How a shape given as an operator parameter (`_zeros(shape=...)`, `_full`, `_ones`) reads.
// MXNet 1.x's legacy reading, symbind's default, takes a 0 dim or rank 0 as "unknown, from
// the consumer"; NumPy semantics (MXNet's MXSetIsNumpyShape, Python's mx.np_shape()) take
// them as sizes: rank 0 is a scalar, a 0 dim is empty.
//
//   bool was = SetNumpyShapeSemantics(true);  // this thread only
//   ... Invoke("_ones", {}, {{"shape", "(0,3)"}}) gives a (0,3) array ...
//   SetNumpyShapeSemantics(was);
#include <symbind/core/tshape.h>

namespace symbind {

// Per thread: the C API sets it for the calls its frontend makes on that thread.
bool NumpyShapeSemantics();
// Returns the previous setting.
bool SetNumpyShapeSemantics(bool on);

// A parameter shape as the current semantics read it (legacy: 0 dims unknown, rank 0 unknown).
TShape ParamShape(const TShape& given);

}  // namespace symbind
