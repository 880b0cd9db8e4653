// Correlation (FlowNet's correlation layer): for each position of data1 (every stride1-th, past
// the border) and each displacement of data2 within max_displacement (every stride2-th), the
// mean over a kernel_size window and the channels of data1 * data2 (is_multiply) or of
// |data1 - data2|, both zero-padded by pad_size. Two hidden outputs hold the padded inputs
// channels-last, as MXNet's do. Forward and backward in the inputs' dtype (float16 through
// float32).
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct CorrelationParam : Parameter<CorrelationParam> {
  int kernel_size, max_displacement, stride1, stride2, pad_size;
  bool is_multiply;
  static void Declare(ParamDeclarer<CorrelationParam>& d) {
    d.field("kernel_size", &CorrelationParam::kernel_size).set_default(1).lower_bound(1)
        .require([](const int& k) { return k % 2 == 1; }, "an odd number")
        .describe("kernel size for Correlation must be an odd number");
    d.field("max_displacement", &CorrelationParam::max_displacement).set_default(1).lower_bound(0)
        .describe("Max displacement of Correlation ");
    d.field("stride1", &CorrelationParam::stride1).set_default(1).lower_bound(1)
        .describe("stride1 quantize data1 globally");
    d.field("stride2", &CorrelationParam::stride2).set_default(1).lower_bound(1)
        .describe("stride2 quantize data2 within the neighborhood centered around data1");
    d.field("pad_size", &CorrelationParam::pad_size).set_default(0).lower_bound(0).describe("pad for Correlation");
    d.field("is_multiply", &CorrelationParam::is_multiply).set_default(true)
        .describe("operation type is either multiplication or subduction");
  }
};

// The output geometry for inputs (n, c, h, w).
struct CorrGeom {
  int64_t n, c, h, w, ph, pw, top_h, top_w, grid_radius, grid_width;
  CorrGeom(const TShape& s, const CorrelationParam& p) : n(s[0]), c(s[1]), h(s[2]), w(s[3]) {
    ph = h + 2 * p.pad_size;
    pw = w + 2 * p.pad_size;
    const int64_t border = p.max_displacement + (p.kernel_size - 1) / 2;
    // MXNet rounds up: the last window may reach past the padding, where values are zero.
    top_h = (ph - 2 * border + p.stride1 - 1) / p.stride1;
    top_w = (pw - 2 * border + p.stride1 - 1) / p.stride1;
    grid_radius = p.max_displacement / p.stride2;
    grid_width = 2 * grid_radius + 1;
  }
  int64_t channels() const { return grid_width * grid_width; }
};

void InferCorrelation(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(in, 1, (*in)[0]);
  ShapeAssignCheck(in, 0, (*in)[1]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4) throw ShapeError(StrCat("Correlation: data must be 4-D (N, C, H, W), got ", d));
  if (!d.is_known()) return;
  const CorrGeom g(d, attrs.param<CorrelationParam>());
  if (g.top_h < 1 || g.top_w < 1)
    throw ShapeError(StrCat("Correlation: the neighborhood and kernel do not fit in the padded input of ", d));
  ShapeAssignCheck(out, 0, TShape({g.n, g.channels(), g.top_h, g.top_w}));
  ShapeAssignCheck(out, 1, TShape({g.n, g.ph, g.pw, g.c}));
  ShapeAssignCheck(out, 2, TShape({g.n, g.ph, g.pw, g.c}));
}

// Calls fn(out_index, offset1, offset2) for each product term: the flat output element and the
// flat input elements of data1 and data2 it pairs (-1: in the zero padding), for images [b, e).
template <typename F>
void ForEachPair(const CorrGeom& g, const CorrelationParam& p, int64_t b, int64_t e, const F& fn) {
  for (int64_t in = b; in < e; ++in)
    for (int64_t tc = 0; tc < g.channels(); ++tc) {
      const int64_t dx = (tc % g.grid_width - g.grid_radius) * p.stride2;
      const int64_t dy = (tc / g.grid_width - g.grid_radius) * p.stride2;
      for (int64_t i = 0; i < g.top_h; ++i)
        for (int64_t j = 0; j < g.top_w; ++j) {
          const int64_t o = ((in * g.channels() + tc) * g.top_h + i) * g.top_w + j;
          const int64_t y1 = i * p.stride1 + p.max_displacement - p.pad_size;
          const int64_t x1 = j * p.stride1 + p.max_displacement - p.pad_size;
          for (int64_t ky = 0; ky < p.kernel_size; ++ky)
            for (int64_t kx = 0; kx < p.kernel_size; ++kx) {
              const int64_t ya = y1 + ky, xa = x1 + kx, yb = ya + dy, xb = xa + dx;
              const bool in_a = ya >= 0 && ya < g.h && xa >= 0 && xa < g.w;
              const bool in_b = yb >= 0 && yb < g.h && xb >= 0 && xb < g.w;
              for (int64_t ch = 0; ch < g.c; ++ch) {
                const int64_t base = (in * g.c + ch) * g.h;
                fn(o, in_a ? (base + ya) * g.w + xa : -1, in_b ? (base + yb) * g.w + xb : -1);
              }
            }
        }
    }
}

