// _fused_quantized_inverted_residual: an int8 graph's inverted residual block (MobileNet v2's)
// as one node: three quantized _sg_mkldnn_conv nodes (a 1x1 expansion, a 3x3 depthwise layer, a
// 1x1 projection, optionally with the block's input as its sum) run a band of output rows at a
// time, so that the expanded levels stay in cache and each thread works on its own rows of the
// image from the block's input to its output. Made by the Predictor's
// fuse_quantized_inverted_residuals rewrite (predict/graph_rewrites.h), not by models.
#include <cstring>
#include <optional>

#include <symbind/ops/kernels/conv_int8.h>
#include <symbind/ops/kernels/conv_inverted_residual.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/subgraph/fused_quantized_inverted_residual.h>

namespace symbind {
namespace subgraph {
namespace {

enum Part { kExpand, kDepthwise, kProject, kParts };
constexpr const char* kPartNames[kParts] = {"expand", "depthwise", "project"};

const Op& SgConv() {
  static const Op& op = OpRegistry::Global().Get("_sg_mkldnn_conv");
  return op;
}

// Where each node's inputs come from: the fused node's input i (i >= 0), or output j of the node
// before (Chained(j): its output, min, max).
constexpr int Chained(int j) { return -1 - j; }
struct Layout {
  std::vector<int> source[kParts];
  std::vector<std::string> names;  // the fused node's inputs
};
struct QuantizedBlockParam;
Layout LayoutOf(const QuantizedBlockParam& p);

// The three nodes' parameters, given as "expand:<param>", "depthwise:<param>", "project:<param>".
struct QuantizedBlockParam : Parameter<QuantizedBlockParam> {
  NodeAttrs node[kParts];
  Layout layout;  // made once, at parse
  static void Declare(ParamDeclarer<QuantizedBlockParam>&) {}
  static QuantizedBlockParam Parse(const KwArgs& kwargs) {
    QuantizedBlockParam p;
    for (int k = 0; k < kParts; ++k) {
      p.node[k].op = &SgConv();
      p.node[k].name = kPartNames[k];
    }
    for (const auto& [key, value] : kwargs) {
      const size_t colon = key.find(':');
      int part = -1;
      for (int k = 0; k < kParts && colon != std::string::npos; ++k)
        if (key.compare(0, colon, kPartNames[k]) == 0) part = k;
      if (part < 0)
        throw ParamError("_fused_quantized_inverted_residual: parameter '" + key +
                         "' is not expand:, depthwise: or project: followed by a _sg_mkldnn_conv parameter");
      p.node[part].dict[key.substr(colon + 1)] = value;
    }
    for (int k = 0; k < kParts; ++k) {
      SgConv().ParseAttrs(&p.node[k]);
      const SgConvParam& sp = p.node[k].param<SgConvParam>();
      if (!sp.quantized || sp.with_bn || (k != kProject && sp.with_sum))
        throw ParamError(std::string("_fused_quantized_inverted_residual: the ") + kPartNames[k] +
                         " node must be a quantized _sg_mkldnn_conv without BatchNorm" +
                         (k == kProject ? "" : " or sum"));
    }
    p.layout = LayoutOf(p);
    return p;
  }
  const SgConvParam& part(int k) const { return node[k].param<SgConvParam>(); }
};

Layout LayoutOf(const QuantizedBlockParam& p) {
  Layout l;
  for (int k = 0; k < kParts; ++k) {
    const SgConvSlots s(p.part(k));
    for (size_t i = 0; i < s.names.size(); ++i) {
      const bool chained = k > kExpand && (i == 0 || i == s.data_min || i == s.data_min + 1);
      l.source[k].push_back(chained ? Chained(i == 0 ? 0 : i == s.data_min ? 1 : 2) : static_cast<int>(l.names.size()));
      if (!chained) l.names.push_back(k == kExpand ? s.names[i] : std::string(kPartNames[k]) + "_" + s.names[i]);
    }
  }
  return l;
}

// Node k's inputs: the fused node's, and for the chained ones `prev` (output, min, max of the
// node before).
template <typename T>
std::vector<T> PartInputs(const QuantizedBlockParam& p, int k, const std::vector<T>& in, const T (&prev)[3]) {
  const std::vector<int>& source = p.layout.source[k];
  std::vector<T> sub(source.size());
  for (size_t i = 0; i < sub.size(); ++i)  // Chained(j) is -1 - j
    sub[i] = source[i] >= 0 ? in[static_cast<size_t>(source[i])] : prev[-1 - source[i]];
  return sub;
}
// Writes node k's inputs back to the fused node's (inference fills both ways).
template <typename T>
void StoreInputs(const QuantizedBlockParam& p, int k, const std::vector<T>& sub, std::vector<T>* in) {
  const std::vector<int>& source = p.layout.source[k];
  for (size_t i = 0; i < sub.size(); ++i)
    if (source[i] >= 0) (*in)[static_cast<size_t>(source[i])] = sub[i];
}

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<QuantizedBlockParam>();
  std::vector<TShape> prev = {TShape(), TShape(), TShape()};
  for (int k = 0; k < kParts; ++k) {
    const TShape chained[3] = {prev[0], prev[1], prev[2]};
    std::vector<TShape> sub = PartInputs(p, k, *in, chained);
    std::vector<TShape> sub_out = k == kProject ? *out : std::vector<TShape>(3);
    SgConv().infer_shape(p.node[k], &sub, &sub_out);
    StoreInputs(p, k, sub, in);
    if (k == kProject) *out = sub_out;
    prev = sub_out;
  }
}

void InferType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = attrs.param<QuantizedBlockParam>();
  std::vector<int> prev = {-1, -1, -1};
  for (int k = 0; k < kParts; ++k) {
    const int chained[3] = {prev[0], prev[1], prev[2]};
    std::vector<int> sub = PartInputs(p, k, *in, chained);
    std::vector<int> sub_out = k == kProject ? *out : std::vector<int>(3, -1);
    SgConv().infer_type(p.node[k], &sub, &sub_out);
    StoreInputs(p, k, sub, in);
    if (k == kProject) *out = sub_out;
    prev = sub_out;
  }
}

// Each node's derived forms (int8 weights, packed filters), kept across calls.
struct BlockState : OpState {
  SgWeightsState part[kParts];
};

// The three nodes one after another, as the unfused graph runs them.
void ForwardUnfused(const OpContext& ctx, const QuantizedBlockParam& p, BlockState* state,
                    const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  std::vector<TShape> in_shapes, out_shapes(out.size());
  std::vector<int> in_types, out_types(out.size(), -1);
  for (const NDArray& a : in) {
    in_shapes.push_back(a.shape());
    in_types.push_back(static_cast<int>(a.dtype()));
  }
  NDArray prev[3];
  for (int k = 0; k < kParts; ++k) {
    std::vector<NDArray> sub = PartInputs(p, k, in, prev);
    std::vector<NDArray> sub_out = out;
    if (k != kProject) {
      std::vector<TShape> shapes(sub.size());
      std::vector<int> types(sub.size());
      for (size_t i = 0; i < sub.size(); ++i) {
        shapes[i] = sub[i].shape();
        types[i] = static_cast<int>(sub[i].dtype());
      }
      std::vector<TShape> o_shapes(3);
      std::vector<int> o_types(3, -1);
      SgConv().infer_shape(p.node[k], &shapes, &o_shapes);
      SgConv().infer_type(p.node[k], &types, &o_types);
      for (int o = 0; o < 3; ++o) sub_out[size_t(o)] = NDArray(o_shapes[size_t(o)], static_cast<DType>(o_types[size_t(o)]));
    }
    OpContext part_ctx = ctx;
    part_ctx.state = state ? &state->part[k] : nullptr;
    SgConv().forward(part_ctx, p.node[k], sub, std::vector<OpReq>(3, OpReq::kWrite), sub_out);
    for (int o = 0; o < 3; ++o) prev[o] = sub_out[size_t(o)];
  }
}

// Every value of 2-D tuple t is v (an empty one: its default, `unset`).
bool All(const TShape& t, int64_t v, int64_t unset) {
  if (t.ndim() <= 0) return v == unset;
  return t.ndim() == 2 && t[0] == v && t[1] == v;
}

}  // namespace

