// _split_v2 (mx.nd.split_v2, NumPy's split): cuts an array along an axis at the given start
// indices (output i covers [indices[i], indices[i+1]), the last one to the end of the axis), or
// into `sections` equal parts; optionally squeezing the axis (every part then has length 1).
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/ops/kernels/concat.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct SplitV2Param : Parameter<SplitV2Param> {
  TShape indices;
  int axis;
  bool squeeze_axis;
  int sections;
  static void Declare(ParamDeclarer<SplitV2Param>& d) {
    d.field("indices", &SplitV2Param::indices)
        .describe("Indices of splits. The elements should denote the boundaries of at which split is performed "
                  "along the `axis`.");
    d.field("axis", &SplitV2Param::axis).set_default(1).describe("Axis along which to split.");
    d.field("squeeze_axis", &SplitV2Param::squeeze_axis).set_default(false)
        .describe("If true, Removes the axis with length 1 from the shapes of the output arrays. **Note** that "
                  "setting `squeeze_axis` to ``true`` removes axis with length 1 only along the `axis` which it "
                  "is split. Also `squeeze_axis` can be set to ``true`` only if ``input.shape[axis] == "
                  "num_outputs``.");
    d.field("sections", &SplitV2Param::sections).set_default(0).set_range(0, Graph::kMaxNodeOutputs)
        .describe("Number of sections if equally splitted. Default to 0 which means split by indices.");
    d.check([](const SplitV2Param& p) { return p.sections > 0 || (p.indices.ndim() >= 1 &&
                                                                  static_cast<uint32_t>(p.indices.ndim()) <= Graph::kMaxNodeOutputs); },
            "_split_v2: give sections > 0, or at least one split index (and no more than a node has outputs)",
            {"indices", "sections"});
  }
  int NumOutputs() const { return sections > 0 ? sections : indices.ndim(); }
};

// [begin, end) of every output along an axis of `size` (MXNet's SplitOpShapeImpl).
std::vector<std::pair<int64_t, int64_t>> Ranges(const SplitV2Param& p, int64_t size) {
  std::vector<int64_t> starts;
  if (p.sections > 0) {
    // The first size % sections parts are one longer (MXNet's GetSplitIndices).
    const int64_t small = size / p.sections, extra = size % p.sections;
    int64_t at = 0;
    for (int i = 0; i < p.sections; ++i) {
      starts.push_back(at);
      at += small + (i < extra ? 1 : 0);
    }
  } else {
    starts = p.indices.dims();
  }
  std::vector<std::pair<int64_t, int64_t>> r;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t begin = starts[i], end = i + 1 < starts.size() ? starts[i + 1] : size;
    if (size > 0 && (begin < 0 || begin > end || end > size))
      throw ShapeError(StrCat("_split_v2: part ", i, " would cover [", begin, ", ", end, ") of an axis of size ",
                              size, " (the indices must be sorted and within the axis)"));
    r.emplace_back(begin, size > 0 ? end : begin);
  }
  return r;
}

// The parts as unsqueezed views: shape `d` with the axis cut to each range.
std::vector<NDArray> Parts(const std::vector<NDArray>& arrays, const TShape& d, int axis,
                           const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<NDArray> parts;
  for (size_t i = 0; i < arrays.size(); ++i) {
    TShape s = d;
    s[axis] = ranges[i].second - ranges[i].first;
    parts.push_back(arrays[i].Reshape(s));
  }
  return parts;
}

}  // namespace

SYMBIND_REGISTER_OP(_split_v2)
    .describe("Splits an array along a particular axis into multiple sub-arrays, at the given indices or into "
              "`sections` parts.")
    .set_params<SplitV2Param>()
    .set_numbered_outputs("output", [](const NodeAttrs& a) { return a.param<SplitV2Param>().NumOutputs(); })
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<SplitV2Param>();
      const TShape& d = (*in)[0];
      if (!d.is_known()) return;
      const int axis = NormalizeAxis(p.axis, d.ndim(), "_split_v2");
      const auto ranges = Ranges(p, d[axis]);
      for (size_t i = 0; i < ranges.size(); ++i) {
        std::vector<int64_t> o = d.dims();
        o[axis] = ranges[i].second - ranges[i].first;
        if (p.squeeze_axis) {
          if (o[axis] != 1)
            throw ShapeError(StrCat("_split_v2: squeeze_axis needs parts of length 1 along the axis; part ", i,
                                    " has length ", o[axis]));
          o.erase(o.begin() + axis);
        }
        ShapeAssignCheck(out, i, TShape(o));
      }
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<SplitV2Param>();
      const TShape& d = in[0].shape();
      const int axis = NormalizeAxis(p.axis, d.ndim(), "_split_v2");
      ConcatCopy(in[0], Parts(out, d, axis, Ranges(p, d[axis])), axis, false, req);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<SplitV2Param>();
      const TShape& d = a.inputs[0].shape();
      const int axis = NormalizeAxis(p.axis, d.ndim(), "_split_v2");
      ConcatCopy(a.in_grads[0], Parts(a.out_grads, d, axis, Ranges(p, d[axis])), axis, true, a.req);
    });

}  // namespace symbind
