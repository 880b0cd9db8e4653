#include "executor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>

#include "bind_memory.h"
#include "memory_plan.h"
#include "task_graph.h"

namespace symbind {

namespace {
uint64_t Mix(uint64_t a, uint64_t b) {
  // splitmix64 of a combined value: well-spread per-node / per-name seeds.
  uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void AddInto(const NDArray& dst, const NDArray& src) {
  float* d = dst.fdata();
  const float* s = src.fdata();
  for (int64_t i = 0, n = dst.Size(); i < n; ++i) d[i] += s[i];
}

std::atomic<uint64_t> g_max_bind_bytes{0};  // 0: environment variable or physical memory

// The dtype an entry is allocated with (float32 where inference left it open).
DType EntryDType(const std::vector<int>& types, uint32_t e) {
  return e >= types.size() || types[e] < 0 ? DType::kFloat32 : static_cast<DType>(types[e]);
}

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return b != 0 && a > std::numeric_limits<uint64_t>::max() / b ? std::numeric_limits<uint64_t>::max()
                                                                : a * b;
}

// Bytes of a known shape, saturating instead of overflowing (shapes here are not yet checked).
// With `extent`, empty dims count as 1: the bytes the array's loops range over.
uint64_t PlannedBytes(const PlannedArray& a, bool extent = false) {
  uint64_t n = DTypeSize(a.dtype);
  for (int64_t d : a.shape.dims())
    n = SaturatingMul(n, static_cast<uint64_t>(extent && d == 0 ? 1 : d));
  return n;
}

std::string LimitHint(uint64_t limit) {
  return StrCat("the bind memory limit of ", limit, " bytes (SYMBIND_MAX_BIND_BYTES or "
                "SetMaxBindBytes raise it)");
}
}  // namespace

std::string PlannedArray::Name() const { return entry.node ? EntryName(entry) : name; }

void CheckBindMemory(const std::vector<PlannedArray>& arrays, const char* who, uint64_t already_held) {
  const uint64_t limit = MaxBindBytes();
  uint64_t total = already_held;
  for (const PlannedArray& a : arrays) {
    if (!a.shape.is_known()) continue;
    const uint64_t bytes = PlannedBytes(a);
    if (bytes > limit)
      throw OutOfMemoryError(StrCat(who, ": array '", a.Name(), "' of shape ", a.shape, " (",
                                    DTypeName(a.dtype), ") needs ", bytes, " bytes, more than ",
                                    LimitHint(limit)));
    if (bytes == 0 && PlannedBytes(a, true) > limit)
      throw OutOfMemoryError(StrCat(who, ": array '", a.Name(), "' of shape ", a.shape,
                                    " is empty but its other axes span ", PlannedBytes(a, true),
                                    " bytes, more than ", LimitHint(limit),
                                    "; kernels loop over them"));
    total = total > std::numeric_limits<uint64_t>::max() - bytes ? std::numeric_limits<uint64_t>::max()
                                                                 : total + bytes;
  }
  if (total > limit)
    throw OutOfMemoryError(StrCat(who, ": the ", arrays.size(), " arrays to allocate need ",
                                  total - already_held, " bytes",
                                  already_held ? StrCat(" (with the ", already_held, " bytes the executor holds, ", total, ")")
                                               : std::string(),
                                  " together, more than ", LimitHint(limit)));
}

std::vector<PlannedArray> PlannedOpOutputs(const Graph& graph, const std::vector<TShape>& shapes,
                                           const std::vector<int>& types) {
  std::vector<PlannedArray> planned;
  for (uint32_t nid = 0; nid < graph.num_nodes(); ++nid) {
    if (graph.node(nid).node->is_variable()) continue;
    for (uint32_t i = 0; i < graph.num_node_outputs(nid); ++i) {
      const uint32_t e = graph.entry_id(nid, i);
      planned.push_back({{}, NodeEntry{graph.node(nid).node, i}, shapes[e], EntryDType(types, e)});
    }
  }
  return planned;
}

uint64_t ParseMaxBindBytes(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  // strtoull alone accepts "-1" (as 2^64 - 1) and saturates on overflow: digits only, in range.
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0' || v == 0 || errno == ERANGE || !(s[0] >= '0' && s[0] <= '9'))
    throw Error(StrCat("SYMBIND_MAX_BIND_BYTES must be a positive byte count, got '", text, "'"));
  return v;
}

uint64_t MaxBindBytes() {
  if (const uint64_t set = g_max_bind_bytes.load()) return set;
  // Read once; a bad value throws at every bind until fixed (the initialiser reruns).
  static const uint64_t from_environment = [] {
    const char* env = std::getenv("SYMBIND_MAX_BIND_BYTES");
    return env ? ParseMaxBindBytes(env) : uint64_t{0};
  }();
  if (from_environment) return from_environment;
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

void SetMaxBindBytes(uint64_t bytes) { g_max_bind_bytes.store(bytes); }

void FillGaussian(const NDArray& a, uint64_t seed, const std::string& name) {
  uint64_t h = seed;
  for (char c : name) h = Mix(h, static_cast<unsigned char>(c));
  std::mt19937_64 engine(h);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  if (a.dtype() == DType::kFloat32 && !a.read_only()) {  // the common case, without SetFlat's per-element checks
    float* p = a.fdata();
    for (int64_t i = 0, n = a.Size(); i < n; ++i) p[i] = dist(engine);
    return;
  }
  for (int64_t i = 0, n = a.Size(); i < n; ++i) a.SetFlat(i, dist(engine));
}

// Where each gradient goes during Backward.
struct Executor::BackwardPlan {
  // Per op node (indexed like op_nodes_): whether it runs backward, its req and in_grad arrays.
  std::vector<bool> runs;
  std::vector<std::vector<OpReq>> req;
  std::vector<std::vector<NDArray>> in_grads;
  std::vector<std::vector<NDArray>> out_grads;
  // Entries whose gradient is the sum of several contributions: target and parts, summed in
  // a fixed order so results do not depend on the schedule.
  struct Sum {
    NDArray target;
    bool accumulate;  // grad_req add: target += sum
    std::vector<NDArray> parts;
    // target (=|+=) parts[0] + parts[1] + ..., always in this order.
    void Apply() {
      if (!accumulate) parts[0].CopyTo(&target);
      else AddInto(target, parts[0]);
      for (size_t k = 1; k < parts.size(); ++k) AddInto(target, parts[k]);
    }
  };
  std::vector<std::vector<Sum>> sums_before_node;  // summed before that node's backward
  std::vector<Sum> final_sums;                     // argument gradients, summed at the end
  std::vector<NDArray> head_grads;                 // one per output (ones by default)
  std::vector<bool> head_is_ones;
  TaskGraph tasks;  // task i = op_nodes_[size-1-i] (reverse topological)
};

Executor::Executor(const Symbol& symbol, Context ctx, std::vector<NDArray> arg_arrays,
                   std::vector<NDArray> grad_arrays, std::vector<OpReq> grad_reqs,
                   std::vector<NDArray> aux_arrays, uint64_t seed)
    : Executor(Graph(symbol), ctx, std::move(arg_arrays), std::move(grad_arrays),
               std::move(grad_reqs), std::move(aux_arrays), seed) {}

Executor::Executor(Graph graph, Context ctx, std::vector<NDArray> arg_arrays,
                   std::vector<NDArray> grad_arrays, std::vector<OpReq> grad_reqs,
                   std::vector<NDArray> aux_arrays, uint64_t seed,
                   std::vector<TShape> entry_shapes, std::vector<int> entry_types,
                   std::shared_ptr<Workspace> workspace, BufferSharing sharing)
    : graph_(std::move(graph)), ctx_(ctx), arg_arrays_(std::move(arg_arrays)),
      grad_arrays_(std::move(grad_arrays)), aux_arrays_(std::move(aux_arrays)),
      grad_reqs_(std::move(grad_reqs)), seed_(seed), workspace_(std::move(workspace)),
      sharing_(sharing) {
  const auto arg_names = graph_.ListArguments();
  const auto aux_names = graph_.ListAuxiliaryStates();
  if (arg_arrays_.size() != arg_names.size())
    throw Error(StrCat("Bind: ", arg_arrays_.size(), " argument arrays for ", arg_names.size(),
                       " arguments"));
  if (aux_arrays_.size() != aux_names.size())
    throw Error(StrCat("Bind: ", aux_arrays_.size(), " aux arrays for ", aux_names.size(),
                       " aux states"));
  if (grad_reqs_.empty()) grad_reqs_.assign(arg_names.size(), OpReq::kNull);
  if (grad_arrays_.empty()) grad_arrays_.assign(arg_names.size(), NDArray());
  if (grad_reqs_.size() != arg_names.size() || grad_arrays_.size() != arg_names.size())
    throw Error(StrCat("Bind: grad arrays/reqs must number ", arg_names.size()));

  // Shapes: from the bound arrays; everything else inferred.
  std::map<std::string, TShape> known;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    if (arg_arrays_[i].is_none()) throw Error("Bind: argument '" + arg_names[i] + "' has no array");
    known[arg_names[i]] = arg_arrays_[i].shape();
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    if (aux_arrays_[i].is_none()) throw Error("Bind: aux state '" + aux_names[i] + "' has no array");
    known[aux_names[i]] = aux_arrays_[i].shape();
  }
  // SimpleBind passes what it inferred, having checked the memory of everything it binds.
  const bool inferred_by_caller = entry_shapes.size() == graph_.num_entries();
  std::vector<TShape> shapes = inferred_by_caller ? std::move(entry_shapes) : InferEntryShapes(graph_, known);
  for (size_t i = 0; i < arg_names.size(); ++i) {
    if (grad_reqs_[i] == OpReq::kNull) continue;
    if (grad_arrays_[i].is_none())
      throw Error("Bind: argument '" + arg_names[i] + "' needs a gradient array (grad_req is not null)");
    if (grad_arrays_[i].shape() != arg_arrays_[i].shape())
      throw Error(StrCat("Bind: gradient of '", arg_names[i], "' has shape ",
                         grad_arrays_[i].shape(), " but the argument has shape ",
                         arg_arrays_[i].shape()));
  }

  // Read-only arrays (weights memory-mapped from a .symbind file) are never written: a
  // training executor binds copies of the arguments it updates and of every aux state.
  const bool trains = std::any_of(grad_reqs_.begin(), grad_reqs_.end(),
                                  [](OpReq r) { return r != OpReq::kNull; });
  for (size_t i = 0; i < arg_names.size(); ++i)
    if (grad_reqs_[i] != OpReq::kNull && arg_arrays_[i].read_only()) arg_arrays_[i] = arg_arrays_[i].Copy();
  if (trains)
    for (auto& a : aux_arrays_)
      if (a.read_only()) a = a.Copy();

  // Entry arrays: variables point at bound arrays; op outputs get their own storage.
  entry_arrays_.resize(graph_.num_entries());
  size_t next_arg = 0, next_aux = 0;
  for (uint32_t id : graph_.arg_nodes())
    entry_arrays_[graph_.entry_id(id, 0)] =
        graph_.is_aux_node(id) ? aux_arrays_[next_aux++] : arg_arrays_[next_arg++];
  std::map<std::string, DType> known_types;
  for (size_t i = 0; i < arg_names.size(); ++i) known_types[arg_names[i]] = arg_arrays_[i].dtype();
  for (size_t i = 0; i < aux_names.size(); ++i) known_types[aux_names[i]] = aux_arrays_[i].dtype();
  std::vector<int> types = entry_types.size() == graph_.num_entries() ? std::move(entry_types)
                                                                      : InferEntryTypes(graph_, known_types);
  if (!inferred_by_caller) CheckBindMemory(PlannedOpOutputs(graph_, shapes, types), "Bind");
  for (uint32_t nid = 0; nid < graph_.num_nodes(); ++nid) {
    const Node& n = *graph_.node(nid).node;
    if (n.is_variable()) continue;
    op_nodes_.push_back(nid);
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) {
      uint32_t e = graph_.entry_id(nid, i);
      if (!shapes[e].is_known())
        throw ShapeError(StrCat("Bind: cannot infer the shape of ", EntryName(NodeEntry{graph_.node(nid).node, i}),
                                " (got ", shapes[e], ")"));
    }
  }
  AllocateOpOutputs(shapes, types);
  for (uint32_t id : graph_.arg_nodes()) {
    uint32_t e = graph_.entry_id(id, 0);
    if (entry_arrays_[e].shape() != shapes[e])
      throw ShapeError(StrCat("Bind: array for '", graph_.node(id).node->name(), "' has shape ",
                              entry_arrays_[e].shape(), " but the graph needs ", shapes[e]));
  }
  for (auto& h : graph_.heads()) outputs_.push_back(entry_arrays_[graph_.entry_id(h)]);

