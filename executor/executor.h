// Executors run a bound symbol forward and backward.
//
//   Symbol net = ...;                                   // or LoadSymbolJSON / LoadCheckpoint
//   BindOptions opts({{"data", TShape({32, 784})}, {"label", TShape({32})}});
//   auto exec = SimpleBind(net, Context::CPU(), {}, {}, {}, {}, opts);  // the rest is allocated
//   exec->arg_dict().at("data").SyncCopyFromCPU(batch.data(), batch.size());  // feed by name
//   exec->Forward(true);
//   exec->Backward();                                   // gradients in exec->grad_dict()
//
// For inference only, predict/predictor.h binds without gradients and with planned memory.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>

namespace symbind {

class TaskGraph;  // executor/task_graph.h (internal)

// Seed used by SimpleBind's Gaussian initialisation and by random ops unless set otherwise.
constexpr uint64_t kDefaultSeed = 0;

// Forward time of one op node, collected while profiling is on.
struct NodeTiming {
  std::string name, op;
  TShape output_shape;
  double total_ms = 0;
  int64_t calls = 0;
};

// Whether an executor that computes no gradient (every grad_req null) shares intermediate
// buffers by liveness. kDefault: on, unless the environment sets SYMBIND_MEMORY_PLAN=0 (read
// once per process). kOnNaNFilled shares and fills the shared buffers with NaN at bind, a
// debugging aid that exposes a kernel relying on zeroed outputs.
enum class BufferSharing { kDefault, kOn, kOff, kOnNaNFilled };

// Bytes held for op outputs.
struct ExecutorMemory {
  bool planned = false;
  size_t output_bytes = 0;        // op outputs as allocated (shared blocks counted once)
  size_t unplanned_bytes = 0;     // what one buffer per op output would take
  size_t joined_in_place = 0;     // Concat inputs written straight into the Concat's output
};

// Intermediate buffers shared by executors that run one at a time (MXNet's shared_buffer).
// Executors bound with the same workspace place their planned op outputs in its block (each
// executor's plan is one block at rank 0), growing it in place when it is too small (the block
// is a reserved address range). A family of executors for different input shapes (an image
// pyramid, batch buckets) then holds as much memory as its largest member, in any bind order.
// Only gradient-free executors plan memory, so only they use a workspace. Executors sharing a
// workspace must not run at the same time: Forward throws if one already runs.
class Workspace {
 public:
  // The block of rank `rank` with at least `bytes` bytes, grown in place if needed (executors
  // bound earlier keep their view of its start; beyond its 1 GiB reservation a new block
  // replaces it, and they keep the old one).
  std::shared_ptr<Storage> Block(size_t rank, size_t bytes);
  // Bytes of the blocks it holds now.
  size_t bytes() const;

 private:
  friend class Executor;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Storage>> blocks_;
  std::atomic<bool> running_{false};
};

class BindMemoryReservation;  // bind_memory.h

class Executor {
 public:
  // Arrays in ListArguments / ListAuxiliaryStates order. grad_arrays[i] may be none when
  // grad_reqs[i] is kNull.
  Executor(const Symbol& symbol, Context ctx, std::vector<NDArray> arg_arrays,
           std::vector<NDArray> grad_arrays, std::vector<OpReq> grad_reqs,
           std::vector<NDArray> aux_arrays, uint64_t seed = kDefaultSeed);
  // The same from a graph already built from the symbol. entry_shapes / entry_types, when
  // given, are that graph's inferred shapes and types for the same arrays (as SimpleBind
  // has them) and are not inferred again.
  Executor(Graph graph, Context ctx, std::vector<NDArray> arg_arrays,
           std::vector<NDArray> grad_arrays, std::vector<OpReq> grad_reqs,
           std::vector<NDArray> aux_arrays, uint64_t seed = kDefaultSeed,
           std::vector<TShape> entry_shapes = {}, std::vector<int> entry_types = {},
           std::shared_ptr<Workspace> workspace = nullptr,
           BufferSharing sharing = BufferSharing::kDefault);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  // Internal (SimpleBind, Reshape): what was reserved for arrays bound to this executor, held
  // against the process-wide bind budget as long as the executor lives.
  void HoldBindMemory(BindMemoryReservation reservation);

