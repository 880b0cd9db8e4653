// Random samplers, as MXNet registers them, one table row per distribution:
//   _random_<d>(shape, ctx, dtype, <params>)   an array of `shape` drawn with scalar parameters
//   _random_<d>_like(data, <params>)           likewise, with data's shape and dtype
//   _sample_<d>(<param arrays>, shape, dtype)  per element of the parameter arrays, `shape`
//                                              draws: output shape = param shape + shape
// for d in uniform, normal, gamma, exponential, poisson, negative_binomial and
// generalized_negative_binomial; then _random_randint, and the constant _set_value.
// MXNet's Python package (mx.nd.random.*, initializers) and cpp-package invoke them
// imperatively. Samples come from a generator seeded by the node's per-run seed
// (OpContext::seed), so they are reproducible and independent of threads. Without a dtype the
// output keeps the dtype of the array given (float32 when none is).
#include <array>
#include <iterator>
#include <optional>
#include <random>
#include <utility>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

using Engine = std::mt19937_64;

// One scalar parameter of a distribution: its name and default in _random_<d>, and the input
// name _sample_<d> reads it from.
struct DistArg {
  const char* name;
  float default_value;
  const char* doc;
  const char* sample_input;
  const char* sample_doc;
};

struct Distribution {
  const char* name;  // d in _random_<d>
  const char* short_alias;  // MXNet's older name of _random_<d>, or null
  const char* what;  // "a uniform distribution on [low, high)"
  int num_args;
  std::array<DistArg, 2> args;
  // The reason the parameters (a, b) are invalid, or "" when they are valid.
  std::string (*invalid)(double a, double b);
  // Fills out[0, n) with draws.
  void (*draw)(Engine& engine, double a, double b, double* out, int64_t n);
};

template <typename Dist>
void DrawFrom(Dist dist, Engine& engine, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(dist(engine));
}

// A gamma-distributed rate, then a Poisson count with it: how MXNet samples the (generalized)
// negative binomial.
int64_t GammaPoisson(Engine& engine, double shape, double scale) {
  const double rate = std::gamma_distribution<double>(shape, scale)(engine);
  return rate > 0 ? std::poisson_distribution<int64_t>(rate)(engine) : 0;
}

std::string Unless(bool ok, std::string reason) { return ok ? std::string() : reason; }

