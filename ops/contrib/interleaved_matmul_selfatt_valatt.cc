// _contrib_interleaved_matmul_selfatt_valatt: self-attention's weighted values, each head's
// attention maps times its values taken from the interleaved q, k, v projection.
#include <symbind/ops/contrib/interleaved_attention.h>

namespace symbind {

namespace {
using namespace attention;
// Each head's v: slice 2 of its three in queries_keys_values.
constexpr Slice kValueSlice{0, 3, 2};
}  // namespace

SYMBIND_REGISTER_OP(_contrib_interleaved_matmul_selfatt_valatt)
    .describe(R"(Weighted values of multi-head self-attention: queries_keys_values is the
(seq_length, batch_size, heads * 3 * head_dim) tensor interleaving each head's q, k and v
(head_dim each), attention the (batch_size * heads, seq_length, seq_length) attention maps
(row b * heads + h for head h of batch item b). For every head, the output holds attention
times the head's values, heads side by side again: (seq_length, batch_size, heads * head_dim),
what batch_dot(attention, v) over the split heads, transposed back and reshaped, gives. Computes in
float32, as MXNet's CPU kernels (other floating dtypes through float32 copies).)")
    .set_params<InterleavedParam>()
    .set_arguments({"queries_keys_values", "attention"})
    .add_argument_doc("queries_keys_values", "Queries, keys and values interleaved")
    .add_argument_doc("attention", "Attention maps")
    .set_infer_shape(WeightedShape(kValueSlice, /*self=*/true))
    .set_mac_count(WeightedMacs)
    .set_forward(WeightedForward(kValueSlice))
    .set_backward(WeightedBackward(kValueSlice));

}  // namespace symbind