  // Runs the graph. is_train selects training behaviour (BatchNorm batch statistics, Dropout).
  // One executor runs one Forward or Backward at a time: a call while another thread is inside
  // either throws symbind::Error (docs/concurrency.md).
  void Forward(bool is_train);
  // MXNet's PartialForward: runs step `step` of the forward pass, one op node per step in
  // topological order, and returns how many steps are left (0 after the last; a step past the
  // end runs nothing). Steps run in order from 0; 0 starts a new pass. Running every step
  // gives exactly what Forward gives.
  size_t PartialForward(bool is_train, size_t step);
  // Steps of PartialForward: the op nodes.
  size_t num_forward_steps() const { return op_nodes_.size(); }
  // Computes gradients into grad_arrays as grad_reqs say. head_grads: one per output, or empty
  // (loss heads need none; other outputs then get a gradient of ones); a head gradient no
  // gradient reads (of a zero-gradient op's output) is ignored. Before any Forward the forward
  // values are the zeros bound, as MXNet allows.
  void Backward(const std::vector<NDArray>& head_grads = {});
  // After Backward: the gradients each node's backward computed for its inputs, named as
  // MXNet names the outputs of that node's backward node ("<node>_backward_output" for one
  // input, "<node>_backward_output<k>" for several). Inputs nobody needed a gradient for have
  // none. Empty before the first Backward.
  std::vector<std::pair<std::string, NDArray>> BackwardNodeGradients() const;

  const std::vector<NDArray>& outputs() const { return outputs_; }
  const std::vector<NDArray>& arg_arrays() const { return arg_arrays_; }
  const std::vector<NDArray>& grad_arrays() const { return grad_arrays_; }
  const std::vector<NDArray>& aux_arrays() const { return aux_arrays_; }
  const std::vector<OpReq>& grad_reqs() const { return grad_reqs_; }
  std::map<std::string, NDArray> arg_dict() const;
  std::map<std::string, NDArray> grad_dict() const;
  std::map<std::string, NDArray> aux_dict() const;
  std::map<std::string, NDArray> output_dict() const;
  const Symbol& symbol() const { return graph_.symbol(); }
  const Graph& graph() const { return graph_; }
  const ExecutorMemory& memory() const { return memory_; }
  // Turns per-node forward timing on (starting from zero) or off (keeping what was collected).
  void SetProfiling(bool on);
  // One row per op node, in execution order.
  std::vector<NodeTiming> ForwardProfile() const;
  // Seed for random ops (Dropout, rrelu); each Forward advances a run counter so masks differ
  // between runs but reproduce between processes. Setting the seed restarts that sequence,
  // so the next Forward draws exactly what the first Forward after binding drew.
  void set_seed(uint64_t seed) {
    seed_ = seed;
    run_counter_ = 0;
  }
  // What the forward kernels run convolution and FullyConnected in (Precision); kFloat32 from
  // binding. The caller checks the CPU can (Bf16Available in ops/kernels/gemm_bf16.h).
  void set_precision(Precision precision) { precision_ = precision; }
  // OpContext::compact_weights for every forward kernel; false from binding.
  void set_compact_weights(bool compact) { compact_weights_ = compact; }
  // OpContext::int8_even_weights for every forward kernel; false from binding.
  void set_int8_even_weights(bool even) { int8_even_weights_ = even; }

  // MXNet's Executor::Reshape: a NEW executor for new input shapes; this one is unchanged.
  // Arrays whose shape stays the same (parameters, aux states, their gradients) are shared
  // with this executor. Arrays whose shape changes are newly allocated (zero), never views of
  // this executor's arrays, so old and new executor may run at the same time. As in MXNet,
  // an argument missing from new_arg_shapes may change shape only with partial_shaping, and
  // an array may grow only with allow_up_sizing. Defined in executor/reshape.cc.
  std::unique_ptr<Executor> Reshape(const std::map<std::string, TShape>& new_arg_shapes,
                                    bool partial_shaping = false,
                                    bool allow_up_sizing = false) const;

