// _contrib_interleaved_matmul_selfatt_qk: self-attention scores from one projection holding each
// head's queries, keys and values side by side: Q K^T / sqrt(head_dim) per head.
#include <symbind/ops/contrib/interleaved_attention.h>

namespace symbind {

namespace {
using namespace attention;
// Each head's q and k: slices 0 and 1 of its three in queries_keys_values.
constexpr Slice kQuerySlice{0, 3, 0}, kKeySlice{0, 3, 1};
}  // namespace

SYMBIND_REGISTER_OP(_contrib_interleaved_matmul_selfatt_qk)
    .describe(R"(Self-attention scores of multi-head attention, from one tensor interleaving the
projections of queries, keys and values: queries_keys_values is (seq_length, batch_size,
heads * 3 * head_dim), where each head's q, k and v (head_dim each) sit side by side. The
output, (batch_size * heads, seq_length, seq_length), holds for head h of batch item b (row
b * heads + h) the products q_i . k_j / sqrt(head_dim) of every query i with every key j: what
splitting the heads out with reshape and transpose, scaling the queries with
_contrib_div_sqrt_dim and batch_dot(q, k, transpose_b=True) give. Computes in
float32, as MXNet's CPU kernels (other floating dtypes through float32 copies).)")
    .set_params<InterleavedParam>()
    .set_arguments({"queries_keys_values"})
    .add_argument_doc("queries_keys_values", "Interleaved queries, keys and values")
    .set_infer_shape(ScoresShape(kQuerySlice, kKeySlice))
    .set_mac_count(ScoresMacs(kQuerySlice))
    .set_forward(ScoresForward(kQuerySlice, kKeySlice))
    .set_backward(ScoresBackward(kQuerySlice, kKeySlice));

}  // namespace symbind