const Distribution kDistributions[] = {
    {"uniform", "uniform", "a uniform distribution on [low, high)", 2,
     {{{"low", 0.f, "Lower bound of the distribution.", "low", "Lower bounds of the distributions."},
       {"high", 1.f, "Upper bound of the distribution.", "high", "Upper bounds of the distributions."}}},
     [](double a, double b) { return Unless(a < b, StrCat("low (", a, ") must be below high (", b, ")")); },
     [](Engine& e, double a, double b, double* out, int64_t n) {
       DrawFrom(std::uniform_real_distribution<double>(a, b), e, out, n);
     }},
    {"normal", "normal", "a normal (Gaussian) distribution with mean loc and standard deviation scale", 2,
     {{{"loc", 0.f, "Mean of the distribution.", "mu", "Means of the distributions."},
       {"scale", 1.f, "Standard deviation of the distribution.", "sigma",
        "Standard deviations of the distributions."}}},
     [](double, double b) { return Unless(b > 0, StrCat("scale must be positive, got ", b)); },
     [](Engine& e, double a, double b, double* out, int64_t n) {
       DrawFrom(std::normal_distribution<double>(a, b), e, out, n);
     }},
    {"gamma", nullptr, "a gamma distribution with shape alpha and scale beta", 2,
     {{{"alpha", 1.f, "Alpha parameter (shape) of the gamma distribution.", "alpha",
        "Alpha (shape) parameters of the distributions."},
       {"beta", 1.f, "Beta parameter (scale) of the gamma distribution.", "beta",
        "Beta (scale) parameters of the distributions."}}},
     [](double a, double b) {
       return Unless(a > 0 && b > 0, StrCat("alpha and beta must be positive, got ", a, " and ", b));
     },
     [](Engine& e, double a, double b, double* out, int64_t n) {
       DrawFrom(std::gamma_distribution<double>(a, b), e, out, n);
     }},
    {"exponential", nullptr, "an exponential distribution with rate lam", 1,
     {{{"lam", 1.f, "Lambda parameter (rate) of the exponential distribution.", "lam",
        "Lambda (rate) parameters of the distributions."}}},
     [](double a, double) { return Unless(a > 0, StrCat("lam must be positive, got ", a)); },
     [](Engine& e, double a, double, double* out, int64_t n) {
       DrawFrom(std::exponential_distribution<double>(a), e, out, n);
     }},
    {"poisson", nullptr, "a Poisson distribution with rate lam (integer values)", 1,
     {{{"lam", 1.f, "Lambda parameter (rate) of the Poisson distribution.", "lam",
        "Lambda (rate) parameters of the distributions."}}},
     [](double a, double) { return Unless(a >= 0, StrCat("lam must not be negative, got ", a)); },
     [](Engine& e, double a, double, double* out, int64_t n) {
       if (a > 0) DrawFrom(std::poisson_distribution<int64_t>(a), e, out, n);
       else std::fill(out, out + n, 0.0);
     }},
    {"negative_binomial", nullptr,
     "a negative binomial distribution: failures before k successes with success probability p", 2,
     {{{"k", 1.f, "Limit of unsuccessful experiments.", "k", "Limits of unsuccessful experiments."},
       {"p", 1.f, "Failure probability in each experiment.", "p",
        "Failure probabilities in each experiment."}}},
     [](double a, double b) {
       return Unless(a > 0 && b > 0 && b <= 1,
                     StrCat("k must be positive and p in (0, 1], got k=", a, ", p=", b));
     },
     [](Engine& e, double a, double b, double* out, int64_t n) {
       for (int64_t i = 0; i < n; ++i)
         out[i] = b == 1 ? 0.0 : static_cast<double>(GammaPoisson(e, a, (1 - b) / b));
     }},
    {"generalized_negative_binomial", nullptr,
     "a generalized negative binomial distribution with mean mu and dispersion alpha", 2,
     {{{"mu", 1.f, "Mean of the negative binomial distribution.", "mu",
        "Means of the distributions."},
       {"alpha", 1.f, "Alpha (dispersion) parameter of the negative binomial distribution.",
        "alpha", "Alpha (dispersion) parameters of the distributions."}}},
     [](double a, double b) {
       return Unless(a >= 0 && b >= 0, StrCat("mu and alpha must not be negative, got ", a, " and ", b));
     },
     [](Engine& e, double a, double b, double* out, int64_t n) {
       for (int64_t i = 0; i < n; ++i)
         out[i] = b == 0 ? static_cast<double>(a == 0 ? 0 : std::poisson_distribution<int64_t>(a)(e))
                         : static_cast<double>(GammaPoisson(e, 1 / b, b * a));
     }},
};

// MXNet's dtype choices of the float samplers; None: the output array's.
template <typename Field>
Field& FloatDTypeEnum(Field& f) {
  return f.set_default(std::nullopt)
      .add_enum("float32", static_cast<int>(DType::kFloat32))
      .add_enum("float64", static_cast<int>(DType::kFloat64))
      .add_enum("float16", static_cast<int>(DType::kFloat16));
}

// The distribution's parameters as fields a and b of P.
template <int kDist, typename P>
void DeclareDistArgs(ParamDeclarer<P>& d) {
  const Distribution& dist = kDistributions[kDist];
  d.field(dist.args[0].name, &P::a).set_default(dist.args[0].default_value).describe(dist.args[0].doc);
  if (dist.num_args > 1)
    d.field(dist.args[1].name, &P::b).set_default(dist.args[1].default_value).describe(dist.args[1].doc);
}

