// An SSD-style head loaded from MXNet JSON (MultiBoxPrior -> MultiBoxDetection -> box_nms, the
// attribute strings as MXNet writes them) gives what the ops give one by one, and survives a
// save/load round trip.
#include "op_test_util.h"

#include <symbind/io/symbol_json.h>

using namespace symbind;
using namespace symbind::test;

namespace {
const char* kSsdHead = R"JSON({
  "nodes": [
    {"op": "null", "name": "feat", "inputs": []},
    {"op": "_contrib_MultiBoxPrior", "name": "anchors",
     "attrs": {"clip": "False", "offsets": "(0.5, 0.5)", "ratios": "(1, 2, 0.5)", "sizes": "(0.3, 0.5)",
               "steps": "(-1.0, -1.0)"}, "inputs": [[0, 0, 0]]},
    {"op": "null", "name": "cls_prob", "inputs": []},
    {"op": "null", "name": "loc_pred", "inputs": []},
    {"op": "_contrib_MultiBoxDetection", "name": "detection",
     "attrs": {"clip": "True", "force_suppress": "False", "nms_threshold": "0.45", "nms_topk": "400",
               "threshold": "0.01", "variances": "(0.1, 0.1, 0.2, 0.2)"},
     "inputs": [[2, 0, 0], [3, 0, 0], [1, 0, 0]]},
    {"op": "_contrib_box_nms", "name": "nms",
     "attrs": {"coord_start": "2", "force_suppress": "True", "id_index": "0", "overlap_thresh": "0.3",
               "score_index": "1", "topk": "20", "valid_thresh": "0.2"},
     "inputs": [[4, 0, 0]]}
  ],
  "arg_nodes": [0, 2, 3],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 7],
  "heads": [[5, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
})JSON";
}  // namespace

TEST_CASE("Detection ops: an SSD head from MXNet JSON equals the ops one by one",
          "[ops][MultiBoxDetection][box_nms][MultiBoxPrior]") {
  NDArray feat = RandomArray(TShape({1, 8, 4, 4}), 1);
  NDArray cls = RandomArray(TShape({1, 3, 64}), 2, 0.0f, 1.0f);
  NDArray loc = RandomArray(TShape({1, 256}), 3, -1.0f, 1.0f);
  NDArray anchors = RunForward("_contrib_MultiBoxPrior",
                               {{"sizes", "(0.3, 0.5)"}, {"ratios", "(1, 2, 0.5)"}}, {{"data", feat}});
  NDArray det = RunForward("_contrib_MultiBoxDetection", {{"nms_threshold", "0.45"}, {"nms_topk", "400"}},
                           {{"cls_prob", cls}, {"loc_pred", loc}, {"anchor", anchors}});
  NDArray want = RunForward("_contrib_box_nms",
                            {{"force_suppress", "True"}, {"id_index", "0"}, {"overlap_thresh", "0.3"},
                             {"topk", "20"}, {"valid_thresh", "0.2"}},
                            {{"data", det}});
  Symbol head = LoadSymbolJSON(kSsdHead);
  REQUIRE(head.ListOutputs() == std::vector<std::string>{"nms_output0"});
  for (const Symbol& sym : {head, LoadSymbolJSON(SaveSymbolJSON(head))}) {
    auto exec = SimpleBind(sym, Context::CPU(), {{"feat", feat}, {"cls_prob", cls}, {"loc_pred", loc}});
    exec->Forward(false);
    REQUIRE(exec->outputs()[0].shape() == TShape({1, 64, 6}));
    RequireClose(exec->outputs()[0], want, 0.0f, 0.0f, "SSD head");
  }
  // Some detections survive and some rows are filler.
  int kept = 0;
  for (int64_t r = 0; r < 64; ++r) kept += want.At({0, r, 0}) >= 0;
  REQUIRE(kept > 0);
  REQUIRE(kept < 64);
}
