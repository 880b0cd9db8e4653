// _sample_multinomial (mx.nd.random.multinomial): indices drawn from categorical distributions
// given by their probabilities along the last axis, optionally with the log-probability of each
// draw, whose gradient reaches the probabilities (a score-function estimator's). Reproducible per
// seed (OpContext::seed).
#include <cmath>
#include <limits>
#include <random>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct SampleMultinomialParam : Parameter<SampleMultinomialParam> {
  TShape shape;
  bool get_prob;
  int dtype;
  static void Declare(ParamDeclarer<SampleMultinomialParam>& d) {
    d.field("shape", &SampleMultinomialParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape to be sampled from each random distribution.");
    d.field("get_prob", &SampleMultinomialParam::get_prob).set_default(false)
        .describe("Whether to also return the log probability of sampled result. This is usually used for "
                  "differentiating through stochastic variables, e.g. in reinforcement learning.");
    d.field("dtype", &SampleMultinomialParam::dtype)
        .set_default(static_cast<int>(DType::kInt32))
        .add_enum("uint8", static_cast<int>(DType::kUint8))
        .add_enum("int32", static_cast<int>(DType::kInt32))
        .add_enum("float16", static_cast<int>(DType::kFloat16))
        .add_enum("float32", static_cast<int>(DType::kFloat32))
        .add_enum("float64", static_cast<int>(DType::kFloat64))
        .describe("DType of the sampled indices.");
  }
};

// Distributions (last axis of data: k classes), draws per distribution.
struct Layout {
  int64_t classes, distributions, draws;
  Layout(const NDArray& data, const NDArray& samples) {
    classes = data.shape()[data.shape().ndim() - 1];
    distributions = classes > 0 ? data.Size() / classes : 0;
    draws = distributions > 0 ? samples.Size() / distributions : 0;
  }
};

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SampleMultinomialParam>();
  const TShape& data = (*in)[0];
  if (!data.ndim_known()) return;
  if (data.ndim() < 1)
    throw ShapeError(StrCat("_sample_multinomial: data must have at least one axis (the classes), got shape ", data));
  // The largest class index the output dtype holds exactly, as MXNet checks it.
  const int64_t classes = data[data.ndim() - 1];
  int64_t most = 0;
  switch (static_cast<DType>(p.dtype)) {
    case DType::kUint8: most = 255; break;
    case DType::kFloat16: most = int64_t{1} << 11; break;
    case DType::kFloat32: most = int64_t{1} << 24; break;
    case DType::kInt32: most = std::numeric_limits<int32_t>::max(); break;
    default: most = int64_t{1} << 53; break;
  }
  if (classes > most)
    throw TypeError(StrCat("_sample_multinomial: dtype ", DTypeName(static_cast<DType>(p.dtype)),
                           " does not have a sufficient precision to represent the indices of ", classes,
                           " classes (at most ", most, ")"));
  std::vector<int64_t> dims(data.dims().begin(), data.dims().end() - 1);
  dims.insert(dims.end(), p.shape.dims().begin(), p.shape.dims().end());
  if (dims.empty()) dims.push_back(1);  // one distribution, one draw
  for (size_t k = 0; k < out->size(); ++k) ShapeAssignCheck(out, k, TShape(dims));
}

