// Shared by SequenceMask, SequenceLast and SequenceReverse: the (time, batch) layout of the data
// along `axis`, the optional sequence_length input and its validation.
#pragma once
#include <algorithm>
#include <string>
#include <vector>
#include <symbind/ops/op_util.h>


namespace symbind::sequence_detail {

// The data viewed as (outer, T, middle, inner) with time on `axis` (0 or 1) and batch on the
// other of the first two axes: element (t, n, i) sits at Offset(t, n) + i.
struct SequenceLayout {
  int64_t T, N, inner;
  bool time_first;
  SequenceLayout(const TShape& s, int axis)
      : T(s[axis]), N(s[1 - axis]), inner(s.ProdDims(2, s.ndim())), time_first(axis == 0) {}
  int64_t Offset(int64_t t, int64_t n) const { return (time_first ? t * N + n : n * T + t) * inner; }
};

// The use_sequence_length field the three ops declare alike (MXNet's words).
template <typename P>
void DeclareUseSequenceLength(ParamDeclarer<P>& d) {
  d.field("use_sequence_length", &P::use_sequence_length).set_default(false)
      .describe("If set to true, this layer takes in an extra input parameter `sequence_length` "
                "to specify variable length sequence");
}

inline std::vector<std::string> SequenceArguments(bool use_sequence_length) {
  if (use_sequence_length) return {"data", "sequence_length"};
  return {"data"};
}

// The data needs rank >= `min_rank`; time on axis 0 or 1; sequence_length is (batch,).
inline void CheckSequenceShape(const char* op, const std::vector<TShape>& in, int axis, int min_rank,
                               bool use_sequence_length, std::vector<TShape>* slots) {
  const TShape& d = in[0];
  if (d.ndim() < min_rank)
    throw ShapeError(StrCat(op, ": the data must have rank ", min_rank, " or more, got ", d));
  if (axis != 0 && axis != 1)
    throw ShapeError(StrCat(op, ": axis must be 0 or 1 (the time axis), got ", axis));
  if (use_sequence_length) ShapeAssignCheck(slots, 1, TShape({d[1 - axis]}));
}

// Data and output share one type; sequence_length takes the data's unless it has its own (any).
inline void InferSequenceType(bool use_sequence_length, std::vector<int>* in, std::vector<int>* out) {
  TypeAssignCheck(in, 0, (*out)[0]);
  TypeAssignCheck(out, 0, (*in)[0]);
  if (use_sequence_length && (*in)[1] < 0) TypeAssignCheck(in, 1, (*in)[0]);
}

// Per batch entry, the valid length: sequence_length (truncated to integers, as MXNet casts)
// or T. Lengths outside [min_length, T] are an error naming the node and the entry, unless
// `clamp` (SequenceMask, where MXNet only compares steps with the length) maps them into [0, T].
inline std::vector<int64_t> SequenceLengths(const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                            bool use_sequence_length, const SequenceLayout& l,
                                            int64_t min_length, bool clamp = false) {
  std::vector<int64_t> len(static_cast<size_t>(l.N), l.T);
  if (!use_sequence_length) return len;
  const std::vector<double> v = ValuesAsDouble(in[1]);
  for (int64_t n = 0; n < l.N; ++n) {
    double x = v[static_cast<size_t>(n)];
    if (clamp && x == x) x = std::min(std::max(x, 0.0), static_cast<double>(l.T));
    if (!(x >= static_cast<double>(min_length) && x < static_cast<double>(l.T) + 1))
      throw Error(StrCat(InOperator(attrs), ": sequence_length[", n, "] = ", x, " is out of range (expected ",
                         min_length, " to ", l.T, ", the length of the time axis)"));
    len[static_cast<size_t>(n)] = static_cast<int64_t>(x);
  }
  return len;
}

}  // namespace symbind::sequence_detail
