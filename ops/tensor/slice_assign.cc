// _slice_assign and _slice_assign_scalar: a copy of the input with the window slice(begin, end,
// step) selects overwritten, by the array rhs or by one scalar. MXNet's NDArray.__setitem__ runs
// them with the output aliased to the input (x[1:3] = y). Any dtype: elements are copied as bytes.
#include <cstring>
#include <vector>

#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/slice_range.h>

namespace symbind {

namespace {

struct SliceAssignScalarParam : Parameter<SliceAssignScalarParam> {
  double scalar;
  OptIntTuple begin, end, step;
  static void Declare(ParamDeclarer<SliceAssignScalarParam>& d) {
    d.field("scalar", &SliceAssignScalarParam::scalar).set_default(0.0).allow_non_finite()
        .describe("The scalar value for assignment.");
    d.field("begin", &SliceAssignScalarParam::begin)
        .describe("starting indices for the slice operation, supports negative indices.");
    d.field("end", &SliceAssignScalarParam::end)
        .describe("ending indices for the slice operation, supports negative indices.");
    d.field("step", &SliceAssignScalarParam::step).set_default(OptIntTuple{})
        .describe("step for the slice operation, supports negative values.");
  }
};

// The window of `data` the parameters select, as an index map from the window's elements.
template <typename P>
IndexMap WindowMap(const P& p, const TShape& data) {
  const SliceRange r = ComputeSliceRange(data, p.begin, p.end, p.step);
  return SliceMap(r, data, TShape(r.size));
}

// out = data with window element k set to the element-sized bytes value(k).
template <typename ValueBytes>
void AssignWindow(const NodeAttrs& attrs, const IndexMap& window, const NDArray& data, OpReq req,
                  const NDArray& out, const ValueBytes& value) {
  if (req == OpReq::kNull) return;
  if (req == OpReq::kAdd)
    throw Error(StrCat(InOperator(attrs), ": the output can only be written, not added to"));
  CopyWithReq(out, data, OpReq::kWrite);  // nothing to copy when running in place
  const size_t bytes = DTypeSize(out.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  ParallelFor(window.out_shape.Size(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) std::memcpy(dst + window.Source(k) * bytes, value(k), bytes);
  });
}

}  // namespace

SYMBIND_REGISTER_OP(_slice_assign)
    .add_alias("_crop_assign")
    .describe("Assign the rhs to a cropped subset of lhs: the output is lhs with "
              "lhs[begin:end:step] replaced by rhs, whose shape must be the window's.")
    .set_params<SliceParam>()
    .set_arguments({"lhs", "rhs"})
    .add_argument_doc("lhs", "Source input")
    .add_argument_doc("rhs", "value to assign")
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[0]);
      ShapeAssignCheck(in, 0, (*out)[0]);
      const TShape& lhs = (*in)[0];
      if (!lhs.is_known()) return;
      const auto& p = a.param<SliceParam>();
      ShapeAssignCheck(in, 1, TShape(ComputeSliceRange(lhs, p.begin, p.end, p.step).size));
    })
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const IndexMap window = WindowMap(attrs.param<SliceParam>(), in[0].shape());
      const char* rhs = static_cast<const char*>(in[1].raw_data());
      const size_t bytes = DTypeSize(in[1].dtype());
      AssignWindow(attrs, window, in[0], req[0], out[0],
                   [&](int64_t k) { return rhs + static_cast<size_t>(k) * bytes; });
    });

SYMBIND_REGISTER_OP(_slice_assign_scalar)
    .set_monitor_numbered_inputs()
    .add_alias("_crop_assign_scalar")
    .describe("Assign the scalar to a cropped subset of the input data: the output is data "
              "with data[begin:end:step] set to scalar.")
    .set_params<SliceAssignScalarParam>()
    .set_arguments({"data"})
    .add_argument_doc("data", "Source input")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<SliceAssignScalarParam>();
      const IndexMap window = WindowMap(p, in[0].shape());
      char scalar[sizeof(double)];  // the scalar in the data's dtype (at most 8 bytes)
      ConvertElements(&p.scalar, DType::kFloat64, scalar, out[0].dtype(), 1);
      AssignWindow(attrs, window, in[0], req[0], out[0], [&](int64_t) { return scalar; });
    });

}  // namespace symbind