void InferType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = attrs.param<SampleMultinomialParam>();
  const int t = (*in)[0];
  if (t >= 0 && t != static_cast<int>(DType::kFloat32) && t != static_cast<int>(DType::kFloat64) &&
      t != static_cast<int>(DType::kFloat16))
    throw TypeError(StrCat("_sample_multinomial: probabilities are float16, float32 or float64, not ",
                           DTypeName(static_cast<DType>(t))));
  TypeAssignCheck(out, 0, p.dtype);
  if (out->size() > 1) {
    TypeAssignCheck(out, 1, t);
    TypeAssignCheck(in, 0, (*out)[1]);
  }
}

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
             const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const Layout L(in[0], out[0]);
  const std::vector<double> probs = ValuesAsDouble(in[0]);
  for (double v : probs)
    if (!(v >= 0) || std::isinf(v))
      throw Error(StrCat(attrs.op->name, ": probabilities must be finite and not negative, got ", v));
  std::vector<double> samples(static_cast<size_t>(out[0].Size())), log_probs(out.size() > 1 ? samples.size() : 0);
  std::vector<float> cumulative(static_cast<size_t>(L.classes));
  std::mt19937_64 engine(ctx.seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < L.distributions; ++i) {
    const double* p = probs.data() + i * L.classes;
    double total = 0;  // summed in double, compared in float, as MXNet's kernel does
    for (int64_t c = 0; c < L.classes; ++c) cumulative[static_cast<size_t>(c)] = static_cast<float>(total += p[c]);
    for (int64_t j = 0; j < L.draws; ++j) {
      const float u = uniform(engine);
      // The first class whose cumulative probability reaches u (the last when rounding leaves
      // the total below it).
      const int64_t c = std::min<int64_t>(
          L.classes - 1, std::lower_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
      const size_t k = static_cast<size_t>(i * L.draws + j);
      samples[k] = static_cast<double>(c);
      if (!log_probs.empty()) log_probs[k] = std::log(static_cast<float>(p[c]));
    }
  }
  WriteValuesWithReq(samples, out[0], req[0]);
  if (out.size() > 1) WriteValuesWithReq(log_probs, out[1], req[1]);
}

// d log p[c] / d p[c] = 1 / p[c] for each draw c, times its log-probability's head gradient.
void Backward(const OpContext&, const NodeAttrs&, const BackwardArgs& b) {
  if (b.req[0] == OpReq::kNull) return;
  const NDArray& data = b.inputs[0];
  std::vector<double> grad(static_cast<size_t>(data.Size()), 0.0);
  if (b.out_grads.size() > 1 && !b.out_grads[1].is_none()) {
    const Layout L(data, b.outputs[0]);
    const std::vector<double> probs = ValuesAsDouble(data), samples = ValuesAsDouble(b.outputs[0]);
    const std::vector<double> head = ValuesAsDouble(b.out_grads[1]);
    for (int64_t i = 0; i < L.distributions; ++i)
      for (int64_t j = 0; j < L.draws; ++j) {
        const size_t k = static_cast<size_t>(i * L.draws + j);
        const size_t at = static_cast<size_t>(i * L.classes + static_cast<int64_t>(samples[k]));
        grad[at] += head[k] / probs[at];
      }
  }
  WriteValuesWithReq(grad, b.in_grads[0], b.req[0]);
}
}  // namespace

SYMBIND_REGISTER_OP(_sample_multinomial)
    .add_alias("sample_multinomial")
    .describe(R"(Concurrent sampling from multiple categorical distributions: data holds each
distribution's class probabilities along its last axis (k classes; they should sum to 1), and
each distribution draws `shape` class indices in [0, k): the output's shape is data's without
its last axis, followed by `shape` ((1,) for a 1-D data and no shape). A draw u, uniform in
[0, 1), takes the first class whose cumulative probability reaches it. With get_prob, a second
output holds log(data[..., index]) of each draw (data's dtype), whose gradient flows to data:
head gradient / probability, summed over the draws of each class. Probabilities that are
negative, infinite or NaN are an error, as are more classes than dtype represents exactly (255 for
uint8, 2^11 for float16, 2^24 for float32).)")
    .set_params<SampleMultinomialParam>()
    .set_arguments({"data"})
    .add_argument_doc("data", "Distribution probabilities. Must sum to one on the last axis.")
    .set_num_outputs([](const NodeAttrs& a) { return a.param<SampleMultinomialParam>().get_prob ? 2 : 1; })
    .set_outputs([](const NodeAttrs& a) {
      return a.param<SampleMultinomialParam>().get_prob ? std::vector<std::string>{"output0", "output1"}
                                                         : std::vector<std::string>{"output"};
    })
    .set_infer_shape(InferShape)
    .set_dtype_generic()
    .set_infer_type(InferType)
    .set_forward(Forward)
    .set_backward(Backward);

}  // namespace symbind
