#include "mxnet-cpp/base.h"

#include <stdexcept>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

Context::Context(const DeviceType& type, int id) try : type_(type), id_(id) {} SYMBIND_CPP_RECORD_ERRORS

namespace compat {

Shape ToShape(const symbind::TShape& s) {
  std::vector<index_t> dims;
  if (!s.ndim_known()) return Shape();
  for (int i = 0; i < s.ndim(); ++i) dims.push_back(static_cast<index_t>(s[i] < 0 ? 0 : s[i]));
  return Shape(dims);
}

symbind::TShape ToTShape(const Shape& s) {
  return symbind::TShape(std::vector<int64_t>(s.dims().begin(), s.dims().end()));
}

}  // namespace compat

std::ostream& operator<<(std::ostream& os, const Shape& s) try {
  os << '(';
  // Dims above INT_MAX print as the negative ints they came from (Reshape's -1, -2, ...).
  for (size_t i = 0; i < s.ndim(); ++i) os << (i ? "," : "") << static_cast<int>(s[i]);
  if (s.ndim() == 1) os << ',';
  return os << ')';
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
