// _contrib_calibrate_entropy: the KL-optimal threshold of a histogram (MXNet's entropy
// calibration; the search is ops/kernels/entropy_threshold.h).
#include <symbind/ops/kernels/entropy_threshold.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct CalibrateEntropyParam : Parameter<CalibrateEntropyParam> {
  int num_quantized_bins;
  static void Declare(ParamDeclarer<CalibrateEntropyParam>& d) {
    d.field("num_quantized_bins", &CalibrateEntropyParam::num_quantized_bins).set_default(255).lower_bound(1)
        .describe("The number of quantized bins.");
  }
};

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const std::vector<float> hist(in[0].fdata(), in[0].fdata() + in[0].Size());
  const std::vector<float> edges(in[1].fdata(), in[1].fdata() + in[1].Size());
  const EntropyThreshold t = OptimalThreshold(hist, edges, attrs.param<CalibrateEntropyParam>().num_quantized_bins);
  out[0].fdata()[0] = t.threshold;
  out[1].fdata()[0] = t.divergence;
}

}  // namespace

SYMBIND_REGISTER_OP(_contrib_calibrate_entropy)
    .describe(R"(The threshold of MXNet's entropy calibration for a histogram of an odd number of bins
over [-t, t]: the right edge of the central window whose quantization into num_quantized_bins bins
diverges least (Kullback-Leibler, after smoothing) from the histogram with its outliers folded in;
outputs the threshold and that divergence, each of shape (1,). Forward only.)")
    .set_params<CalibrateEntropyParam>()
    .set_arguments({"hist", "hist_edges"})
    .add_argument_doc("hist", "Bin counts (float32), an odd number of bins.")
    .add_argument_doc("hist_edges", "The bins' edges (float32), one more than the bins.")
    .set_outputs({"threshold", "divergence"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, TShape({1}));
      ShapeAssignCheck(out, 1, TShape({1}));
    })
    .set_forward(Forward);

}  // namespace symbind
