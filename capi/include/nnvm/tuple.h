// nnvm::Tuple and nnvm::TShape as MXNet's generated op.h uses them: a list of values printed
// "(a,b,c)", the format operator parameters are parsed from.
#ifndef NNVM_TUPLE_H_
#define NNVM_TUPLE_H_

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace nnvm {

template <typename T>
class Tuple {
 public:
  Tuple() = default;
  Tuple(std::initializer_list<T> values) : values_(values) {}
  explicit Tuple(const std::vector<T>& values) : values_(values) {}
  template <typename It>
  Tuple(It begin, It end) : values_(begin, end) {}
  uint32_t ndim() const { return static_cast<uint32_t>(values_.size()); }
  const T& operator[](size_t i) const { return values_[i]; }
  T& operator[](size_t i) { return values_[i]; }
  const T* begin() const { return values_.data(); }
  const T* end() const { return values_.data() + values_.size(); }
  bool operator==(const Tuple& o) const { return values_ == o.values_; }
  bool operator!=(const Tuple& o) const { return values_ != o.values_; }

 private:
  std::vector<T> values_;
};

template <typename T>
std::ostream& operator<<(std::ostream& os, const Tuple<T>& t) {
  os << '(';
  for (uint32_t i = 0; i < t.ndim(); ++i) os << (i ? "," : "") << t[i];
  if (t.ndim() == 1) os << ',';
  return os << ')';
}

typedef int64_t dim_t;
class TShape : public Tuple<dim_t> {
 public:
  TShape() = default;
  TShape(std::initializer_list<dim_t> values) : Tuple<dim_t>(values) {}
  template <typename It>
  TShape(It begin, It end) : Tuple<dim_t>(begin, end) {}
  dim_t Size() const {
    dim_t n = 1;
    for (uint32_t i = 0; i < ndim(); ++i) n *= (*this)[i];
    return n;
  }
};

}  // namespace nnvm

#endif  // NNVM_TUPLE_H_
