// _contrib_interleaved_matmul_encdec_qk: encoder-decoder attention scores, the decoder's
// queries against the keys of the interleaved k, v projection: Q K^T / sqrt(head_dim) per head.
#include <symbind/ops/contrib/interleaved_attention.h>

namespace symbind {

namespace {
using namespace attention;
// Each head's q (queries holds nothing else) and k (slice 0 of its two in keys_values).
constexpr Slice kQuerySlice{0, 1, 0}, kKeySlice{1, 2, 0};
}  // namespace

SYMBIND_REGISTER_OP(_contrib_interleaved_matmul_encdec_qk)
    .describe(R"(Encoder-decoder attention scores of multi-head attention: queries is
(query_length, batch_size, heads * head_dim), keys_values the (key_length, batch_size,
heads * 2 * head_dim) tensor interleaving each head's k and v (head_dim each). The output,
(batch_size * heads, query_length, key_length), holds for head h of batch item b (row
b * heads + h) the products q_i . k_j / sqrt(head_dim) of every query i with every key j: what
splitting the heads out, scaling the queries with _contrib_div_sqrt_dim and
batch_dot(q, k, transpose_b=True) give. Computes in
float32, as MXNet's CPU kernels (other floating dtypes through float32 copies).)")
    .set_params<InterleavedParam>()
    .set_arguments({"queries", "keys_values"})
    .add_argument_doc("queries", "Queries")
    .add_argument_doc("keys_values", "Keys and values interleaved")
    .set_infer_shape(ScoresShape(kQuerySlice, kKeySlice))
    .set_mac_count(ScoresMacs(kQuerySlice))
    .set_forward(ScoresForward(kQuerySlice, kKeySlice))
    .set_backward(ScoresBackward(kQuerySlice, kKeySlice));

}  // namespace symbind
