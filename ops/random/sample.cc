// Operators without inputs that create an array of a given shape: random samples
// (_random_uniform, _random_normal) and a constant (_set_value). MXNet's cpp-package invokes
// them imperatively to initialise arrays (NDArray::SampleUniform, NDArray::operator=).
// Samples come from a generator seeded by the node's per-run seed (OpContext::seed), so they
// are reproducible and independent of threads. Output dtype float32.
#include <random>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// The output takes the `shape` parameter when one is given.
void ShapeFromParam(const TShape& shape, std::vector<TShape>* out) {
  if (shape.ndim() > 0) ShapeAssignCheck(out, 0, shape);
}

template <typename Dist>
void FillFrom(const OpContext& ctx, Dist dist, const NDArray& out) {
  std::mt19937_64 engine(ctx.seed);
  float* y = out.fdata();
  for (int64_t i = 0; i < out.Size(); ++i) y[i] = static_cast<float>(dist(engine));
}

struct UniformParam : Parameter<UniformParam> {
  float low, high;
  TShape shape;
  std::string ctx;
  static void Declare(ParamDeclarer<UniformParam>& d) {
    d.field("low", &UniformParam::low).set_default(0.0f).describe("Lower bound of the distribution.");
    d.field("high", &UniformParam::high).set_default(1.0f).describe("Upper bound of the distribution.");
    d.field("shape", &UniformParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape of the output.");
    d.field("ctx", &UniformParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
  }
};

struct NormalParam : Parameter<NormalParam> {
  float loc, scale;
  TShape shape;
  std::string ctx;
  static void Declare(ParamDeclarer<NormalParam>& d) {
    d.field("loc", &NormalParam::loc).set_default(0.0f).describe("Mean of the distribution.");
    d.field("scale", &NormalParam::scale).set_default(1.0f)
        .describe("Standard deviation of the distribution.");
    d.field("shape", &NormalParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape of the output.");
    d.field("ctx", &NormalParam::ctx).set_default("")
        .describe("Context of output (ignored: symbind computes on the CPU).");
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

SYMBIND_REGISTER_OP(_random_uniform)
    .add_alias("uniform")
    .add_alias("random_uniform")
    .describe("Draws samples from a uniform distribution on [low, high).")
    .set_params<UniformParam>()
    .set_arguments(std::vector<std::string>{})
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeFromParam(a.param<UniformParam>().shape, out);
    })
    .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>&, const std::vector<NDArray>& out) {
      const auto& p = a.param<UniformParam>();
      if (!(p.low < p.high))
        throw ParamError(StrCat("_random_uniform: low (", p.low, ") must be below high (", p.high, ")"));
      FillFrom(ctx, std::uniform_real_distribution<double>(p.low, p.high), out[0]);
    });

SYMBIND_REGISTER_OP(_random_normal)
    .add_alias("normal")
    .add_alias("random_normal")
    .describe("Draws samples from a normal (Gaussian) distribution with mean loc and standard "
              "deviation scale.")
    .set_params<NormalParam>()
    .set_arguments(std::vector<std::string>{})
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeFromParam(a.param<NormalParam>().shape, out);
    })
    .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>&, const std::vector<NDArray>& out) {
      const auto& p = a.param<NormalParam>();
      if (!(p.scale > 0))
        throw ParamError(StrCat("_random_normal: scale must be positive, got ", p.scale));
      FillFrom(ctx, std::normal_distribution<double>(p.loc, p.scale), out[0]);
    });

SYMBIND_REGISTER_OP(_set_value)
    .describe("An array of the given shape with every element set to src.")
    .set_params<SetValueParam>()
    .set_arguments(std::vector<std::string>{})
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeFromParam(a.param<SetValueParam>().shape, out);
    })
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>&, const std::vector<NDArray>& out) {
      out[0].Fill(a.param<SetValueParam>().src);
    });

}  // namespace symbind