bool FormsQuantizedInvertedResidual(const SgConvParam& expand, const SgConvParam& depthwise,
                                    const SgConvParam& project) {
  if (!conv::FastPathsEnabled() || !ActiveVnniVbmi()) return false;
  for (const SgConvParam* n : {&expand, &depthwise, &project})
    if (!n->quantized || n->with_bn || !n->min_calib_range || !n->max_calib_range) return false;
  if (expand.with_sum || depthwise.with_sum) return false;
  const auto& e = expand.conv.param<ConvolutionParam>();
  const auto& d = depthwise.conv.param<ConvolutionParam>();
  const auto& p = project.conv.param<ConvolutionParam>();
  auto pointwise = [](const ConvolutionParam& c) {
    return All(c.kernel, 1, 0) && All(c.stride, 1, 1) && All(c.pad, 0, 0) && All(c.dilate, 1, 1) && c.num_group == 1;
  };
  const int64_t S = d.stride.ndim() > 0 ? d.stride[0] : 1, P = d.pad.ndim() > 0 ? d.pad[0] : 0;
  return pointwise(e) && pointwise(p) && All(d.kernel, 3, 0) && All(d.dilate, 1, 1) && All(d.stride, S, 1) &&
         All(d.pad, P, 0) && S <= 2 && P <= 1 && d.num_group == d.num_filter && e.num_filter == d.num_filter;
}

