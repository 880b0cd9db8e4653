// _contrib_bipartite_matching: greedy one-to-one matching of rows and columns of score matrices,
// best score first (an SSD / Faster R-CNN target assigner's anchor matching).
#include <algorithm>
#include <numeric>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct BipartiteMatchingParam : Parameter<BipartiteMatchingParam> {
  bool is_ascend;
  float threshold;
  int64_t topk;
  static void Declare(ParamDeclarer<BipartiteMatchingParam>& d) {
    d.field("is_ascend", &BipartiteMatchingParam::is_ascend).set_default(false)
        .describe("Use ascend order for scores instead of descending. Please set threshold accordingly.");
    d.field("threshold", &BipartiteMatchingParam::threshold)
        .describe("Ignore matching when score < thresh, if is_ascend=false, or ignore score > thresh, if is_ascend=true.");
    d.field("topk", &BipartiteMatchingParam::topk).set_default(-1)
        .describe("Limit the number of matches to topk, set -1 for no limit");
  }
};
}  // namespace

SYMBIND_REGISTER_OP(_contrib_bipartite_matching)
    .add_alias("bipartite_matching")
    .describe(R"(Greedy bipartite matching of each (rows, cols) score matrix of data (shape
(..., rows, cols)): the pairs are visited by score (descending, or ascending with is_ascend; equal
scores in index order), and a pair whose row and column are both free is matched while its score
passes threshold (above it, or below it with is_ascend); the first free pair that does not pass
ends the matching, as does the match after the topk-th (when topk > 0: topk + 1 matches, as MXNet
counts). Outputs: for each row its
matched column, and for each column its matched row, -1 where unmatched (data's dtype).)")
    .set_params<BipartiteMatchingParam>()
    .set_arguments({"data"})
    .add_argument_doc("data", "The input")
    .set_outputs({"row_marker", "col_marker"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (!d.ndim_known()) return;
      if (d.ndim() < 2)
        throw ShapeError(StrCat("_contrib_bipartite_matching: the score matrix must have at least 2 dims, got shape ", d));
      std::vector<int64_t> rows(d.dims().begin(), d.dims().end() - 1), cols = rows;
      cols.back() = d[d.ndim() - 1];
      ShapeAssignCheck(out, 0, TShape(rows));
      ShapeAssignCheck(out, 1, TShape(cols));
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
      InferTypeFromData(a, in, out);
      TypeAssignCheck(out, 1, (*in)[0]);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<BipartiteMatchingParam>();
      const TShape& s = in[0].shape();
      const int64_t rows = s[s.ndim() - 2], cols = s[s.ndim() - 1], per = rows * cols;
      const int64_t batches = per > 0 ? in[0].Size() / per : 0;
      const std::vector<double> scores = ValuesAsDouble(in[0]);
      std::vector<double> row_marker(static_cast<size_t>(batches * rows), -1.0),
          col_marker(static_cast<size_t>(batches * cols), -1.0);
      std::vector<int64_t> order(static_cast<size_t>(per));
      for (int64_t b = 0; b < batches; ++b) {
        const double* score = scores.data() + b * per;
        double* rm = row_marker.data() + b * rows;
        double* cm = col_marker.data() + b * cols;
        std::iota(order.begin(), order.end(), int64_t{0});
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
          return p.is_ascend ? score[x] < score[y] : score[x] > score[y];
        });
        int64_t count = 0;
        for (int64_t k : order) {
          const int64_t r = k / cols, c = k % cols;
          if (rm[r] != -1.0 || cm[c] != -1.0) continue;
          const bool passes = p.is_ascend ? score[k] < p.threshold : score[k] > p.threshold;
          if (!passes) break;
          rm[r] = static_cast<double>(c);
          cm[c] = static_cast<double>(r);
          // As MXNet counts: the match that passes topk is kept, then the matching stops.
          if (p.topk > 0 && ++count > p.topk) break;
        }
      }
      WriteValuesWithReq(row_marker, out[0], req[0]);
      WriteValuesWithReq(col_marker, out[1], req[1]);
    })
    .set_zero_gradient();

}  // namespace symbind