  // Forward task graph over op nodes: an op waits for the ops producing its inputs.
  std::vector<int> task_of(graph_.num_nodes(), -1);
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) task_of[op_nodes_[t]] = static_cast<int>(t);
  forward_tasks_ = std::make_unique<TaskGraph>(op_nodes_.size());
  node_inputs_.resize(op_nodes_.size());
  node_outputs_.resize(op_nodes_.size());
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    uint32_t nid = op_nodes_[t];
    std::vector<int> preds;
    for (auto& in : graph_.node(nid).inputs) {
      node_inputs_[t].push_back(entry_arrays_[graph_.entry_id(in)]);
      int p = task_of[in.node_id];
      if (p >= 0 && std::find(preds.begin(), preds.end(), p) == preds.end()) preds.push_back(p);
    }
    for (int p : preds) forward_tasks_->AddDependency(static_cast<uint32_t>(p), t);
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i)
      node_outputs_[t].push_back(entry_arrays_[graph_.entry_id(nid, i)]);
  }
  for (auto& d : reuse_dependencies_) forward_tasks_->AddDependency(d.first, d.second);
  auto all_empty = [](const std::vector<NDArray>& arrays) {
    return std::all_of(arrays.begin(), arrays.end(), [](const NDArray& a) { return a.Size() == 0; });
  };
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    node_inputs_empty_.push_back(all_empty(node_inputs_[t]));
    node_outputs_empty_.push_back(all_empty(node_outputs_[t]));
  }
}

