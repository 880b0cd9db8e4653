// _sample_unique_zipfian: per batch row, distinct classes drawn from an approximately
// log-uniform (Zipfian) distribution over [0, range_max), and how many draws that took (the
// candidate sampler of sampled softmax). Reproducible per seed (OpContext::seed).
#include <cmath>
#include <random>
#include <unordered_set>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct SampleUniqueZipfianParam : Parameter<SampleUniqueZipfianParam> {
  int64_t range_max;
  TShape shape;
  static void Declare(ParamDeclarer<SampleUniqueZipfianParam>& d) {
    d.field("range_max", &SampleUniqueZipfianParam::range_max).lower_bound(1).describe("The number of possible classes.");
    d.field("shape", &SampleUniqueZipfianParam::shape)
        .describe("2-D shape of the output, (batch_size, num_sampled): num_sampled distinct classes per batch row.");
    d.check([](const SampleUniqueZipfianParam& p) { return p.shape.ndim() == 2; },
            "shape must be 2-D: (batch_size, num_sampled)", {"shape"});
    d.check([](const SampleUniqueZipfianParam& p) {
      return p.shape.ndim() != 2 || (p.shape[0] >= 0 && p.shape[1] >= 0 && p.shape[1] <= p.range_max);
    }, "num_sampled (shape[1]) cannot exceed range_max, the number of possible classes", {"shape", "range_max"});
  }
};
}  // namespace

SYMBIND_REGISTER_OP(_sample_unique_zipfian)
    .describe(R"(Draws random samples from an approximately log-uniform (Zipfian) distribution
without replacement: for each of the batch_size rows of `shape`, num_sampled distinct classes of
[0, range_max). Each draw is round(exp(u * log(range_max))) - 1 with u uniform in [0, 1): class
c comes with probability (log(min(c + 1.5, range_max)) - log(max(c + 0.5, 1))) / log(range_max),
close to (log(c + 2) - log(c + 1)) / log(range_max + 1) but for the first classes; draws already
taken in the row are drawn again. Outputs: the samples (batch_size, num_sampled) and the
number of draws each row took (batch_size,), both int64.)")
    .set_params<SampleUniqueZipfianParam>()
    .set_arguments(std::vector<std::string>{})
    .set_outputs({"samples", "num_tries"})
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      const TShape& s = a.param<SampleUniqueZipfianParam>().shape;
      ShapeAssignCheck(out, 0, s);
      ShapeAssignCheck(out, 1, TShape({s[0]}));
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>*, std::vector<int>* out) {
      TypeAssignCheck(out, 0, static_cast<int>(DType::kInt64));
      TypeAssignCheck(out, 1, static_cast<int>(DType::kInt64));
    })
    .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = a.param<SampleUniqueZipfianParam>();
      const int64_t rows = p.shape[0], per_row = p.shape[1];
      const double log_range = std::log(static_cast<double>(p.range_max));
      std::vector<double> samples(static_cast<size_t>(rows * per_row)), tries(static_cast<size_t>(rows));
      std::mt19937_64 engine(ctx.seed);
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      for (int64_t r = 0; r < rows; ++r) {
        std::unordered_set<int64_t> taken;
        int64_t draws = 0;
        while (static_cast<int64_t>(taken.size()) < per_row) {
          const int64_t value = std::llround(std::exp(uniform(engine) * log_range)) - 1;
          if (taken.insert(value).second) samples[static_cast<size_t>(r * per_row) + taken.size() - 1] = static_cast<double>(value);
          ++draws;
        }
        tries[static_cast<size_t>(r)] = static_cast<double>(draws);
      }
      WriteValuesWithReq(samples, out[0], req[0]);
      WriteValuesWithReq(tries, out[1], req[1]);
    });

}  // namespace symbind