 private:
  struct BackwardPlan;
  // Which entries need a gradient, which op nodes run backward (per op_nodes_ index), and each
  // variable node's argument index (-1: aux or none). Throws Error (prefixed `where`) when a
  // node that must run has no gradient.
  struct GradientFlow {
    std::vector<bool> needs, runs;
    std::vector<int> arg_index;
  };
  GradientFlow PlanGradientFlow(const char* where) const;
  void BuildBackwardPlan();
  void AllocateOpOutputs(const std::vector<TShape>& shapes, const std::vector<int>& types);
  // MemoryPlanInputs::join_offsets and join_row_bytes of node `nid`: no offsets unless it is
  // a join (Op::join_axis) whose inputs lie end to end in its output, or in each image of it
  // (axis 1; row_bytes then the bytes of one image).
  struct JoinLayout {
    std::vector<size_t> offsets;
    size_t row_bytes = 0;
  };
  JoinLayout JoinOffsets(uint32_t nid, const std::vector<TShape>& shapes, const std::vector<int>& types) const;
  uint64_t NodeSeed(uint32_t node_id) const;
  void CheckCanForward(bool is_train) const;
  void RunForwardNode(uint32_t task, bool is_train);

  Graph graph_;
  Context ctx_;
  std::vector<NDArray> arg_arrays_, grad_arrays_, aux_arrays_, outputs_;
  std::vector<OpReq> grad_reqs_;
  std::vector<NDArray> entry_arrays_;  // value of every graph entry
  std::vector<uint32_t> op_nodes_;     // op node ids in topological order
  std::vector<std::vector<NDArray>> node_inputs_, node_outputs_;
  std::unique_ptr<TaskGraph> forward_tasks_;
  std::unique_ptr<BackwardPlan> backward_;
  uint64_t seed_;
  Precision precision_ = Precision::kFloat32;
  bool compact_weights_ = false;
  bool int8_even_weights_ = false;
  uint64_t run_counter_ = 0;
  bool last_forward_train_ = false;
  size_t partial_steps_done_ = 0;  // PartialForward's next step
  ExecutorMemory memory_;
  std::vector<BindMemoryReservation> bind_memory_;  // see HoldBindMemory
  uint64_t BindMemoryHeld() const;
  std::shared_ptr<Workspace> workspace_;
  BufferSharing sharing_;
  std::vector<std::pair<uint32_t, uint32_t>> reuse_dependencies_;
  bool profiling_ = false;
  // Set while Forward or Backward runs, to refuse concurrent calls on one executor.
  std::atomic<bool> in_use_{false};
  class InUseGuard;
  // Per op node (indexed like op_nodes_): every input and output is empty, so there is
  // nothing to compute (kernels are never asked to loop over a zero-size tensor's axes).
  std::vector<bool> node_inputs_empty_, node_outputs_empty_;
  // Per op node: OpContext::output_image_stride (output 0 planned inside a Concat's images).
  std::vector<int64_t> output_image_stride_;
  // Per op node: its kernel's state (Op::create_state), made at bind; null for ops keeping none.
  std::vector<std::unique_ptr<OpState>> node_states_;
  std::vector<int64_t> node_ns_, node_calls_;
};

// Binds with explicit arrays in ListArguments / ListAuxiliaryStates order.
std::unique_ptr<Executor> Bind(const Symbol& symbol, Context ctx,
                               const std::vector<NDArray>& arg_arrays,
                               const std::vector<NDArray>& grad_arrays,
                               const std::vector<OpReq>& grad_reqs,
                               const std::vector<NDArray>& aux_arrays,
                               uint64_t seed = kDefaultSeed);

// MXNet's SimpleBind: arguments matched by name. Shapes come from the arrays in args_map (and
// from `shapes` for inputs you have no array for); everything else is inferred. Missing
// arguments and aux states are allocated and filled from N(0,1) with a seeded generator;
// missing gradients are allocated zero. An argument's grad_req comes from grad_req_type, else
// from options.grads: by default MXNet's rule, kNull for names ending in "data" or "label"
// and kWrite otherwise. For inference use Predictor (predict/predictor.h), which binds with
// GradPolicy::kNone so that the executor plans memory.
enum class GradPolicy { kByName, kNone, kAll };
struct BindOptions {
  BindOptions(std::map<std::string, TShape> input_shapes = {}, uint64_t seed_ = kDefaultSeed)
      : shapes(std::move(input_shapes)), seed(seed_) {}
  std::map<std::string, TShape> shapes;
  // Arguments without an array that are allocated zeroed instead of filled from N(0,1): inputs
  // the caller writes (Predictor's data), allocated under the same memory check as the rest.
  std::set<std::string> zeroed;
  uint64_t seed = kDefaultSeed;
  GradPolicy grads = GradPolicy::kByName;
  // Shared intermediate buffers (see Workspace); null: the executor's own.
  std::shared_ptr<Workspace> workspace;
  // Where the `zeroed` arguments live: null, arrays of their own; else views of this
  // workspace's block, shared with the inputs of every executor bound with it. Such executors
  // must be written and run one at a time, and their inputs start with whatever the last
  // writer left (Predictor: PredictorOptions::input_workspace).
  std::shared_ptr<Workspace> input_workspace;
  BufferSharing buffer_sharing = BufferSharing::kDefault;
};
using SimpleBindOptions = BindOptions;
std::unique_ptr<Executor> SimpleBind(const Symbol& symbol, Context ctx,
                                     const std::map<std::string, NDArray>& args_map,
                                     const std::map<std::string, NDArray>& arg_grad_store = {},
                                     const std::map<std::string, OpReq>& grad_req_type = {},
                                     const std::map<std::string, NDArray>& aux_map = {},
                                     const SimpleBindOptions& options = {});

// MXNet's default grad_req for an argument: null for names ending in "data" or "label",
// write otherwise (SimpleBind with GradPolicy::kByName, mxnet-cpp's InferExecutorArrays).
OpReq GradReqByName(const std::string& arg_name);

// Fills `args_map` with arrays for every argument whose shape follows from `known_args`
// (MXNet's InferArgsMap); existing entries are kept. New arrays are zero.
void InferArgsMap(const Symbol& symbol, Context ctx, std::map<std::string, NDArray>* args_map,
                  const std::map<std::string, NDArray>& known_args);

// Fills `a` from N(0,1) with a generator seeded by (seed, name), independent of order.
void FillGaussian(const NDArray& a, uint64_t seed, const std::string& name);

// Memory bound for binding: SimpleBind, Bind, Reshape and Backward (and so Predictor and the
// C APIs) refuse, with OutOfMemoryError and before allocating anything, when one array they
// would allocate, or all of them together with what the live executors of the process hold,
// need more than this many bytes (absurd shapes such as data=(1000000,1000000) fail at bind
// instead of exhausting the machine). Default: kDefaultMaxBindBytes, or half the machine's
// physical memory if that is less. The environment variable SYMBIND_MAX_BIND_BYTES (a byte
// count, read once per process) or SetMaxBindBytes overrides it; SetMaxBindBytes(0) returns to
// the environment variable or the default.
constexpr uint64_t kDefaultMaxBindBytes = uint64_t{2} << 30;
uint64_t MaxBindBytes();
void SetMaxBindBytes(uint64_t bytes);
// The message a door (CLI, C APIs, Predictor) gives for std::bad_alloc, whose what() says
// nothing: `during` names what was being done.
std::string OutOfMemoryMessage(const std::string& during);

// The byte count SYMBIND_MAX_BIND_BYTES holds: digits only, positive, within 64 bits; throws
// Error naming the variable otherwise.
uint64_t ParseMaxBindBytes(const std::string& text);

}  // namespace symbind
