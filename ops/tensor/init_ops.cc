// Operators without inputs that create an array: _zeros, _ones, _full (a constant), _arange
// (and _contrib_arange_like, as long as its input) and _linspace (evenly spaced values) and _eye (ones on a diagonal). The output dtype is the `dtype` parameter, integer types included, so
// the kernels write every dtype. As in MXNet 1.x (legacy shapes), a `shape` of rank 0 or with 0
// dims is unknown and comes from the consumer instead, unless NumPy shape semantics are on
// (core/shape_semantics.h).
#include <cmath>
#include <tuple>

#include <symbind/core/shape_semantics.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

constexpr int kFloat32Flag = static_cast<int>(DType::kFloat32);

struct InitParam : Parameter<InitParam> {
  TShape shape;
  std::string ctx;
  int dtype;
  static void Declare(ParamDeclarer<InitParam>& d) {
    d.field("shape", &InitParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("The shape of the output");
    d.field("ctx", &InitParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    AddDTypeEnums(d.field("dtype", &InitParam::dtype), true).set_default(kFloat32Flag)
        .describe("Target data type.");
  }
};

struct FullParam : Parameter<FullParam> {
  TShape shape;
  std::string ctx;
  int dtype;
  double value;
  static void Declare(ParamDeclarer<FullParam>& d) {
    d.field("shape", &FullParam::shape).set_default(TShape()).describe("The shape of the output");
    d.field("ctx", &FullParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    AddDTypeEnums(d.field("dtype", &FullParam::dtype), true).set_default(kFloat32Flag)
        .describe("Target data type.");
    d.field("value", &FullParam::value).allow_non_finite().describe("Value with which to fill newly created tensor");
  }
};

struct ArangeParam : Parameter<ArangeParam> {
  double start;
  std::optional<double> stop;
  double step;
  int repeat;
  bool infer_range;
  std::string ctx;
  int dtype;
  static void Declare(ParamDeclarer<ArangeParam>& d) {
    d.field("start", &ArangeParam::start)
        .describe("Start of interval. The interval includes this value. Alone (without stop), it is "
                  "the stop and the start is 0.");
    d.field("stop", &ArangeParam::stop).set_default(std::nullopt)
        .describe("End of interval. The interval does not include this value.");
    d.field("step", &ArangeParam::step).set_default(1.0).describe("Spacing between values.");
    d.field("repeat", &ArangeParam::repeat).set_default(1)
        .describe("The repeating time of all elements. E.g repeat=3, the element a will be repeated "
                  "three times --> a, a, a.");
    d.field("infer_range", &ArangeParam::infer_range).set_default(false)
        .describe("When set to True, infer the stop position from the start, step, repeat, and "
                  "output tensor size.");
    d.field("ctx", &ArangeParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    AddDTypeEnums(d.field("dtype", &ArangeParam::dtype), false).set_default(kFloat32Flag)
        .describe("Target data type.");
    d.check([](const ArangeParam& p) { return p.step != 0; }, "_arange: step must not be 0", {"step"});
    d.check([](const ArangeParam& p) { return p.repeat > 0; }, "_arange: repeat must be positive", {"repeat"});
    d.check([](const ArangeParam& p) { return p.infer_range || !p.Empty(); },
            "_arange: the range (start, stop, step) is empty: step > 0 needs start < stop, step < 0 "
            "needs start > stop (a start alone is the stop, from 0)",
            {"start", "stop", "step"});
  }
  // MXNet's parser: without infer_range, a start alone is the stop and the range starts at 0.
  double First() const { return stop || infer_range ? start : 0.0; }
  std::optional<double> Last() const { return stop || infer_range ? stop : std::optional<double>(start); }
  bool Empty() const {
    if (!Last()) return false;
    return step > 0 ? !(First() < *Last()) : !(First() > *Last());
  }
};

struct EyeParam : Parameter<EyeParam> {
  int64_t N;
  int64_t M;
  int64_t k;
  std::string ctx;
  int dtype;
  static void Declare(ParamDeclarer<EyeParam>& d) {
    d.field("N", &EyeParam::N).describe("Number of rows in the output.");
    d.field("M", &EyeParam::M).set_default(0).describe("Number of columns in the output. If 0, defaults to N");
    d.field("k", &EyeParam::k).set_default(0)
        .describe("Index of the diagonal. 0 (the default) refers to the main diagonal.A positive value refers "
                  "to an upper diagonal.A negative value to a lower diagonal.");
    d.field("ctx", &EyeParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    AddDTypeEnums(d.field("dtype", &EyeParam::dtype), false).set_default(kFloat32Flag)
        .describe("Target data type.");
    d.check([](const EyeParam& p) { return p.N >= 0 && p.M >= 0; }, "_eye: N and M must not be negative",
            {"N", "M"});
  }
};

struct LinspaceParam : Parameter<LinspaceParam> {
  double start;
  double stop;
  int num;
  bool endpoint;
  std::string ctx;
  int dtype;
  static void Declare(ParamDeclarer<LinspaceParam>& d) {
    d.field("start", &LinspaceParam::start).describe("The starting value of the sequence.");
    d.field("stop", &LinspaceParam::stop).describe("The ending value of the sequence");
    d.field("num", &LinspaceParam::num).describe("Number of samples to generate. Must be non-negative.");
    d.field("endpoint", &LinspaceParam::endpoint).set_default(true)
        .describe("If True, stop is the last sample. Otherwise, it is not included.");
    d.field("ctx", &LinspaceParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    AddDTypeEnums(d.field("dtype", &LinspaceParam::dtype), false).set_default(kFloat32Flag)
        .describe("Target data type.");
    d.check([](const LinspaceParam& p) { return p.num >= 0; },
            "_linspace: num (the number of samples) must be non-negative", {"num"});
  }
};

// The output takes the parameter shape; a partly unknown one defers to a known output.
void InferInitShape(const TShape& param_shape, std::vector<TShape>* out) {
  const TShape s = ParamShape(param_shape);
  if ((*out)[0].is_known() && !s.is_known()) return;
  ShapeAssignCheck(out, 0, s);
}

// Writes value(i) as double into `out` of any dtype (req add: float32 only, as every gradient).
template <typename F>
void WriteValues(const NDArray& out, OpReq req, const F& value) {
  if (req == OpReq::kNull) return;
  if (out.dtype() == DType::kFloat32) {
    MapWithReq(out.fdata(), out.Size(), req, [&](int64_t i) { return static_cast<float>(value(i)); });
    return;
  }
  if (req == OpReq::kAdd)
    throw Error(StrCat("cannot add into an output of dtype ", DTypeName(out.dtype()), " (float32 only)"));
  std::vector<double> v(static_cast<size_t>(out.Size()));
  for (int64_t i = 0; i < out.Size(); ++i) v[static_cast<size_t>(i)] = value(i);
  ConvertElements(v.data(), DType::kFloat64, out.raw_data(), out.dtype(), v.size());
}

void FillWith(double value, const NDArray& out, OpReq req) {
  WriteValues(out, req, [value](int64_t) { return value; });
}

template <typename P>
void InferParamDType(const NodeAttrs& a, std::vector<int>*, std::vector<int>* out) {
  TypeAssignCheck(out, 0, a.param<P>().dtype);
}

bool IsFloatType(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}
}  // namespace

SYMBIND_REGISTER_OP_FAMILY(constant_init) {
  // _zeros and _ones: one op with a fixed value.
  for (auto [name, doc, value] : {std::tuple{"_zeros", "Fills the target with zeros.", 0.0},
                                  std::tuple{"_ones", "Fills the target with ones.", 1.0}}) {
    OpRegistry::Global().Register(name)
        .describe(doc)
        .set_params<InitParam>()
        .set_arguments(std::vector<std::string>{})
        .set_dtype_generic()
        .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
          InferInitShape(a.param<InitParam>().shape, out);
        })
        .set_infer_type(InferParamDType<InitParam>)
        .set_forward([value = value](const OpContext&, const NodeAttrs&, const std::vector<NDArray>&,
                                     const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
          FillWith(value, out[0], req[0]);
        });
  }
}

SYMBIND_REGISTER_OP(_full)
    .add_alias("_npi_full")
    .describe("Fills the target with a scalar value.")
    .set_params<FullParam>()
    .set_arguments(std::vector<std::string>{})
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      InferInitShape(a.param<FullParam>().shape, out);
    })
    .set_infer_type(InferParamDType<FullParam>)
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      FillWith(a.param<FullParam>().value, out[0], req[0]);
    });