// Marks the executor (or its Workspace) busy for one Forward or Backward; a second
// concurrent call throws. A null flag guards nothing.
class Executor::InUseGuard {
 public:
  enum What { kExecutor, kWorkspace };
  InUseGuard(std::atomic<bool>* flag, const char* call, What what = kExecutor) : flag_(flag) {
    if (!flag_ || !flag_->exchange(true)) return;
    flag_ = nullptr;  // held by the other call
    if (what == kWorkspace)
      throw Error(StrCat("Executor::", call, ": another executor sharing this Workspace is running; "
                         "executors that share a Workspace must run one at a time (bind without one "
                         "to run concurrently)"));
    throw Error(StrCat("Executor::", call, ": this executor is already running Forward or "
                       "Backward in another thread; one executor serves one thread at a time "
                       "(bind one executor per thread, see docs/concurrency.md)"));
  }
  ~InUseGuard() {
    if (flag_) flag_->store(false);
  }
  InUseGuard(const InUseGuard&) = delete;
  InUseGuard& operator=(const InUseGuard&) = delete;

 private:
  std::atomic<bool>* flag_;
};

void Executor::AllocateOpOutputs(const std::vector<TShape>& shapes, const std::vector<int>& types) {
  static const bool plan_by_default = [] {
    const char* env = std::getenv("SYMBIND_MEMORY_PLAN");
    return !(env && std::string(env) == "0");
  }();
  const bool needs_gradients = std::any_of(grad_reqs_.begin(), grad_reqs_.end(),
                                           [](OpReq r) { return r != OpReq::kNull; });
  // Backward reads forward values, so only gradient-free executors share buffers.
  memory_.planned = !needs_gradients && (sharing_ == BufferSharing::kDefault ? plan_by_default
                                         : sharing_ != BufferSharing::kOff);

  std::vector<size_t> entry_bytes(graph_.num_entries(), 0);
  std::vector<bool> keep(graph_.num_entries(), true);
  for (uint32_t nid : op_nodes_)
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) {
      uint32_t e = graph_.entry_id(nid, i);
      entry_bytes[e] = static_cast<size_t>(shapes[e].Size()) * DTypeSize(EntryDType(types, e));
      memory_.unplanned_bytes += entry_bytes[e];
      keep[e] = false;
    }
  for (auto& h : graph_.heads()) keep[graph_.entry_id(h)] = true;  // the user reads outputs

  MemoryPlan plan;
  if (memory_.planned) {
    std::vector<bool> inplace(op_nodes_.size());
    for (size_t t = 0; t < op_nodes_.size(); ++t)
      inplace[t] = graph_.node(op_nodes_[t]).node->attrs.op->forward_inplace;
    plan = PlanMemory(graph_, op_nodes_, entry_bytes, keep, inplace);
  }
  std::vector<std::shared_ptr<Storage>> blocks(plan.block_bytes.size());
  std::vector<size_t> by_size(blocks.size());
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t x, size_t y) { return plan.block_bytes[x] > plan.block_bytes[y]; });
  for (size_t rank = 0; rank < by_size.size(); ++rank) {
    const size_t b = by_size[rank];
    blocks[b] = workspace_ ? workspace_->Block(rank, plan.block_bytes[b])
                           : std::make_shared<Storage>(plan.block_bytes[b], "a shared intermediate buffer");
    if (sharing_ == BufferSharing::kOnNaNFilled) {
      float* f = static_cast<float*>(blocks[b]->data());
      std::fill(f, f + plan.block_bytes[b] / sizeof(float), std::numeric_limits<float>::quiet_NaN());
    }
    memory_.output_bytes += plan.block_bytes[b];
  }
  for (uint32_t nid : op_nodes_)
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) {
      uint32_t e = graph_.entry_id(nid, i);
      int b = memory_.planned ? plan.block_of_entry[e] : MemoryPlan::kOwnStorage;
      if (b == MemoryPlan::kOwnStorage) {
        entry_arrays_[e] = NDArray(shapes[e], EntryDType(types, e), ctx_);
        memory_.output_bytes += entry_bytes[e];
      } else {
        entry_arrays_[e] = NDArray::View(blocks[static_cast<size_t>(b)], 0, shapes[e], EntryDType(types, e), ctx_);
      }
    }
  reuse_dependencies_ = std::move(plan.reuse_dependencies);
}

