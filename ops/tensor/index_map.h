// Gather ops through an index map: output element k reads source element map.Source(k). One
// mechanism for transpose, slice, slice_axis, slice_like, tile and repeat, forward and backward.
#pragma once
#include <cstdint>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

// A strided view of a source array seen through an output shape: output element with
// multi-index (i_0..i_n-1) reads source element
//   base + sum_d ((i_d / div[d]) % mod[d]) * stride[d]
// which covers transpose (stride permuted), slice (base, stride * step), tile (mod) and
// repeat (div). Strides may be negative.
struct IndexMap {
  TShape out_shape;
  std::vector<int64_t> div, mod, stride;
  int64_t base = 0;

  explicit IndexMap(const TShape& out) : out_shape(out) {
    size_t n = static_cast<size_t>(out.ndim());
    div.assign(n, 1);
    mod.assign(n, 0);  // 0: no modulus
    stride.assign(n, 0);
  }
  int64_t Source(int64_t flat) const {
    int64_t src = base;
    for (int d = out_shape.ndim() - 1; d >= 0; --d) {
      int64_t i = flat % out_shape[d];
      flat /= out_shape[d];
      i /= div[static_cast<size_t>(d)];
      if (mod[static_cast<size_t>(d)] > 0) i %= mod[static_cast<size_t>(d)];
      src += i * stride[static_cast<size_t>(d)];
    }
    return src;
  }
};

// out[k] (per req) = src[map.Source(k)].
template <typename T>
void GatherWithReq(const IndexMap& map, const T* src, T* out, OpReq req) {
  MapWithReq(out, map.out_shape.Size(), req, [&](int64_t k) { return src[map.Source(k)]; });
}

// The gradient of a gather: grad_src[map.Source(k)] += grad_out[k], written or added per req.
// `injective` maps (transpose, slice) scatter in parallel; others (tile, repeat) accumulate
// serially into a buffer so the sum order is fixed.
template <typename T>
void ScatterGradWithReq(const IndexMap& map, const T* grad_out, const NDArray& grad_src, OpReq req, bool injective) {
  if (req == OpReq::kNull) return;
  int64_t n = map.out_shape.Size();
  T* gs = grad_src.data<T>();
  if (injective) {
    ZeroWithReq(grad_src, req);
    ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) gs[map.Source(k)] += grad_out[k];
    });
    return;
  }
  std::vector<T> acc(static_cast<size_t>(grad_src.Size()), T(0));
  for (int64_t k = 0; k < n; ++k) acc[static_cast<size_t>(map.Source(k))] += grad_out[k];
  MapWithReq(gs, grad_src.Size(), req, [&](int64_t i) { return acc[static_cast<size_t>(i)]; });
}

// Forward and backward of a gather op whose index map is make_map(attrs, in_shape, out_shape).
// The forward moves elements of any dtype (register the op set_dtype_generic); the backward
// computes in float32.
template <typename MakeMap>
ForwardFn GatherForward(MakeMap make_map) {
  return [make_map](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    if (req[0] == OpReq::kNull || out[0].Size() == 0) return;
    IndexMap m = make_map(attrs, in[0].shape(), out[0].shape());
    ComputeInDType(attrs.op->name.c_str(), in, req, out,
                   [&](auto tag, const std::vector<NDArray>& x, const std::vector<OpReq>& r,
                       const std::vector<NDArray>& y) {
      using T = decltype(tag);
      GatherWithReq(m, x[0].data<T>(), y[0].data<T>(), r[0]);
    });
  };
}
template <typename MakeMap>
BackwardFn GatherBackward(MakeMap make_map, bool injective) {
  return [make_map, injective](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
    if (a.req[0] == OpReq::kNull) return;
    const TShape& os = a.out_grads[0].shape();
    if (os.Size() == 0) {
      ZeroWithReq(a.in_grads[0], a.req[0]);
      return;
    }
    IndexMap m = make_map(attrs, a.inputs[0].shape(), os);
    // Integer gradients too (MXNet differentiates int32 arrays through slices and indexing).
    SwitchNumericType(a.out_grads[0].dtype(), attrs.op->name.c_str(), [&](auto tag) {
      using T = decltype(tag);
      ScatterGradWithReq(m, a.out_grads[0].data<T>(), a.in_grads[0], a.req[0], injective);
    });
  };
}

}  // namespace symbind