SYMBIND_REGISTER_OP(Correlation)
    .describe("Applies correlation to inputs: compares patches of data1 with patches of data2 displaced by up "
              "to max_displacement, as in FlowNet; each output channel is one displacement.")
    .set_params<CorrelationParam>()
    .set_arguments({"data1", "data2"})
    .add_argument_doc("data1", "Input data1 to the correlation.")
    .add_argument_doc("data2", "Input data2 to the correlation.")
    .set_outputs({"output", "tmp1", "tmp2"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferCorrelation)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<CorrelationParam>();
      const CorrGeom g(in[0].shape(), p);
      ComputeInDType("Correlation", in, req, out, [&](auto tag, const auto& in, const auto& req, const auto& out) {
        using T = decltype(tag);
        const T *a = in[0].template data<T>(), *b = in[1].template data<T>();
        std::vector<double> sum(static_cast<size_t>(out[0].Size()), 0.0);
        ParallelFor(g.n, 1, [&](int64_t b0, int64_t e0) {
          ForEachPair(g, p, b0, e0, [&](int64_t o, int64_t ia, int64_t ib) {
            const double va = ia < 0 ? 0.0 : a[ia], vb = ib < 0 ? 0.0 : b[ib];
            sum[o] += p.is_multiply ? va * vb : std::fabs(va - vb);
          });
        });
        const double norm = 1.0 / static_cast<double>(p.kernel_size * p.kernel_size * g.c);
        MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) { return static_cast<T>(sum[i] * norm); });
        // The hidden outputs: each input zero-padded, channels last.
        for (int k = 0; k < 2; ++k) {
          const T* src = k == 0 ? a : b;
          MapWithReq(out[1 + k].template data<T>(), out[1 + k].Size(), req[1 + k], [&](int64_t i) {
            const int64_t ch = i % g.c, x = (i / g.c) % g.pw - p.pad_size, y = (i / (g.c * g.pw)) % g.ph - p.pad_size;
            const int64_t in = i / (g.c * g.pw * g.ph);
            return y >= 0 && y < g.h && x >= 0 && x < g.w ? src[((in * g.c + ch) * g.h + y) * g.w + x] : T(0);
          });
        }
      });
    })
    // d/d data1 of data1 * data2 is data2; of |data1 - data2| it is sign(data1 - data2) (+1 at ties,
    // as MXNet); data2's are the mirror images.
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
      const auto& p = attrs.param<CorrelationParam>();
      const CorrGeom g(args.inputs[0].shape(), p);
      ComputeInDType("Correlation", {args.inputs[0], args.inputs[1], args.out_grads[0]}, {args.req[0], args.req[1]},
                     {args.in_grads[0], args.in_grads[1]},
                     [&](auto tag, const auto& in, const auto& req, const auto& out) {
        using T = decltype(tag);
        const T *a = in[0].template data<T>(), *b = in[1].template data<T>(), *gy = in[2].template data<T>();
        const double norm = 1.0 / static_cast<double>(p.kernel_size * p.kernel_size * g.c);
        std::vector<double> ga(static_cast<size_t>(in[0].Size()), 0.0), gb(ga.size(), 0.0);
        ParallelFor(g.n, 1, [&](int64_t b0, int64_t e0) {
          ForEachPair(g, p, b0, e0, [&](int64_t o, int64_t ia, int64_t ib) {
            const double va = ia < 0 ? 0.0 : a[ia], vb = ib < 0 ? 0.0 : b[ib], go = gy[o] * norm;
            const double sa = p.is_multiply ? vb : (va >= vb ? 1.0 : -1.0);
            const double sb = p.is_multiply ? va : -sa;
            if (ia >= 0) ga[ia] += go * sa;
            if (ib >= 0) gb[ib] += go * sb;
          });
        });
        for (int k = 0; k < 2; ++k) {
          if (req[k] == OpReq::kNull) continue;
          const std::vector<double>& v = k == 0 ? ga : gb;
          MapWithReq(out[k].template data<T>(), out[k].Size(), req[k], [&](int64_t i) { return static_cast<T>(v[i]); });
        }
      });
    });

}  // namespace

}  // namespace symbind