void Executor::SetProfiling(bool on) {
  if (on && !profiling_) {
    node_ns_.assign(op_nodes_.size(), 0);
    node_calls_.assign(op_nodes_.size(), 0);
  }
  profiling_ = on;
}

std::vector<NodeTiming> Executor::ForwardProfile() const {
  std::vector<NodeTiming> rows;
  for (size_t t = 0; t < op_nodes_.size(); ++t) {
    const Node& n = *graph_.node(op_nodes_[t]).node;
    NodeTiming r;
    r.name = n.name();
    r.op = n.attrs.op->name;
    r.output_shape = node_outputs_[t].empty() ? TShape() : node_outputs_[t][0].shape();
    if (t < node_ns_.size()) {
      r.total_ms = static_cast<double>(node_ns_[t]) / 1e6;
      r.calls = node_calls_[t];
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

Executor::~Executor() = default;

uint64_t Executor::NodeSeed(uint32_t node_id) const {
  return Mix(Mix(seed_, node_id), run_counter_);
}

std::shared_ptr<Storage> Workspace::Block(size_t rank, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rank >= blocks_.size()) blocks_.resize(rank + 1);
  if (!blocks_[rank] || blocks_[rank]->bytes() < bytes)
    blocks_[rank] = std::make_shared<Storage>(bytes, "a shared workspace buffer");
  return blocks_[rank];
}

size_t Workspace::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (auto& b : blocks_) total += b ? b->bytes() : 0;
  return total;
}

void Executor::CheckCanForward(bool is_train) const {
  if (!is_train) return;
  // Training-mode BatchNorm updates its moving statistics in place.
  for (size_t i = 0; i < aux_arrays_.size(); ++i)
    if (aux_arrays_[i].read_only())
      throw Error(StrCat("Forward(is_train=true) would update aux state '",
                         graph_.ListAuxiliaryStates()[i],
                         "', which is read-only (memory-mapped weights); bind a Copy() of it "
                         "or bind with a grad_req to train"));
}

void Executor::RunForwardNode(uint32_t t, bool is_train) {
  if (node_outputs_empty_[t]) return;  // nothing to write
  uint32_t nid = op_nodes_[t];
  const NodeAttrs& attrs = graph_.node(nid).node->attrs;
  OpContext ctx{is_train, NodeSeed(nid)};
  std::vector<OpReq> req(node_outputs_[t].size(), OpReq::kWrite);
  if (!profiling_) return attrs.op->forward(ctx, attrs, node_inputs_[t], req, node_outputs_[t]);
  auto start = std::chrono::steady_clock::now();
  attrs.op->forward(ctx, attrs, node_inputs_[t], req, node_outputs_[t]);
  node_ns_[t] += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  ++node_calls_[t];
}

void Executor::Forward(bool is_train) {
  InUseGuard guard(&in_use_, "Forward");
  InUseGuard workspace_guard(memory_.planned && workspace_ ? &workspace_->running_ : nullptr, "Forward",
                             InUseGuard::kWorkspace);
  CheckCanForward(is_train);
  ++run_counter_;
  forward_tasks_->Run([&](uint32_t t) { RunForwardNode(t, is_train); });
  has_run_forward_ = true;
  last_forward_train_ = is_train;
  partial_steps_done_ = 0;
}

size_t Executor::PartialForward(bool is_train, size_t step) {
  InUseGuard guard(&in_use_, "PartialForward");
  InUseGuard workspace_guard(memory_.planned && workspace_ ? &workspace_->running_ : nullptr,
                             "PartialForward", InUseGuard::kWorkspace);
  const size_t steps = op_nodes_.size();
  if (step >= steps) return 0;
  if (step != partial_steps_done_ && step != 0)
    throw Error(StrCat("Executor::PartialForward: step ", step, " requested, but the next step is ",
                       partial_steps_done_, " (steps run in order, from 0, one op each; ", steps,
                       " in all)"));
  if (step == 0) {
    CheckCanForward(is_train);
    ++run_counter_;  // one pass, seeded as Forward would be
  }
  // op_nodes_ is a topological order that the memory plan's buffer reuse also follows.
  RunForwardNode(static_cast<uint32_t>(step), is_train);
  partial_steps_done_ = step + 1;
  if (partial_steps_done_ == steps) {
    has_run_forward_ = true;
    last_forward_train_ = is_train;
    partial_steps_done_ = 0;
  }
  return steps - step - 1;
}

void Executor::BuildBackwardPlan() {
  auto plan = std::make_unique<BackwardPlan>();
  const size_t num_entries = graph_.num_entries();
  // Which entries need a gradient: arguments with a non-null req, and outputs of ops that
  // have an input needing one.
  std::vector<bool> needs(num_entries, false);
  std::vector<int> arg_index(graph_.num_nodes(), -1);
  {
    int a = 0;
    for (uint32_t id : graph_.arg_nodes())
      if (!graph_.is_aux_node(id)) {
        arg_index[id] = a;
        needs[graph_.entry_id(id, 0)] = grad_reqs_[static_cast<size_t>(a)] != OpReq::kNull;
        ++a;
      }
  }
  plan->runs.assign(op_nodes_.size(), false);
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    uint32_t nid = op_nodes_[t];
    const auto& info = graph_.node(nid);
    auto aux_mask = AuxInputMask(*info.node);
    bool any = false;
    for (size_t k = 0; k < info.inputs.size(); ++k)
      if (!aux_mask[k] && needs[graph_.entry_id(info.inputs[k])]) any = true;
    if (!any) continue;
    if (!info.node->attrs.op->backward)
      throw Error(StrCat("Backward: operator ", info.node->name(), " (", info.node->attrs.op->name,
                         ") has no gradient, but its inputs need one"));
    plan->runs[t] = true;
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) needs[graph_.entry_id(nid, i)] = true;
  }

  // Contributions to each entry's gradient: (task, input slot) of consumers, plus the head.
  struct Contribution {
    int task;  // -1 for a head gradient
    size_t slot;
  };
  std::vector<std::vector<Contribution>> contrib(num_entries);
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    if (!plan->runs[t]) continue;
    const auto& info = graph_.node(op_nodes_[t]);
    auto aux_mask = AuxInputMask(*info.node);
    for (size_t k = 0; k < info.inputs.size(); ++k) {
      uint32_t e = graph_.entry_id(info.inputs[k]);
      if (!aux_mask[k] && needs[e]) contrib[e].push_back({static_cast<int>(t), k});
    }
  }
  for (size_t h = 0; h < outputs_.size(); ++h) {
    uint32_t e = graph_.entry_id(graph_.heads()[h]);
    if (needs[e]) contrib[e].push_back({-1, h});
  }
  {
    // Every buffer allocated below, checked with what the executor holds before any is made.
    std::vector<PlannedArray> planned;
    for (size_t h = 0; h < outputs_.size(); ++h)
      planned.push_back({StrCat("head gradient ", h), {}, outputs_[h].shape(), DType::kFloat32});
    for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
      if (!plan->runs[t]) continue;
      for (uint32_t i = 0; i < graph_.num_node_outputs(op_nodes_[t]); ++i) {
        const uint32_t e = graph_.entry_id(op_nodes_[t], i);
        const auto& c = contrib[e];
        const bool head_only = c.size() == 1 && c[0].task < 0;
        const TShape& shape = entry_arrays_[e].shape();
        const NodeEntry entry{graph_.node(op_nodes_[t]).node, i};
        if (!head_only) planned.push_back({"gradient", entry, shape, DType::kFloat32});
        if (c.size() > 1)  // one buffer per contribution, summed
          for (auto& k : c)
            if (k.task >= 0) planned.push_back({"gradient part", entry, shape, DType::kFloat32});
      }
    }
    for (uint32_t id : graph_.arg_nodes()) {
      const uint32_t e = graph_.entry_id(id, 0);
      if (arg_index[id] < 0 || contrib[e].size() < 2) continue;
      for (auto& k : contrib[e])
        if (k.task >= 0)
          planned.push_back({"gradient part of " + graph_.node(id).node->name(), {},
                             entry_arrays_[e].shape(), DType::kFloat32});
    }
    // Held: everything the executor works on (its op outputs and the arrays bound to it).
    uint64_t held = memory_.output_bytes;
    for (const auto* arrays : {&arg_arrays_, &grad_arrays_, &aux_arrays_})
      for (const NDArray& a : *arrays) held += a.bytes();
    CheckBindMemory(planned, "Backward", held);
  }
  plan->head_grads.resize(outputs_.size());
  plan->head_is_ones.assign(outputs_.size(), true);
  for (size_t h = 0; h < outputs_.size(); ++h) {
    plan->head_grads[h] = NDArray(outputs_[h].shape());
    plan->head_grads[h].Fill(1.0f);
  }

  // Gradient storage per op output entry (the out_grads of its producer).
  std::vector<NDArray> entry_grad(num_entries);
  plan->out_grads.resize(op_nodes_.size());
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    if (!plan->runs[t]) continue;
    uint32_t nid = op_nodes_[t];
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) {
      uint32_t e = graph_.entry_id(nid, i);
      const auto& c = contrib[e];
      if (c.size() == 1 && c[0].task < 0) entry_grad[e] = plan->head_grads[c[0].slot];
      else entry_grad[e] = NDArray(entry_arrays_[e].shape());  // zero when nobody contributes
      plan->out_grads[t].push_back(entry_grad[e]);
    }
  }
  for (uint32_t id : graph_.arg_nodes())
    if (arg_index[id] >= 0) entry_grad[graph_.entry_id(id, 0)] = grad_arrays_[static_cast<size_t>(arg_index[id])];

  // Where each consumer writes: straight into the target when it is the only contributor,
  // otherwise into its own buffer that is summed afterwards.
  plan->req.resize(op_nodes_.size());
  plan->in_grads.resize(op_nodes_.size());
  plan->sums_before_node.resize(op_nodes_.size());
  std::vector<int> producer_task(graph_.num_nodes(), -1);
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) producer_task[op_nodes_[t]] = static_cast<int>(t);
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    if (!plan->runs[t]) continue;
    size_t nargs = graph_.node(op_nodes_[t]).node->attrs.op->ListArguments(graph_.node(op_nodes_[t]).node->attrs).size();
    plan->req[t].assign(nargs, OpReq::kNull);
    plan->in_grads[t].assign(nargs, NDArray());
  }
  for (uint32_t e_node = 0; e_node < graph_.num_nodes(); ++e_node) {
    for (uint32_t i = 0; i < graph_.num_node_outputs(e_node); ++i) {
      uint32_t e = graph_.entry_id(e_node, i);
      const auto& c = contrib[e];
      if (c.empty()) continue;
      bool is_arg = arg_index[e_node] >= 0;
      OpReq target_req = is_arg ? grad_reqs_[static_cast<size_t>(arg_index[e_node])] : OpReq::kWrite;
      NDArray target = entry_grad[e];
      if (c.size() == 1 && c[0].task >= 0) {
        plan->req[c[0].task][c[0].slot] = target_req;
        plan->in_grads[c[0].task][c[0].slot] = target;
        continue;
      }
      if (c.size() == 1 && !is_arg) continue;  // head gradient used directly as out_grad
      BackwardPlan::Sum sum{target, target_req == OpReq::kAdd, {}};
      for (auto& k : c) {
        if (k.task < 0) {
          sum.parts.push_back(plan->head_grads[k.slot]);
          continue;
        }
        NDArray part(target.shape());
        plan->req[k.task][k.slot] = OpReq::kWrite;
        plan->in_grads[k.task][k.slot] = part;
        sum.parts.push_back(part);
      }
      if (is_arg) plan->final_sums.push_back(std::move(sum));
      else plan->sums_before_node[producer_task[e_node]].push_back(std::move(sum));
    }
  }

  // Backward tasks in reverse topological order: a node waits for the consumers of its outputs.
  const size_t n = op_nodes_.size();
  plan->tasks = TaskGraph(n);
  for (uint32_t t = 0; t < n; ++t) {
    if (!plan->runs[t]) continue;
    std::vector<uint32_t> added;
    for (auto& in : graph_.node(op_nodes_[t]).inputs) {
      int p = producer_task[in.node_id];
      if (p < 0 || !plan->runs[p]) continue;
      uint32_t before = static_cast<uint32_t>(n - 1 - t), after = static_cast<uint32_t>(n - 1 - p);
      if (std::find(added.begin(), added.end(), after) != added.end()) continue;
      added.push_back(after);
      plan->tasks.AddDependency(before, after);
    }
  }
  backward_ = std::move(plan);
}