namespace {

// The block in bands of output rows (conv::ForEachInvertedResidualBand): each band expands the
// input rows it reads (keeping those the band before expanded), runs the depthwise rows and the
// projection into y, each kernel on the calling thread; for one image, each thread takes one part
// of the rows. Every kernel makes the levels its node would for those rows, so the output is the
// same bits. false, computing nothing, where the block is not in the form it needs.
bool ForwardBands(const QuantizedBlockParam& p, BlockState& state, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  if (!FormsQuantizedInvertedResidual(p.part(kExpand), p.part(kDepthwise), p.part(kProject))) return false;
  const SgConvParam &ep = p.part(kExpand), &dp = p.part(kDepthwise), &pp = p.part(kProject);
  const auto& ec = ep.conv.param<ConvolutionParam>();
  const auto& dc = dp.conv.param<ConvolutionParam>();
  const auto& pc = pp.conv.param<ConvolutionParam>();
  const NDArray& x = in[0];
  const TShape& xs = x.shape();
  const TShape& ys = out[0].shape();
  if (xs.ndim() != 4) return false;
  const int64_t S = dc.stride.ndim() > 0 ? dc.stride[0] : 1, P = dc.pad.ndim() > 0 ? dc.pad[0] : 0;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], hidden = ec.num_filter, F = pc.num_filter;
  const TShape hidden_shape({N, hidden, H, W});
  const int64_t OH = ys[2], OW = ys[3];
  const TShape filtered_shape({N, hidden, OH, OW});
  // The nodes' levels, each for its data's range (the node before's calibrated range).
  const NDArray none[3];
  const size_t data_min = size_t(p.layout.source[kExpand][SgConvSlots(ep).data_min]);
  const auto expand = QuantizedSgConvLevels(p.node[kExpand], &state.part[kExpand], PartInputs(p, kExpand, in, none),
                                            {xs, x.dtype(), quant::RangeValue(in[data_min]),
                                             quant::RangeValue(in[data_min + 1])},
                                            nullptr, hidden_shape);
  if (!expand) return false;
  const auto depthwise = QuantizedSgConvLevels(p.node[kDepthwise], &state.part[kDepthwise],
                                               PartInputs(p, kDepthwise, in, none),
                                               {hidden_shape, expand->out_type, *ep.min_calib_range, *ep.max_calib_range},
                                               nullptr, filtered_shape);
  if (!depthwise) return false;
  std::optional<QuantizedConvInput> sum;
  const SgConvSlots ps(pp);
  const NDArray* sum_array = nullptr;
  if (pp.with_sum) {
    sum_array = &in[size_t(p.layout.source[kProject][ps.sum])];
    sum = QuantizedConvInput{sum_array->shape(), sum_array->dtype(),
                             quant::RangeValue(in[size_t(p.layout.source[kProject][ps.sum_min])]),
                             quant::RangeValue(in[size_t(p.layout.source[kProject][ps.sum_min + 1])])};
  }
  const auto project = QuantizedSgConvLevels(p.node[kProject], &state.part[kProject],
                                             PartInputs(p, kProject, in, none),
                                             {filtered_shape, depthwise->out_type, *dp.min_calib_range, *dp.max_calib_range},
                                             sum ? &*sum : nullptr, ys);
  if (!project) return false;
  const auto usable = [](const SgConvLevels& s) { return !s.forms->packed.empty() && s.forms->packed[0].usable(); };
  if (!usable(*expand) || !usable(*project) || !GemmInt8ReadsQuads(project->forms->packed[0])) return false;

