#include <symbind/core/shape_semantics.h>

#include <utility>

namespace symbind {
namespace {
thread_local bool numpy_shape = false;
}  // namespace

bool NumpyShapeSemantics() { return numpy_shape; }
bool SetNumpyShapeSemantics(bool on) { return std::exchange(numpy_shape, on); }

TShape ParamShape(const TShape& given) {
  if (numpy_shape) return given;
  if (given.ndim() <= 0) return TShape();
  TShape r = given;
  for (int d = 0; d < r.ndim(); ++d)
    if (r[d] == 0) r[d] = TShape::kUnknownDim;
  return r;
}

}  // namespace symbind