void Executor::Backward(const std::vector<NDArray>& head_grads) {
  InUseGuard guard(&in_use_, "Backward");
  if (!has_run_forward_) throw Error("Backward called before Forward");
  if (!backward_) BuildBackwardPlan();
  BackwardPlan& plan = *backward_;
  if (!head_grads.empty() && head_grads.size() != outputs_.size())
    throw Error(StrCat("Backward: ", head_grads.size(), " head gradients for ", outputs_.size(),
                       " outputs"));
  for (size_t h = 0; h < outputs_.size(); ++h) {
    if (h < head_grads.size() && !head_grads[h].is_none()) {
      if (head_grads[h].shape() != outputs_[h].shape())
        throw Error(StrCat("Backward: head gradient ", h, " has shape ", head_grads[h].shape(),
                           " but output ", h, " has shape ", outputs_[h].shape()));
      head_grads[h].CopyTo(&plan.head_grads[h]);
      plan.head_is_ones[h] = false;
    } else if (!plan.head_is_ones[h]) {
      plan.head_grads[h].Fill(1.0f);
      plan.head_is_ones[h] = true;
    }
  }
  const size_t n = op_nodes_.size();
  plan.tasks.Run([&](uint32_t task) {
    uint32_t t = static_cast<uint32_t>(n - 1 - task);
    if (!plan.runs[t]) return;
    for (auto& sum : plan.sums_before_node[t]) sum.Apply();
    if (node_inputs_empty_[t] && node_outputs_empty_[t]) return;  // empty gradients too
    uint32_t nid = op_nodes_[t];
    const NodeAttrs& attrs = graph_.node(nid).node->attrs;
    OpContext ctx{last_forward_train_, NodeSeed(nid)};
    BackwardArgs args{plan.out_grads[t], node_inputs_[t], node_outputs_[t], plan.req[t],
                      plan.in_grads[t]};
    attrs.op->backward(ctx, attrs, args);
  });
  for (auto& sum : plan.final_sums) sum.Apply();
}