template <int kDist>
struct RandomParam : Parameter<RandomParam<kDist>> {
  float a = 0, b = 0;
  TShape shape;
  std::string ctx;
  std::optional<int> dtype;
  static void Declare(ParamDeclarer<RandomParam>& d) {
    DeclareDistArgs<kDist>(d);
    d.field("shape", &RandomParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape of the output.");
    d.field("ctx", &RandomParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    FloatDTypeEnum(d.field("dtype", &RandomParam::dtype))
        .describe("DType of the output in case this can't be inferred. Defaults to float32 if not "
                  "defined (dtype=None).");
  }
};

template <int kDist>
struct RandomLikeParam : Parameter<RandomLikeParam<kDist>> {
  float a = 0, b = 0;
  static void Declare(ParamDeclarer<RandomLikeParam>& d) { DeclareDistArgs<kDist>(d); }
};

struct SampleParam : Parameter<SampleParam> {
  TShape shape;
  std::optional<int> dtype;
  static void Declare(ParamDeclarer<SampleParam>& d) {
    d.field("shape", &SampleParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape to be sampled from each random distribution.");
    FloatDTypeEnum(d.field("dtype", &SampleParam::dtype))
        .describe("DType of the output in case this can't be inferred. Defaults to float32 if not "
                  "defined (dtype=None).");
  }
};

void CheckValid(const NodeAttrs& attrs, const Distribution& dist, double a, double b) {
  const std::string reason = dist.invalid(a, b);
  if (!reason.empty()) throw ParamError(StrCat(attrs.op->name, ": ", reason));
}

// Writes `values` into `out` in its dtype.
void StoreSamples(const std::vector<double>& values, const NDArray& out, OpReq req) {
  WriteValuesWithReq(values, out, req);
}

// The output takes the `shape` parameter when one is given.
void ShapeFromParam(const TShape& shape, std::vector<TShape>* out) {
  if (shape.ndim() > 0) ShapeAssignCheck(out, 0, shape);
}

// dtype None leaves the output's type to the caller (Invoke: the array given, else float32).
void TypeFromParam(const std::optional<int>& dtype, std::vector<int>* out) {
  if (dtype) TypeAssignCheck(out, 0, *dtype);
}

void RejectNonFloat(const char* op, int type) {
  if (type >= 0 && type != static_cast<int>(DType::kFloat32) && type != static_cast<int>(DType::kFloat64) &&
      type != static_cast<int>(DType::kFloat16))
    throw TypeError(StrCat(op, ": samples are float16, float32 or float64, not ",
                           DTypeName(static_cast<DType>(type))));
}

template <int kDist>
void RegisterDistribution() {
  const Distribution& dist = kDistributions[kDist];
  auto& reg = OpRegistry::Global();
  const std::string name = dist.name;

  Op& random = reg.Register("_random_" + name).add_alias("random_" + name);
  if (dist.short_alias) random.add_alias(dist.short_alias);
  random
      .describe(StrCat("Draws random samples from ", dist.what, "."))
      .set_params<RandomParam<kDist>>()
      .set_arguments(std::vector<std::string>{})
      .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
        ShapeFromParam(a.param<RandomParam<kDist>>().shape, out);
      })
      .set_dtype_generic()
      .set_infer_type([](const NodeAttrs& a, std::vector<int>*, std::vector<int>* out) {
        TypeFromParam(a.param<RandomParam<kDist>>().dtype, out);
        RejectNonFloat(a.op->name.c_str(), (*out)[0]);
      })
      .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>&,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const auto& p = a.param<RandomParam<kDist>>();
        const Distribution& d = kDistributions[kDist];
        CheckValid(a, d, p.a, p.b);
        std::vector<double> values(static_cast<size_t>(out[0].Size()));
        Engine engine(ctx.seed);
        d.draw(engine, p.a, p.b, values.data(), out[0].Size());
        StoreSamples(values, out[0], req[0]);
      });

  reg.Register("_random_" + name + "_like")
      .describe(StrCat("Draws random samples from ", dist.what,
                       ", as many as data has, in data's shape and dtype."))
      .set_monitor_numbered_inputs()
      .set_params<RandomLikeParam<kDist>>()
      .set_arguments({"data"})
      .add_argument_doc("data", "The input")
      .set_infer_shape(SameShape)
      .set_dtype_generic()
      .set_infer_type([](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
        InferTypeFromData(a, in, out);
        RejectNonFloat(a.op->name.c_str(), (*out)[0]);
      })
      .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>&,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const auto& p = a.param<RandomLikeParam<kDist>>();
        const Distribution& d = kDistributions[kDist];
        CheckValid(a, d, p.a, p.b);
        std::vector<double> values(static_cast<size_t>(out[0].Size()));
        Engine engine(ctx.seed);
        d.draw(engine, p.a, p.b, values.data(), out[0].Size());
        StoreSamples(values, out[0], req[0]);
      })
      // The samples do not depend on data's values (MXNet's zero gradient).
      .set_zero_gradient();

  std::vector<std::string> inputs;
  for (int i = 0; i < dist.num_args; ++i) inputs.push_back(dist.args[i].sample_input);
  Op& sample = reg.Register("_sample_" + name)
      .add_alias("sample_" + name)
      .describe(StrCat("Concurrent sampling from multiple distributions: ", dist.what,
                       ", with the parameters read element by element from the input arrays "
                       "(all of one shape); each element draws `shape` samples, so the output "
                       "shape is the parameters' shape followed by `shape`."))
      .set_params<SampleParam>()
      .set_arguments(inputs)
      .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        for (size_t i = 1; i < in->size(); ++i) ShapeAssignCheck(in, i, (*in)[0]);
        for (size_t i = 1; i < in->size(); ++i) ShapeAssignCheck(in, 0, (*in)[i]);
        const TShape& params = (*in)[0];
        if (!params.is_known()) return;
        std::vector<int64_t> dims = params.dims();
        const TShape& draws = a.param<SampleParam>().shape;
        dims.insert(dims.end(), draws.dims().begin(), draws.dims().end());
        ShapeAssignCheck(out, 0, TShape(dims));
      })
      .set_dtype_generic()
      .set_infer_type([](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
        for (size_t i = 0; i < in->size(); ++i) RejectNonFloat(a.op->name.c_str(), (*in)[i]);
        TypeFromParam(a.param<SampleParam>().dtype, out);
        if ((*out)[0] < 0 && (*in)[0] >= 0) TypeAssignCheck(out, 0, (*in)[0]);
        RejectNonFloat(a.op->name.c_str(), (*out)[0]);
      })
      .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const Distribution& d = kDistributions[kDist];
        const std::vector<double> first = ValuesAsDouble(in[0]);
        const std::vector<double> second = in.size() > 1 ? ValuesAsDouble(in[1]) : first;
        const int64_t per_param = a.param<SampleParam>().shape.Size();
        std::vector<double> values(static_cast<size_t>(out[0].Size()));
        Engine engine(ctx.seed);
        for (size_t k = 0; k < first.size(); ++k) {
          CheckValid(a, d, first[k], second[k]);
          d.draw(engine, first[k], second[k], values.data() + k * per_param, per_param);
        }
        StoreSamples(values, out[0], req[0]);
      });
  for (int i = 0; i < dist.num_args; ++i)
    sample.add_argument_doc(dist.args[i].sample_input, dist.args[i].sample_doc);
}

