// The blocks _fused_quantized_inverted_residual runs as one node, for the graph pass that makes
// it (predict/graph_rewrites.cc) and the op itself:
//
//   if (FormsQuantizedInvertedResidual(expand, depthwise, project)) ... fuse the three nodes
#pragma once
#include <symbind/ops/subgraph/sg_mkldnn_conv.h>

namespace symbind {
namespace subgraph {

// Whether three quantized, calibrated _sg_mkldnn_conv nodes without BatchNorm are an inverted
// residual block whose band path exists on this CPU: a 1x1 expansion, a 3x3 depthwise layer
// (stride 1 or 2, equal padding, undilated) over its output, a 1x1 projection over that (with a
// sum or not; the first two without). Where this is false the block stays three nodes.
bool FormsQuantizedInvertedResidual(const SgConvParam& expand, const SgConvParam& depthwise,
                                    const SgConvParam& project);

}  // namespace subgraph
}  // namespace symbind