  conv::InvertedResidualDims d{N, C, hidden, F, H, W, 3, S, P, {}, {}, pp.with_sum};
  const conv::InvertedResidualBands plan = conv::PlanInvertedResidualBands(d, false);
  const int64_t R = plan.buffer_rows;
  const size_t x_bytes = DTypeSize(x.dtype()), y_bytes = 1;
  // The depthwise rows go to the projection as channel quads, which its GEMM reads unpacked.
  const int64_t quad_plane = Int8QuadPlaneBytes(plan.band * OW);
  const int8_t* dw_w8 = depthwise->forms->w8.data();
  ParallelFor(N * plan.parts, 1, [&](int64_t t0, int64_t t1) {
    // Per thread, reused across calls (no task of this loop waits inside another's body).
    thread_local std::vector<uint8_t> expanded, filtered;
    thread_local std::vector<int32_t> sums;
    expanded.resize(std::max(expanded.size(), static_cast<size_t>(hidden * R * W)));
    filtered.resize(std::max(filtered.size(), static_cast<size_t>((hidden + 3) / 4 * quad_plane)));
    sums.resize(std::max(sums.size(), static_cast<size_t>(std::max(hidden * R * W, F * plan.band * OW))));
    uint8_t* E = expanded.data();
    uint8_t* D = filtered.data();
    RunSerially([&] {
      for (int64_t t = t0; t < t1; ++t)
        conv::ForEachInvertedResidualBand(d, plan, t, [&](const conv::InvertedResidualBand& b) {
          const uint8_t* xi = static_cast<const uint8_t*>(x.raw_data()) + b.image * C * H * W * x_bytes;
          uint8_t* yi = static_cast<uint8_t*>(out[0].raw_data()) + b.image * F * OH * OW * y_bytes;
          // Rows the band before expanded and this one needs move to the front of each plane.
          if (b.kept > 0 && b.shift > 0)
            for (int64_t c = 0; c < hidden; ++c)
              std::memmove(E + c * R * W, E + c * R * W + b.shift * W, static_cast<size_t>(b.kept * W));
          if (b.hi > b.lo + b.kept) {
            const int64_t n = (b.hi - b.lo - b.kept) * W;
            const quant::Int8Levels levels = expand->At(E + b.kept * W, R * W);
            const uint8_t* from = xi + (b.lo + b.kept) * W * x_bytes;
            if (x.dtype() == DType::kInt8)
              GemmInt8(expand->forms->packed[0], n, reinterpret_cast<const int8_t*>(from), H * W, sums.data(), n, &levels);
            else
              GemmInt8(expand->forms->packed[0], n, from, H * W, sums.data(), n, &levels);
          }
          const int64_t held = std::max(b.kept, b.hi - b.lo), rows = b.o1 - b.o0, columns = rows * OW;
          const quant::DepthwiseBand band{held, W, b.lo + P - b.o0 * S, P, S, rows, OW};
          const quant::Int8Levels dw_levels = depthwise->At(D, 0);
          // FormsQuantizedInvertedResidual checked the CPU the band kernel needs.
          const bool ran = expand->out_type == DType::kInt8
                               ? quant::DepthwiseBand3x3Int8Quads(reinterpret_cast<const int8_t*>(E), R * W, dw_w8,
                                                                  hidden, band, dw_levels, quad_plane)
                               : quant::DepthwiseBand3x3Int8Quads(E, R * W, dw_w8, hidden, band, dw_levels, quad_plane);
          if (!ran) throw Error("_fused_quantized_inverted_residual: the int8 depthwise band kernel did not run");
          const void* sum_at = sum_array ? static_cast<const uint8_t*>(sum_array->raw_data()) +
                                               (b.image * F * OH * OW + b.o0 * OW) * DTypeSize(sum_array->dtype())
                                         : nullptr;
          const quant::Int8Levels p_levels = project->At(yi + b.o0 * OW, OH * OW, sum_at, OH * OW);
          GemmInt8Quads(project->forms->packed[0], columns, D, quad_plane, depthwise->out_type == DType::kInt8,
                        sums.data(), columns, &p_levels);
        });
    });
  });
  quant::SetRange(out[1], out[2], *pp.min_calib_range, *pp.max_calib_range);
  return true;
}

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<QuantizedBlockParam>();
  BlockState* state = ctx.is_train ? nullptr : dynamic_cast<BlockState*>(ctx.state);
  std::optional<BlockState> local;  // a call without node state derives for itself
  BlockState& forms = state ? *state : local.emplace();
  if (ForwardBands(p, forms, in, out)) return;
  ForwardUnfused(ctx, p, state, in, out);
}

}  // namespace
}  // namespace subgraph

