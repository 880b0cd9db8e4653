#pragma once
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace symbind {

// A tensor shape with int64 dims. Both the rank and single dims may be unknown:
// an unknown rank is ndim() == -1, an unknown dim is -1 (MXNet's NumPy semantics).
// A known rank of 0 is a scalar with one element.
class TShape {
 public:
  static constexpr int64_t kUnknownDim = -1;

  TShape() = default;  // unknown rank
  TShape(std::initializer_list<int64_t> dims) : known_rank_(true), dims_(dims) {}
  explicit TShape(std::vector<int64_t> dims) : known_rank_(true), dims_(std::move(dims)) {}
  // A shape of `ndim` dims all equal to `value` (use kUnknownDim for "rank known, dims not").
  static TShape Filled(int ndim, int64_t value);
  static TShape UnknownRank() { return TShape(); }

  int ndim() const { return known_rank_ ? static_cast<int>(dims_.size()) : -1; }
  bool ndim_known() const { return known_rank_; }
  // Rank and every dim known.
  bool is_known() const;
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t back() const { return dims_.back(); }

  // Number of elements; throws symbind::Error when not fully known or on overflow.
  int64_t Size() const;
  // Product of dims in [begin, end).
  int64_t ProdDims(int begin, int end) const;

  // "(2,3)" ; unknown dims (-1) print as "?" ; unknown rank prints "?" ; scalar "()".
  // Other negative dims are invalid, not unknown: they print as their value.
  std::string ToString() const;
  // "(0,-1)": every dim as its number. For parameter tuples, where negative values are what
  // the user wrote (Reshape's special values 0, -1, -2, -3, -4), not unknown dims.
  std::string ToStringAsWritten() const;
  // Parses "(2,3)", "[2, 3]", "2,3", "(2,)", "()" . Throws symbind::ParamError.
  static TShape Parse(const std::string& text);

  bool operator==(const TShape& o) const {
    return known_rank_ == o.known_rank_ && dims_ == o.dims_;
  }
  bool operator!=(const TShape& o) const { return !(*this == o); }

 private:
  bool known_rank_ = false;
  std::vector<int64_t> dims_;
};

std::ostream& operator<<(std::ostream& os, const TShape& s);

// Merges what two shapes know: unknown rank/dims take the other's value.
// Returns false when they disagree on a known value (then `out` is unspecified).
bool UnifyShapes(const TShape& a, const TShape& b, TShape* out);

}  // namespace symbind