namespace {
std::map<std::string, NDArray> Zip(const std::vector<std::string>& names,
                                   const std::vector<NDArray>& arrays) {
  std::map<std::string, NDArray> m;
  for (size_t i = 0; i < names.size() && i < arrays.size(); ++i) m[names[i]] = arrays[i];
  return m;
}
}  // namespace

std::map<std::string, NDArray> Executor::arg_dict() const { return Zip(graph_.ListArguments(), arg_arrays_); }
std::map<std::string, NDArray> Executor::grad_dict() const { return Zip(graph_.ListArguments(), grad_arrays_); }
std::map<std::string, NDArray> Executor::aux_dict() const { return Zip(graph_.ListAuxiliaryStates(), aux_arrays_); }
std::map<std::string, NDArray> Executor::output_dict() const { return Zip(symbol().ListOutputs(), outputs_); }

std::unique_ptr<Executor> Bind(const Symbol& symbol, Context ctx,
                               const std::vector<NDArray>& arg_arrays,
                               const std::vector<NDArray>& grad_arrays,
                               const std::vector<OpReq>& grad_reqs,
                               const std::vector<NDArray>& aux_arrays, uint64_t seed) {
  return std::make_unique<Executor>(symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays, seed);
}

std::unique_ptr<Executor> SimpleBind(const Symbol& symbol, Context ctx,
                                     const std::map<std::string, NDArray>& args_map,
                                     const std::map<std::string, NDArray>& arg_grad_store,
                                     const std::map<std::string, OpReq>& grad_req_type,
                                     const std::map<std::string, NDArray>& aux_map,
                                     const SimpleBindOptions& options) {
  Graph graph(symbol);
  const auto arg_names = graph.ListArguments();
  const auto aux_names = graph.ListAuxiliaryStates();
  auto check_names = [&](const std::map<std::string, NDArray>& m, const std::vector<std::string>& valid,
                         const char* what) {
    for (auto& kv : m)
      if (std::find(valid.begin(), valid.end(), kv.first) == valid.end()) {
        throw Error(StrCat("SimpleBind: '", kv.first, "' given in ", what, " is not one of the ",
                           what == std::string("aux_map") ? "aux states" : "arguments", ": ",
                           JoinNames(valid)));
      }
  };
  check_names(args_map, arg_names, "args_map");
  check_names(arg_grad_store, arg_names, "arg_grad_store");
  check_names(aux_map, aux_names, "aux_map");

  std::map<std::string, TShape> known = options.shapes;
  for (auto& kv : args_map) known[kv.first] = kv.second.shape();
  for (auto& kv : aux_map) known[kv.first] = kv.second.shape();
  ShapeInferResult shapes = InferShape(graph, known);
  std::map<std::string, DType> known_types;
  for (auto& kv : args_map) known_types[kv.first] = kv.second.dtype();
  for (auto& kv : aux_map) known_types[kv.first] = kv.second.dtype();
  TypeInferResult types = InferType(graph, known_types);
  auto req_for = [&](const std::string& name) {
    auto r = grad_req_type.find(name);
    OpReq req = r != grad_req_type.end()                ? r->second
                : options.grads == GradPolicy::kNone    ? OpReq::kNull
                : options.grads == GradPolicy::kAll     ? OpReq::kWrite
                                                        : GradReqByName(name);
    return req == OpReq::kWriteInplace ? OpReq::kWrite : req;
  };
  {
    // Everything this bind would allocate, checked before the first allocation.
    std::vector<PlannedArray> planned = PlannedOpOutputs(graph, shapes.entry_shapes, types.entry_types);
    for (size_t i = 0; i < arg_names.size(); ++i) {
      if (!args_map.count(arg_names[i]))
        planned.push_back({arg_names[i], {}, shapes.arg_shapes[i], types.arg_types[i]});
      if (!arg_grad_store.count(arg_names[i]) && req_for(arg_names[i]) != OpReq::kNull)
        planned.push_back({"gradient of " + arg_names[i], {}, shapes.arg_shapes[i], types.arg_types[i]});
    }
    for (size_t i = 0; i < aux_names.size(); ++i)
      if (!aux_map.count(aux_names[i]))
        planned.push_back({aux_names[i], {}, shapes.aux_shapes[i], types.aux_types[i]});
    CheckBindMemory(planned, "SimpleBind");
  }

  std::vector<NDArray> args, grads, aux;
  std::vector<OpReq> reqs;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const std::string& name = arg_names[i];
    auto it = args_map.find(name);
    if (it != args_map.end()) {
      if (it->second.shape() != shapes.arg_shapes[i])
        throw ShapeError(StrCat("SimpleBind: argument '", name, "' has shape ", it->second.shape(),
                                " but the graph needs ", shapes.arg_shapes[i]));
      args.push_back(it->second);
    } else {
      NDArray a(shapes.arg_shapes[i], types.arg_types[i], ctx);
      FillGaussian(a, options.seed, name);
      args.push_back(a);
    }
    const OpReq req = req_for(name);
    reqs.push_back(req);
    auto g = arg_grad_store.find(name);
    if (g != arg_grad_store.end()) {
      if (g->second.shape() != shapes.arg_shapes[i])
        throw ShapeError(StrCat("SimpleBind: gradient for '", name, "' has shape ", g->second.shape(),
                                " but the argument has shape ", shapes.arg_shapes[i]));
      grads.push_back(g->second);
    } else {
      grads.push_back(req == OpReq::kNull ? NDArray() : NDArray(shapes.arg_shapes[i], types.arg_types[i], ctx));
    }
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto it = aux_map.find(aux_names[i]);
    if (it != aux_map.end()) {
      if (it->second.shape() != shapes.aux_shapes[i])
        throw ShapeError(StrCat("SimpleBind: aux state '", aux_names[i], "' has shape ", it->second.shape(),
                                " but the graph needs ", shapes.aux_shapes[i]));
      aux.push_back(it->second);
    } else {
      NDArray a(shapes.aux_shapes[i], types.aux_types[i], ctx);
      FillGaussian(a, options.seed, aux_names[i]);
      aux.push_back(a);
    }
  }
  return std::make_unique<Executor>(std::move(graph), ctx, args, grads, reqs, aux, options.seed,
                                    std::move(shapes.entry_shapes), std::move(types.entry_types),
                                    options.workspace, options.buffer_sharing);
}

OpReq GradReqByName(const std::string& arg_name) {
  return EndsWith(arg_name, "data") || EndsWith(arg_name, "label") ? OpReq::kNull : OpReq::kWrite;
}

void InferArgsMap(const Symbol& symbol, Context ctx, std::map<std::string, NDArray>* args_map,
                  const std::map<std::string, NDArray>& known_args) {
  std::map<std::string, TShape> known;
  for (auto& kv : known_args) known[kv.first] = kv.second.shape();
  ShapeInferResult r = InferShapePartial(symbol, known);
  auto names = symbol.ListArguments();
  for (size_t i = 0; i < names.size(); ++i) {
    if (args_map->count(names[i])) continue;
    auto k = known_args.find(names[i]);
    if (k != known_args.end()) (*args_map)[names[i]] = k->second;
    else if (r.arg_shapes[i].is_known()) (*args_map)[names[i]] = NDArray(r.arg_shapes[i], DType::kFloat32, ctx);
  }
}

}  // namespace symbind
