// _histogram: counts of the input's elements in bins, as numpy.histogram: either bin_cnt equal
// bins over `range`, or the bin edges given as a second input. Every bin is half-open except
// the last, which includes its upper edge; values outside the edges (and NaN) are not counted.
// Outputs: the counts (int64) and the edges (the input's dtype). No gradient, as in MXNet.
#include <algorithm>
#include <optional>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct HistogramParam : Parameter<HistogramParam> {
  std::optional<int> bin_cnt;
  std::optional<std::vector<float>> range;
  static void Declare(ParamDeclarer<HistogramParam>& d) {
    d.field("bin_cnt", &HistogramParam::bin_cnt).set_default(std::nullopt)
        .require([](const std::optional<int>& v) { return !v || *v > 0; }, "positive")
        .describe("Number of bins for uniform case");
    d.field("range", &HistogramParam::range).set_default(std::nullopt)
        .describe("The lower and upper range of the bins. if not provided, range is simply (a.min(), a.max()). "
                  "values outside the range are ignored. the first element of the range must be less than or "
                  "equal to the second. range affects the automatic bin computation as well. while bin width is "
                  "computed to be optimal based on the actual data within range, the bin count will fill the "
                  "entire range including portions containing no data.");
    d.check([](const HistogramParam& p) { return p.bin_cnt.has_value() == p.range.has_value(); },
            "_histogram: bin_cnt and range must both be given or neither", {"bin_cnt", "range"});
    d.check([](const HistogramParam& p) { return !p.range || (p.range->size() == 2 && (*p.range)[0] <= (*p.range)[1]); },
            "_histogram: range must be (min, max) with min <= max", {"range"});
  }
};

void InferHistogramShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<HistogramParam>();
  if (p.bin_cnt) {
    ShapeAssignCheck(out, 0, TShape({*p.bin_cnt}));
    ShapeAssignCheck(out, 1, TShape({*p.bin_cnt + 1}));
    return;
  }
  const TShape& bins = (*in)[1];
  if (!bins.ndim_known()) return;
  if (bins.ndim() != 1 || bins[0] < 2)
    throw ShapeError(StrCat("_histogram: bins must be a 1-D array of at least 2 edges, got ", bins));
  ShapeAssignCheck(out, 0, TShape({bins[0] - 1}));
  ShapeAssignCheck(out, 1, bins);
}

void InferHistogramType(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  TypeAssignCheck(out, 0, static_cast<int>(DType::kInt64));
  TypeAssignCheck(out, 1, (*in)[0]);
  TypeAssignCheck(in, 0, (*out)[1]);
}

// `v` rounded through `t`, as the kernel holds values of the data's dtype.
std::vector<double> InDType(const std::vector<double>& v, DType t) {
  NDArray a(TShape({static_cast<int64_t>(v.size())}), t);
  ConvertElements(v.data(), DType::kFloat64, a.raw_data(), t, v.size());
  return ValuesAsDouble(a);
}

// The bin of x among ascending `edges` (-1: outside).
int64_t BinOf(double x, const std::vector<double>& edges) {
  const int64_t nbins = static_cast<int64_t>(edges.size()) - 1;
  if (!(x >= edges.front() && x <= edges.back())) return -1;
  const int64_t k = std::upper_bound(edges.begin(), edges.end(), x) - edges.begin() - 1;
  return std::min(k, nbins - 1);
}

SYMBIND_REGISTER_OP(_histogram)
    .add_alias("_npi_histogram")
    .describe("This operators implements the histogram function: the counts of `data` in bin_cnt equal bins over "
              "range, or in the bins whose edges are the `bins` input; returns the counts and the bin edges.")
    .set_params<HistogramParam>()
    .set_arguments([](const NodeAttrs& a) {
      return a.param<HistogramParam>().bin_cnt ? std::vector<std::string>{"data"}
                                               : std::vector<std::string>{"data", "bins"};
    })
    .set_outputs({"histogram", "bin_edges"})
    .add_argument_doc("data", "Input ndarray")
    .add_argument_doc("bins", "Input ndarray")
    .set_infer_shape(InferHistogramShape)
    .set_infer_type(InferHistogramType)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<HistogramParam>();
      std::vector<double> edges;
      if (p.bin_cnt) {
        const int n = *p.bin_cnt;
        const double lo = (*p.range)[0], hi = (*p.range)[1];
        for (int i = 0; i <= n; ++i) edges.push_back((hi * i + (n - i) * lo) / n);
        edges = InDType(edges, in[0].dtype());
      } else {
        edges = ValuesAsDouble(in[1]);
        for (size_t i = 1; i < edges.size(); ++i)
          if (!(edges[i - 1] <= edges[i]))
            throw Error(StrCat(InOperator(attrs), ": bins must increase monotonically, but edge ", i, " (",
                               edges[i], ") is below edge ", i - 1, " (", edges[i - 1], ")"));
      }
      std::vector<double> counts(edges.size() - 1, 0.0);
      for (double x : ValuesAsDouble(in[0])) {
        const int64_t k = BinOf(x, edges);
        if (k >= 0) counts[static_cast<size_t>(k)] += 1;
      }
      WriteValuesWithReq(counts, out[0], req[0]);
      WriteValuesWithReq(edges, out[1], req[1]);
    });

}  // namespace

}  // namespace symbind
