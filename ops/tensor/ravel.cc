// _ravel_multi_index and _unravel_index: between a (ndim, N) batch of multi-indices and N flat
// indices into an array of `shape`, in row-major order. shape[0] may be -1 (unbounded): only
// the inner dims take part in the arithmetic. Values keep the input's dtype; the gradient is
// zero, as in MXNet.
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct RavelParam : Parameter<RavelParam> {
  TShape shape;
  static void Declare(ParamDeclarer<RavelParam>& d) {
    d.field("shape", &RavelParam::shape).set_default(TShape())
        .describe("Shape of the array into which the multi-indices apply.");
  }
};

const TShape& RavelShape(const NodeAttrs& attrs, const char* op) {
  const TShape& s = attrs.param<RavelParam>().shape;
  if (!s.ndim_known() || s.ndim() == 0) throw ShapeError(StrCat(op, ": the shape parameter is empty"));
  for (int j = 1; j < s.ndim(); ++j)
    if (s[j] <= 0)
      throw ShapeError(StrCat(op, ": dimension ", j, " of shape ", s.ToStringAsWritten(), " must be positive"));
  return s;
}

void InferRavel(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& shape = RavelShape(attrs, "ravel_multi_index");
  const TShape& d = (*in)[0];
  if (d.ndim_known()) {
    if (d.ndim() != 2 || d[0] != shape.ndim())
      throw ShapeError(StrCat("ravel_multi_index: the input must be (", shape.ndim(),
                              ", N) for a shape of ", shape.ndim(), " dimensions, got ", d));
    ShapeAssignCheck(out, 0, TShape({d[1]}));
  } else if ((*out)[0].ndim_known()) {
    ShapeAssignCheck(in, 0, TShape({shape.ndim(), (*out)[0][0]}));
  }
}

void InferUnravel(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& shape = RavelShape(attrs, "unravel_index");
  const TShape& d = (*in)[0];
  if (d.ndim_known()) {
    ShapeAssignCheck(out, 0, TShape({shape.ndim(), d[0]}));
  } else if ((*out)[0].ndim_known()) {
    const TShape& o = (*out)[0];
    if (o.ndim() != 2 || o[0] != shape.ndim())
      throw ShapeError(StrCat("unravel_index: the output must be (", shape.ndim(), ", N), got ", o));
    ShapeAssignCheck(in, 0, TShape({o[1]}));
  }
}

// Coordinate j of a multi-index must lie in [0, shape[j]), except along an unbounded dim 0.
int64_t CheckedCoordinate(double v, const TShape& shape, int j, int64_t item, const char* op) {
  const int64_t c = TruncateIndex(v);
  if (c < 0 || (shape[j] >= 0 && c >= shape[j]))
    throw IndexError(StrCat(op, ": index ", v, " of item ", item, " is out of bounds for axis ", j,
                       " of size ", shape[j], " in shape ", shape.ToStringAsWritten()));
  return c;
}

SYMBIND_REGISTER_OP(_ravel_multi_index)
    .add_alias("ravel_multi_index")
    .describe("Converts a batch of index arrays into an array of flat indices. The operator follows "
              "numpy conventions so a single multi index is given by a column of the input matrix. "
              "The leading dimension may be left unspecified by using -1 as placeholder.")
    .set_params<RavelParam>()
    .add_argument_doc("data", "Batch of multi-indices")
    .set_infer_shape(InferRavel)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const TShape& shape = RavelShape(attrs, "ravel_multi_index");
      const std::vector<double> v = ValuesAsDouble(in[0]);
      const int64_t n = out[0].Size();
      std::vector<double> flat(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        int64_t r = 0;
        for (int j = 0; j < shape.ndim(); ++j)
          r = r * (j == 0 ? 0 : shape[j]) + CheckedCoordinate(v[j * n + i], shape, j, i, "ravel_multi_index");
        flat[i] = static_cast<double>(r);
      }
      WriteValuesWithReq(flat, out[0], req[0]);
    })
    .set_zero_gradient();

SYMBIND_REGISTER_OP(_unravel_index)
    .add_alias("unravel_index")
    .describe("Converts an array of flat indices into a batch of index arrays. The operator follows "
              "numpy conventions so a single multi index is given by a column of the output matrix. "
              "The leading dimension may be left unspecified by using -1 as placeholder.")
    .set_params<RavelParam>()
    .add_argument_doc("data", "Array of flat indices")
    .set_infer_shape(InferUnravel)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const TShape& shape = RavelShape(attrs, "unravel_index");
      const std::vector<double> v = ValuesAsDouble(in[0]);
      const int64_t n = in[0].Size();
      std::vector<double> coords(static_cast<size_t>(out[0].Size()));
      for (int64_t i = 0; i < n; ++i) {
        int64_t idx = TruncateIndex(v[i]);
        if (idx < 0 || (shape[0] >= 0 && idx >= shape.Size()))
          throw IndexError(StrCat("unravel_index: flat index ", v[i], " of item ", i, " is out of bounds for shape ",
                             shape.ToStringAsWritten()));
        for (int j = shape.ndim() - 1; j > 0; --j) {
          coords[j * n + i] = static_cast<double>(idx % shape[j]);
          idx /= shape[j];
        }
        coords[i] = static_cast<double>(idx);
      }
      WriteValuesWithReq(coords, out[0], req[0]);
    })
    .set_zero_gradient();

}  // namespace

}  // namespace symbind
