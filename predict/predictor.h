// Inference in a few lines: bind a model once, then feed inputs and read outputs.
//
//   Predictor p = LoadPredictor("resnet-18", 0, {{"data", TShape({1, 3, 224, 224})}});
//   p.SetInput("data", image);              // or write into p.Input("data") directly
//   p.Forward();
//   const NDArray& prob = p.Output(0);      // or p.Output("softmax_output")
//
// A Predictor computes no gradient, so the executor plans memory (intermediate buffers are
// reused by liveness) and allocates nothing for weights: parameter arrays are bound as given
// and shared, never copied (float32 arrays, and int8 or uint8 arrays whose operators read any
// dtype, such as quantized weights, are used as they are; others are converted to float32
// once), except the weights an inference rewrite changes (PredictorOptions::fold_batch_norm),
// which the predictor owns as new, read-only arrays. The rewrites leave the caller's symbol and
// arrays as they were; executor() and roles() describe the graph as bound, after the rewrites.
// Writable parameter arrays may be changed between calls (the kernels' cached weight forms
// check them); LoadPredictor binds the arrays it loads read-only (ReadOnlyViews), so nothing is
// checked.
// Labels of loss heads (softmax_label, ...) are bound as placeholders: inference never reads
// them. Roles come from what the caller gives: the arrays in `args` are the parameters, the
// names in `input_shapes` the inputs, labels are found by ClassifyArguments; any other argument
// is missing (an error unless allow_missing).
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/input_roles.h>
#include <symbind/executor/executor.h>

namespace symbind {

struct PredictorOptions {
  // Seed for arrays filled from N(0,1) (with allow_missing) and for random ops.
  uint64_t seed = kDefaultSeed;
  // Fill arguments that are neither parameters nor inputs from N(0,1) instead of failing
  // (for graphs without weights, e.g. to time them); filled() lists them.
  bool allow_missing = false;
  // Outputs to compute, by the names GetInternals gives them ("fc1_output", "conv1_output",
  // or a head's name; see SelectOutputs); empty: the symbol's own outputs.
  std::vector<std::string> outputs;
  // Intermediate buffers shared with other predictors that run one at a time (see Workspace
  // in executor.h): e.g. one per detector whose nets run in sequence. Null: the predictor's
  // own buffers, so that predictors may run concurrently. Reshape keeps the same workspace.
  std::shared_ptr<Workspace> workspace;
  // Input arrays shared with other predictors, each written just before its own Forward (see
  // BindOptions::input_workspace): e.g. one detector's nets, or one net at several input
  // shapes. An input then holds its values only until another predictor sharing it is written
  // or bound. Null: inputs of its own. Reshape keeps the same one.
  std::shared_ptr<Workspace> input_workspace;
  // Graph passes not to run, by name (GraphPasses in graph_rewrites.h lists them, in the order
  // the predictor runs the others): "fold_batch_norm" (results match the unfolded graph to float
  // rounding, about 1e-6 relative), "fuse_activations", "fuse_inverted_residuals",
  // "fuse_residual_adds", "fuse_quantized_activations", "fuse_quantized_inverted_residuals"
  // (bit-identical results). A name that is no
  // pass is an Error at bind.
  std::set<std::string> disabled_passes;
  // kBfloat16: convolutions (ungrouped) and FullyConnected layers multiply bfloat16-rounded
  // weights and inputs with float32 sums (AVX512_BF16); every other op stays float32. The
  // constructor throws Error on a CPU without AVX512_BF16 rather than run float32 instead.
  Precision precision = Precision::kFloat32;
  // Kernels keep no derived weights larger than the weights (but for GEMM panels' rows padded
  // to the kernel's tile): 3x3 convolutions run as packed GEMMs instead of Winograd, whose
  // transformed filters take 4x (F(4,3)) to 7x (F(6,3)) the filters' memory. ResNet-50 at batch
  // 1: peak RSS 223 -> 149 MiB at 1.2-1.3x the latency (BENCHMARKS.md, Memory). Results differ
  // from the default's by float rounding only.
  bool compact_weights = false;
  // On CPUs with AVX2 but not AVX512-VNNI, calibrated quantized convolutions that run as GEMMs
  // (not depthwise or RGB first layers) take their weights at even levels, 2 * round(w * 63 /
  // max|w_c|): 7-bit weights, as oneDNN halves them there, which AVX2's vpmaddubsw multiplies
  // without the sign trick that exact 8-bit sums need (docs/quantization.md: about 1.5x faster
  // GEMMs, and what it costs in accuracy). No effect on other CPUs or layers.
  bool int8_even_weights = false;
};

// The passes the command-line flags of `symbind run` and the benchmarks turn off, mapped in one
// place: --no-fold, --no-fuse (every fusion), --no-fuse-blocks, --no-fuse-residuals.
struct PassFlags {
  bool no_fold = false, no_fuse = false, no_fuse_blocks = false, no_fuse_residuals = false;
};
std::set<std::string> DisabledPasses(const PassFlags& flags);

class Predictor {
 public:
  // `args` / `aux` hold parameters and aux states by name, as SplitArgAux gives them from a
  // .params file; arrays the graph does not use are ignored. `input_shapes` gives the shape
  // of every data input: a name there is an input wherever it sits in the graph. Throws
  // ShapeError when shapes do not fit, Error naming the arguments that are neither parameters
  // nor inputs, OutOfMemoryError when inputs, outputs and buffers exceed the bind budget
  // (MaxBindBytes in executor.h, counted over every live executor of the process).
  Predictor(const Symbol& symbol, const std::map<std::string, NDArray>& args,
            const std::map<std::string, NDArray>& aux,
            const std::map<std::string, TShape>& input_shapes,
            const PredictorOptions& options = {});
  // A moved-from predictor holds no model: every call on it but assignment throws Error.
  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;
  ~Predictor();

