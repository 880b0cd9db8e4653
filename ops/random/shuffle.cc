// _shuffle (mx.nd.random.shuffle): the array's slices along the first axis in a random order,
// each slice unchanged. Reproducible per seed (OpContext::seed), like the samplers.
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(_shuffle)
    .add_alias("shuffle")
    .describe(R"(Randomly shuffles the array along its first axis: the slices data[i] come out in a
random order (a uniform permutation), the elements inside each slice in theirs. Any dtype; a
0-d or one-slice array comes out as it is. Not differentiable.)")
    .set_arguments({"data"})
    .add_argument_doc("data", "Data to be shuffled.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_infer_type(InferTypeFromData)
    .set_forward([](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      if (req[0] == OpReq::kAdd) throw Error(attrs.op->name + ": adding to the output (req add) is not supported");
      const NDArray& x = in[0];
      const int64_t slices = x.shape().ndim() > 0 ? x.shape()[0] : 1;
      const size_t slice_bytes = slices > 0 ? x.bytes() / static_cast<size_t>(slices) : 0;
      // Fisher-Yates from the last slice down: slice i takes the place drawn from [0, i].
      std::vector<int64_t> order(static_cast<size_t>(slices));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::mt19937_64 engine(ctx.seed);
      for (int64_t i = slices - 1; i > 0; --i)
        std::swap(order[static_cast<size_t>(i)],
                  order[static_cast<size_t>(std::uniform_int_distribution<int64_t>(0, i)(engine))]);
      // In place (output over input) reads from a copy.
      const bool in_place = out[0].raw_data() == x.raw_data();
      const NDArray source = in_place ? x.Copy() : x;
      const char* src = static_cast<const char*>(source.raw_data());
      char* dst = static_cast<char*>(out[0].raw_data());
      for (int64_t i = 0; i < slices; ++i)
        std::memcpy(dst + static_cast<size_t>(i) * slice_bytes,
                    src + static_cast<size_t>(order[static_cast<size_t>(i)]) * slice_bytes, slice_bytes);
    });

}  // namespace symbind