template <size_t... kDists>
void RegisterDistributions(std::index_sequence<kDists...>) {
  (RegisterDistribution<kDists>(), ...);
}

struct RandIntParam : Parameter<RandIntParam> {
  int64_t low, high;
  TShape shape;
  std::string ctx;
  std::optional<int> dtype;
  static void Declare(ParamDeclarer<RandIntParam>& d) {
    d.field("low", &RandIntParam::low).describe("Lower bound of the distribution.");
    d.field("high", &RandIntParam::high).describe("Upper bound of the distribution.");
    d.field("shape", &RandIntParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape of the output.");
    d.field("ctx", &RandIntParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
    d.field("dtype", &RandIntParam::dtype).set_default(std::nullopt)
        .add_enum("int32", static_cast<int>(DType::kInt32))
        .add_enum("int64", static_cast<int>(DType::kInt64))
        .describe("DType of the output in case this can't be inferred. Defaults to int32 if not "
                  "defined (dtype=None).");
    d.check([](const RandIntParam& p) { return p.low < p.high; }, "low must be below high",
            {"low", "high"});
  }
};

struct SetValueParam : Parameter<SetValueParam> {
  float src;
  TShape shape;
  static void Declare(ParamDeclarer<SetValueParam>& d) {
    d.field("src", &SetValueParam::src).describe("The value every element is set to.");
    d.field("shape", &SetValueParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape of the output.");
  }
};

}  // namespace

SYMBIND_REGISTER_OP_FAMILY(random_samplers) {
  RegisterDistributions(std::make_index_sequence<std::size(kDistributions)>());
}

SYMBIND_REGISTER_OP(_random_randint)
    .add_alias("random_randint")
    .describe("Draws random samples from a discrete uniform distribution: integers in [low, high).")
    .set_params<RandIntParam>()
    .set_arguments(std::vector<std::string>{})
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeFromParam(a.param<RandIntParam>().shape, out);
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& a, std::vector<int>*, std::vector<int>* out) {
      TypeAssignCheck(out, 0, a.param<RandIntParam>().dtype.value_or(static_cast<int>(DType::kInt32)));
    })
    .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = a.param<RandIntParam>();
      std::uniform_int_distribution<int64_t> dist(p.low, p.high - 1);
      Engine engine(ctx.seed);
      std::vector<double> values(static_cast<size_t>(out[0].Size()));
      for (double& v : values) v = static_cast<double>(dist(engine));
      StoreSamples(values, out[0], req[0]);
    });

SYMBIND_REGISTER_OP(_set_value)
    .set_monitor_numbered_inputs()
    .describe("An array of the given shape with every element set to src.")
    .set_params<SetValueParam>()
    .set_arguments(std::vector<std::string>{})
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeFromParam(a.param<SetValueParam>().shape, out);
    })
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] != OpReq::kNull) out[0].Fill(a.param<SetValueParam>().src);
    });

}  // namespace symbind