  // A predictor for other input shapes sharing this one's parameters (no copy); this one is
  // unchanged and both may run at the same time from different threads.
  Predictor Reshape(const std::map<std::string, TShape>& input_shapes) const;

  // Data inputs in ListArguments order.
  const std::vector<std::string>& input_names() const { return roles_.data; }
  // The bound input array: write into it, then Forward().
  NDArray Input(const std::string& name) const;
  // Copies `value` into the input (converted to its dtype); the shape must match.
  void SetInput(const std::string& name, const NDArray& value);
  void Forward();
  const std::vector<NDArray>& Outputs() const;
  const NDArray& Output(size_t index) const;
  const NDArray& Output(const std::string& name) const;
  const std::vector<std::string>& output_names() const { return output_names_; }

  const InputRoles& roles() const { return roles_; }
  // Arguments filled from N(0,1) because of allow_missing.
  const std::vector<std::string>& filled() const { return filled_; }
  // The nodes pass `pass` (a name of GraphPasses) folded or fused away; empty when it did not run.
  const std::vector<std::string>& rewritten(const std::string& pass) const;
  // BatchNorm nodes folded into the layer before them (fold_batch_norm's).
  std::vector<std::string> folded() const { return RewrittenBy({"fold_batch_norm"}); }
  // Activation / clip nodes fused into the convolution before them, and convolutions fused into
  // the residual add after them with the add itself when an activation follows it
  // (fuse_activations' and fuse_residual_adds').
  std::vector<std::string> fused() const { return RewrittenBy({"fuse_activations", "fuse_residual_adds"}); }
  // Nodes of inverted residual blocks fused into the block's last node (fuse_inverted_residuals').
  std::vector<std::string> fused_blocks() const { return RewrittenBy({"fuse_inverted_residuals"}); }
  Executor& executor() { return Bound("executor"); }
  const Executor& executor() const { return Bound("executor"); }

 private:
  Predictor() = default;
  // The executor; Error naming `call` on a moved-from predictor, which holds none.
  Executor& Bound(const char* call) const;
  void Bind(const std::map<std::string, TShape>& input_shapes);

  Symbol symbol_;  // with the requested outputs as heads, after the rewrites
  std::map<std::string, NDArray> args_, aux_;  // parameters as bound (float32, used ones only)
  PredictorOptions options_;
  InputRoles roles_;
  std::vector<std::string> output_names_, filled_;
  std::map<std::string, std::vector<std::string>> rewritten_;  // by pass: the nodes it folded or fused away
  std::vector<std::string> RewrittenBy(std::initializer_list<const char*> passes) const;
  std::unique_ptr<Executor> exec_;
};

// The outputs `names` of `symbol` as one symbol: heads of `symbol` or internal outputs as
// GetInternals names them ("conv1_output"; an op node's name alone, "conv1", stands for that
// output, as in MXNet's MXPredCreatePartialOut). Throws Error listing the available names for
// an unknown one.
Symbol SelectOutputs(const Symbol& symbol, const std::vector<std::string>& names);

}  // namespace symbind

namespace symbind {
// ReadOnlyView of every array, for arrays that only a Predictor will hold (loaded from files
// for it, as LoadPredictor, `symbind run` and MXPredCreate do): its kernels then derive packed
// and transformed weights once instead of checking on every call that the arrays did not
// change (a noticeable share of a forward for large models such as ResNet-50). Writing into
// them afterwards throws.
std::map<std::string, NDArray> ReadOnlyViews(const std::map<std::string, NDArray>& arrays);

// LoadCheckpointFiles(prefix, epoch) bound as a Predictor: the parameters are read-only views of
// the mapped .params file.
Predictor LoadPredictor(const std::string& prefix, int epoch,
                        const std::map<std::string, TShape>& input_shapes,
                        const PredictorOptions& options = {});
}  // namespace symbind
