// The blocked weight gradient (BlockedBackwardWeight in conv.h): dw (out_c x kdim) = the sum over
// images and output positions of dy times the im2col columns, in tasks of (chunk of images,
// block of input channels). A task walks its images' positions in slices; per slice it writes
// the im2col rows of its channels only (a buffer that stays in cache) and accumulates its block
// of dw with GemmPackedTallBt, which broadcasts the im2col rows where they lie, against the
// slice of dy packed for tall tiles (once for all blocks). The columns are written once and never re-packed: copying them into GEMM
// panels a second time is what made the packed weight gradient lose at 14x14 and larger.
#include <algorithm>
#include <memory>
#include <vector>

#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
// How the work is cut; a function of the problem only, so the sums are the same for any
// thread count.
struct BlockedWeightPlan {
  int64_t channels_per_block, blocks;
  int64_t images_per_chunk, chunks;
  // A slice: `images_per_slice` whole images, or (when one image has more positions than a
  // slice holds) `rows_per_slice` output rows (od, oh) of one image.
  int64_t images_per_slice, rows_per_slice, slice_capacity;
};

BlockedWeightPlan PlanBlockedWeight(const ConvDims& n, const ConvGeom& g) {
  // im2col rows per block: enough that tiles of 12 columns are mostly full and dy's packing is
  // shared by many columns, few enough that a slice of them stays in L2.
  constexpr int64_t kBlockRows = 192;
  // A slice's im2col rows plus its packed dy: ~768 KB (L2 is 1 MB here, 256 KB - 2 MB elsewhere).
  constexpr int64_t kSliceFloats = 3 << 16;
  constexpr int64_t kMinSlice = 128, kMaxSlice = 2048;
  // Tasks wanted for two to four threads and even shares; chunks of images add partial sums.
  constexpr int64_t kTasks = 16, kMaxChunks = 8, kPartialBudget = int64_t{1} << 24;
  BlockedWeightPlan p{};
  const int64_t ks = g.k_size(), osize = g.out_size(), OW = g.out[2], rows = g.out[0] * g.out[1];
  const int64_t wanted_blocks = std::max<int64_t>(1, (n.in_c * ks + kBlockRows - 1) / kBlockRows);
  p.channels_per_block = (n.in_c + wanted_blocks - 1) / wanted_blocks;
  p.blocks = (n.in_c + p.channels_per_block - 1) / p.channels_per_block;
  const int64_t wsize = n.out_c * n.in_c * ks;
  const int64_t chunks = std::clamp<int64_t>((kTasks + p.blocks - 1) / p.blocks, 1,
                                             std::min({n.batch, kMaxChunks, std::max<int64_t>(1, kPartialBudget / wsize)}));
  p.images_per_chunk = (n.batch + chunks - 1) / chunks;
  p.chunks = (n.batch + p.images_per_chunk - 1) / p.images_per_chunk;
  const int64_t slice =
      std::clamp<int64_t>(kSliceFloats / (p.channels_per_block * ks + n.out_c), kMinSlice, kMaxSlice);
  if (osize >= slice) {  // an image's rows in even slices of at most `slice` positions
    p.images_per_slice = 1;
    const int64_t most_rows = std::max<int64_t>(1, slice / OW), slices = (rows + most_rows - 1) / most_rows;
    p.rows_per_slice = (rows + slices - 1) / slices;
  } else {
    p.images_per_slice = std::min(p.images_per_chunk, slice / osize);
    p.rows_per_slice = rows;
  }
  p.slice_capacity = p.images_per_slice * p.rows_per_slice * OW;
  return p;
}
}  // namespace

bool BlockedBackwardWeightApplies(const ConvDims& n, const ConvGeom& g) {
  if (n.groups != 1 || n.batch <= 0 || g.out_size() <= 0 || n.in_c <= 0 || n.out_c <= 0) return false;
  // Faster than the reference on ResNet's layers (most on 7x7 outputs), slower where tall
  // tiles pad the filters (LeNet's 20 and 50 to 32 and 64 rows), which TallTilesFit turns away.
  // Its only parallelism is its tasks (the reference's GEMM splits one image's product), so it
  // needs a few of them: not one image with few channels (FCN's first layers).
  constexpr int64_t kMinTasks = 4;
  const BlockedWeightPlan p = PlanBlockedWeight(n, g);
  return p.chunks * p.blocks >= kMinTasks &&
         TallTilesFit(n.out_c, n.in_c * g.k_size(), n.batch * g.out_size());
}

void BlockedBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n, const ConvGeom& g,
                           OpReq req) {
  if (req == OpReq::kNull) return;
  const BlockedWeightPlan p = PlanBlockedWeight(n, g);
  const int64_t ks = g.k_size(), kdim = n.in_c * ks, wsize = n.out_c * kdim;
  const int64_t isize = g.in_size(), osize = g.out_size(), OW = g.out[2], rows = g.out[0] * g.out[1];
  // The slices of every chunk, in order, and dy's positions of each packed for tall tiles:
  // all of them up front when there are several blocks of channels (each multiplies the same
  // packed slices), else each as its task reaches it (no copy of all of dy in memory).
  struct Slice {
    int64_t i0, i1, r0, r1;
  };
  std::vector<Slice> slices;
  std::vector<size_t> first_slice;  // of each chunk, and the end
  for (int64_t chunk = 0; chunk < p.chunks; ++chunk) {
    first_slice.push_back(slices.size());
    const int64_t i_end = std::min(n.batch, (chunk + 1) * p.images_per_chunk);
    for (int64_t i0 = chunk * p.images_per_chunk; i0 < i_end; i0 += p.images_per_slice)
      for (int64_t r0 = 0; r0 < rows; r0 += p.rows_per_slice)
        slices.push_back({i0, std::min(i_end, i0 + p.images_per_slice), r0, std::min(rows, r0 + p.rows_per_slice)});
  }
  first_slice.push_back(slices.size());
  auto pack = [&](const Slice& sl) {
    const int64_t ncols = (sl.i1 - sl.i0) * (sl.r1 - sl.r0) * OW;
    if (sl.i1 - sl.i0 == 1)
      return std::make_unique<PackedGemmA>(dy + sl.i0 * n.out_c * osize + sl.r0 * OW, n.out_c, ncols, osize,
                                           GemmTiling::kTall);
    // Whole images side by side: one row-major out_c x ncols matrix.
    std::vector<float> gathered(static_cast<size_t>(n.out_c * ncols));
    for (int64_t i = sl.i0; i < sl.i1; ++i)
      for (int64_t f = 0; f < n.out_c; ++f)
        std::copy(dy + (i * n.out_c + f) * osize, dy + (i * n.out_c + f + 1) * osize,
                  gathered.data() + f * ncols + (i - sl.i0) * osize);
    return std::make_unique<PackedGemmA>(gathered.data(), n.out_c, ncols, ncols, GemmTiling::kTall);
  };
  std::vector<std::unique_ptr<PackedGemmA>> packed(p.blocks > 1 ? slices.size() : 0);
  ParallelFor(static_cast<int64_t>(packed.size()), 1, [&](int64_t s0, int64_t s1) {
    for (int64_t si = s0; si < s1; ++si) packed[static_cast<size_t>(si)] = pack(slices[static_cast<size_t>(si)]);
  });
  // One chunk writes (or adds into) dw itself; several write partials summed in chunk order.
  const bool direct = p.chunks == 1;
  std::vector<float> partial(static_cast<size_t>(direct ? 0 : p.chunks * wsize));
  ParallelFor(p.chunks * p.blocks, 1, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> col;  // reused across calls (tasks never nest in one another)
    col.resize(static_cast<size_t>(p.channels_per_block * ks * p.slice_capacity));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t chunk = t / p.blocks, block = t % p.blocks;
      const int64_t c0 = block * p.channels_per_block, c1 = std::min(n.in_c, c0 + p.channels_per_block);
      float* c = (direct ? dw : partial.data() + chunk * wsize) + c0 * ks;
      bool accumulate = direct && req == OpReq::kAdd;
      for (size_t si = first_slice[static_cast<size_t>(chunk)]; si < first_slice[static_cast<size_t>(chunk) + 1]; ++si) {
        const Slice& sl = slices[si];
        const int64_t per_image = (sl.r1 - sl.r0) * OW;
        for (int64_t i = sl.i0; i < sl.i1; ++i)
          Im2Col(x + i * n.in_c * isize, g, c0, c1, sl.r0, sl.r1, p.slice_capacity, col.data() + (i - sl.i0) * per_image);
        const std::unique_ptr<PackedGemmA> own = packed.empty() ? pack(sl) : nullptr;
        GemmPackedTallBt(own ? *own : *packed[si], (c1 - c0) * ks, col.data(), p.slice_capacity, c, kdim, accumulate);
        accumulate = true;
      }
    }
  });
  if (direct) return;
  MapWithReq(dw, wsize, req, [&](int64_t j) {
    float s = 0.0f;
    for (int64_t ch = 0; ch < p.chunks; ++ch) s += partial[static_cast<size_t>(ch * wsize + j)];
    return s;
  });
}

}  // namespace conv
}  // namespace symbind