// Element i is start + (i / repeat) * step, with start and step first converted to the output
// type (MXNet's range_fwd): integer outputs truncate them, float32 computes in float.
namespace {
void WriteRange(const NDArray& out, OpReq req, double start, double step, int repeat) {
  const DType t = out.dtype();
  if (t == DType::kFloat64) {
    WriteValues(out, req, [&](int64_t i) { return start + static_cast<double>(i / repeat) * step; });
  } else if (IsFloatType(t)) {
    const float fstart = static_cast<float>(start), fstep = static_cast<float>(step);
    WriteValues(out, req, [&](int64_t i) { return fstart + static_cast<float>(i / repeat) * fstep; });
  } else {
    const double istart = std::trunc(start), istep = std::trunc(step);
    WriteValues(out, req, [&](int64_t i) { return istart + static_cast<double>(i / repeat) * istep; });
  }
}
}  // namespace

SYMBIND_REGISTER_OP(_arange)
    .describe("Returns evenly spaced values within a given interval [start, stop), each repeated "
              "`repeat` times. Similar to NumPy's arange.")
    .set_params<ArangeParam>()
    .set_arguments(std::vector<std::string>{})
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      const auto& p = a.param<ArangeParam>();
      if (!p.Last()) return;  // infer_range without stop: the consumer decides the length
      const double n = std::ceil((*p.Last() - p.First()) / p.step) * p.repeat;
      ShapeAssignCheck(out, 0, TShape({static_cast<int64_t>(n)}));
    })
    .set_infer_type(InferParamDType<ArangeParam>)
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = a.param<ArangeParam>();
      WriteRange(out[0], req[0], p.First(), p.step, p.repeat);
    });