SYMBIND_REGISTER_OP(_fused_quantized_inverted_residual)
    .describe(R"(An int8 graph's inverted residual block as one node: three quantized
_sg_mkldnn_conv nodes, a 1x1 expansion, a 3x3 depthwise convolution (stride 1 or 2) reading it and
a 1x1 projection reading that (with its sum input, the block's residual, or none), whose
parameters it holds as "expand:NAME", "depthwise:NAME" and "project:NAME". On CPUs with
AVX512-VNNI and VBMI, and with calibrated outputs the kernels requantize, it runs the block a
band of output rows at a time (the expanded levels stay in cache; for one image each thread
takes its own rows); otherwise the three nodes one after another. The same levels either way.
Inputs: the expansion's, then the depthwise node's and the projection's other than their data
and its range. Made by the Predictor's fuse_quantized_inverted_residuals rewrite. Inference only.)")
    .set_params<subgraph::QuantizedBlockParam>()
    .set_arguments([](const NodeAttrs& a) { return a.param<subgraph::QuantizedBlockParam>().layout.names; })
    .set_outputs(std::vector<std::string>{"output", "output_min", "output_max"})
    .set_infer_shape(subgraph::InferShape)
    .set_infer_type(subgraph::InferType)
    .set_dtype_generic()
    .set_create_state([](const NodeAttrs&, const std::vector<TShape>&, const std::vector<TShape>&) {
      return std::make_unique<subgraph::BlockState>();
    })
    .set_forward(subgraph::Forward);

}  // namespace symbind
