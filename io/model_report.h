// Human- and machine-readable descriptions of model files, as the `symbind` tool prints them.
// Each function writes to a stream so that tools and tests share one implementation.
#pragma once
#include <map>
#include <ostream>
#include <string>
#include <utility>

#include <symbind/core/symbol.h>

#include "ndarray_file.h"

namespace symbind {

// "(d0,d1,...)"; a scalar is "()", an unknown rank "?" and unknown dims "?".
std::string ShapeText(const TShape& s);

// Parses "NAME=D0,D1,..." (the right side in any TShape::Parse spelling). Throws ParamError.
std::pair<std::string, TShape> ParseShapeSpec(const std::string& spec);

// One line per array, "<name> <dtype> (<dims>)" ("[i]" for unnamed arrays, "<name> none"
// for none arrays), then "<N> arrays, <M> values, format v0[,v1...]" (the formats of
// file.formats, or `format` when given).
void PrintParamsListing(const NDArrayFile& file, std::ostream& os, const std::string& format = "");

// "arg <name> (<dims>)", "aux <name> (<dims>)", "out <name> (<dims>)" in MXNet order. Throws
// ShapeError when a shape cannot be inferred.
void PrintShapes(const Symbol& symbol, const std::map<std::string, TShape>& known,
                 std::ostream& os);

// A table in the spirit of mx.viz.print_summary: layer, output shape, parameter count and
// inputs per node, then total parameters and multiply-adds (the sum of each op's mac_count,
// naming the ops counted). Shapes that cannot be inferred print as "?".
void PrintSummary(const Symbol& symbol, const std::map<std::string, TShape>& known,
                  std::ostream& os);

// Graphviz DOT of the graph (weights hidden as in mx.viz.plot_network), edges labelled with
// shapes when they can be inferred.
void WriteDot(const Symbol& symbol, const std::map<std::string, TShape>& known,
              std::ostream& os);

}  // namespace symbind