namespace {
struct RangeLikeParam : Parameter<RangeLikeParam> {
  double start, step;
  int repeat;
  std::string ctx;
  std::optional<int> axis;
  static void Declare(ParamDeclarer<RangeLikeParam>& d) {
    d.field("start", &RangeLikeParam::start).set_default(0)
        .describe("Start of interval. The interval includes this value. The default start value is 0.");
    d.field("step", &RangeLikeParam::step).set_default(1).describe("Spacing between values.");
    d.field("repeat", &RangeLikeParam::repeat).set_default(1).lower_bound(1)
        .describe("The repeating time of all elements. E.g repeat=3, the element a will be repeated three "
                  "times --> a, a, a.");
    d.field("ctx", &RangeLikeParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    d.field("axis", &RangeLikeParam::axis).set_default(std::nullopt)
        .describe("Arange elements according to the size of a certain axis of input array. The negative "
                  "numbers are interpreted counting from the backward. If not provided, will arange elements "
                  "according to the input shape.");
  }
};
}  // namespace

// _arange's values, as many as the input has elements (or as its `axis` is long); only the
// input's shape and dtype are read, so the gradient is zero.
SYMBIND_REGISTER_OP(_contrib_arange_like)
    .set_monitor_numbered_inputs()
    .add_alias("_npx_arange_like")
    .describe("Return an array with evenly spaced values. If axis is not given, the output will have the same "
              "shape as the input array. Otherwise, the output will be a 1-D array with size of the specified "
              "axis in input shape.")
    .set_params<RangeLikeParam>()
    .add_argument_doc("data", "The input")
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = a.param<RangeLikeParam>();
      const TShape& d = (*in)[0];
      if (!p.axis) return SameShape(a, in, out);
      if (!d.ndim_known()) return;
      ShapeAssignCheck(out, 0, TShape({d[NormalizeAxis(*p.axis, d.ndim(), "_contrib_arange_like")]}));
    })
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = a.param<RangeLikeParam>();
      WriteRange(out[0], req[0], p.start, p.step, p.repeat);
    })
    .set_zero_gradient();

// Element i is start + i * step in double, then converted to the output type (MXNet's
// linspace_fwd); step divides the range into num - 1 parts with the endpoint, num without.
SYMBIND_REGISTER_OP(_linspace)
    .describe("Return evenly spaced numbers over a specified interval. Similar to NumPy's linspace.")
    .set_params<LinspaceParam>()
    .set_arguments(std::vector<std::string>{})
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, TShape({static_cast<int64_t>(a.param<LinspaceParam>().num)}));
    })
    .set_infer_type(InferParamDType<LinspaceParam>)
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = a.param<LinspaceParam>();
      const int parts = p.endpoint ? p.num - 1 : p.num;
      const double step = parts > 0 ? (p.stop - p.start) / parts : 0.0;
      WriteValues(out[0], req[0], [&](int64_t i) { return p.start + step * static_cast<double>(i); });
    });

// An N x M matrix (M = 0: N) of zeros with ones on diagonal k (k > 0 above the main one).
SYMBIND_REGISTER_OP(_eye)
    .describe("Return a 2-D array with ones on the diagonal and zeros elsewhere.")
    .set_params<EyeParam>()
    .set_arguments(std::vector<std::string>{})
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      const auto& p = a.param<EyeParam>();
      ShapeAssignCheck(out, 0, TShape({p.N, p.M > 0 ? p.M : p.N}));
    })
    .set_infer_type(InferParamDType<EyeParam>)
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = a.param<EyeParam>();
      const int64_t cols = p.M > 0 ? p.M : p.N;
      WriteValues(out[0], req[0], [&](int64_t i) { return i % cols - i / cols == p.k ? 1.0 : 0.0; });
    });

}  // namespace symbind
