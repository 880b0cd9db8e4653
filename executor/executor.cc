#include "executor.h"

// Executor: bind-time setup (arrays, memory plan, forward task graph), Forward and profiling.
// Binding entry points are in bind.cc, Backward in backward.cc.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>

#include "backward_plan.h"
#include "bind_memory.h"
#include "in_use_guard.h"
#include "kernel_call.h"
#include "memory_plan.h"
#include "seed.h"
#include "task_graph.h"

namespace symbind {

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
  RequireStaticShapes(graph_);
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
  std::optional<BindMemoryReservation> outputs_reservation;
  if (!inferred_by_caller) outputs_reservation.emplace(ReserveBindMemory(PlannedOpOutputs(graph_, shapes, types), "Bind"));
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
  if (outputs_reservation) {  // checked unshared, held as planned (as SimpleBind does)
    outputs_reservation->Release(memory_.unplanned_bytes - std::min(memory_.unplanned_bytes, memory_.output_bytes));
    HoldBindMemory(std::move(*outputs_reservation));
  }
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
  node_states_.resize(op_nodes_.size());
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    node_inputs_empty_.push_back(all_empty(node_inputs_[t]));
    node_outputs_empty_.push_back(all_empty(node_outputs_[t]));
    const NodeAttrs& attrs = graph_.node(op_nodes_[t]).node->attrs;
    if (!attrs.op->create_state || node_outputs_empty_[t]) continue;
    std::vector<TShape> in_shapes, out_shapes;
    for (const NDArray& a : node_inputs_[t]) in_shapes.push_back(a.shape());
    for (const NDArray& a : node_outputs_[t]) out_shapes.push_back(a.shape());
    node_states_[t] = attrs.op->create_state(attrs, in_shapes, out_shapes);
  }
}

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

  MemoryPlanInputs plan_inputs;
  plan_inputs.op_nodes = op_nodes_;
  std::vector<size_t>& entry_bytes = plan_inputs.entry_bytes;
  std::vector<bool>& keep = plan_inputs.keep;
  entry_bytes.assign(graph_.num_entries(), 0);
  keep.assign(graph_.num_entries(), true);
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
    plan_inputs.strided_writer.assign(graph_.num_entries(), false);
    for (uint32_t nid : op_nodes_) {
      const NodeAttrs& attrs = graph_.node(nid).node->attrs;
      plan_inputs.inplace.push_back(attrs.op->forward_inplace);
      JoinLayout join = JoinOffsets(nid, shapes, types);
      plan_inputs.join_offsets.push_back(std::move(join.offsets));
      plan_inputs.join_row_bytes.push_back(join.row_bytes);
      plan_inputs.join_rewrites.push_back(attrs.op->join_rewrites_inputs);
      plan_inputs.strided_writer[graph_.entry_id(nid, 0)] = attrs.op->strided_output && attrs.op->strided_output(attrs);
    }
    plan = PlanMemory(graph_, plan_inputs);
    memory_.joined_in_place = plan.num_joined;
  }
  output_image_stride_.assign(op_nodes_.size(), 0);
  for (size_t t = 0; t < op_nodes_.size() && memory_.planned; ++t) {
    const uint32_t e = graph_.entry_id(op_nodes_[t], 0);
    if (plan.joined_row_bytes[e] > 0)
      output_image_stride_[t] = static_cast<int64_t>(plan.joined_row_bytes[e] / DTypeSize(EntryDType(types, e)));
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
  auto joined = [&](uint32_t e) { return memory_.planned && plan.joined_into[e] != MemoryPlan::kNotJoined; };
  for (uint32_t nid : op_nodes_)
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) {
      uint32_t e = graph_.entry_id(nid, i);
      if (joined(e)) continue;
      int b = memory_.planned ? plan.block_of_entry[e] : MemoryPlan::kOwnStorage;
      if (b == MemoryPlan::kOwnStorage) {
        entry_arrays_[e] = NDArray(shapes[e], EntryDType(types, e), ctx_);
        memory_.output_bytes += entry_bytes[e];
      } else {
        entry_arrays_[e] = NDArray::View(blocks[static_cast<size_t>(b)], plan.offset_of_entry[e], shapes[e],
                                         EntryDType(types, e), ctx_);
      }
    }
  // Joined entries are views into their join output (its own storage, or its place in the block).
  for (uint32_t nid : op_nodes_)
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) {
      uint32_t e = graph_.entry_id(nid, i);
      if (!joined(e)) continue;
      const size_t h = static_cast<size_t>(plan.joined_into[e]);
      const size_t holder_offset = plan.block_of_entry[h] == MemoryPlan::kOwnStorage ? 0 : plan.offset_of_entry[h];
      entry_arrays_[e] = NDArray::View(entry_arrays_[h].storage(), holder_offset + plan.joined_offset[e], shapes[e],
                                       EntryDType(types, e), ctx_);
    }
  reuse_dependencies_ = std::move(plan.reuse_dependencies);
}

Executor::JoinLayout Executor::JoinOffsets(uint32_t nid, const std::vector<TShape>& shapes,
                                           const std::vector<int>& types) const {
  const auto& node = graph_.node(nid);
  const NodeAttrs& attrs = node.node->attrs;
  const uint32_t out = graph_.entry_id(nid, 0);
  const TShape& shape = shapes[out];
  if (!attrs.op->join_axis || shape.ndim() == 0) return {};
  const int axis = attrs.op->join_axis(attrs, static_cast<int>(shape.ndim()));
  // Each input is one contiguous run of the output when nothing precedes the axis; along axis
  // 1 of several images, one run per image, the output's image apart.
  int outer_axes = 0;
  for (int d = 0; d < axis; ++d)
    if (shape[static_cast<size_t>(d)] != 1) ++outer_axes;
  const bool per_image = axis == 1 && outer_axes == 1;
  if (outer_axes > 0 && !per_image) return {};
  const DType dtype = EntryDType(types, out);
  const size_t images = per_image ? static_cast<size_t>(shape[0]) : 1;
  JoinLayout join;
  size_t at = 0;
  // The inputs joined are those before the first of another type than the output's: all of a
  // Concat's, a quantized concat's levels (its float ranges follow them).
  for (auto& in : node.inputs) {
    const uint32_t e = graph_.entry_id(in);
    if (EntryDType(types, e) != dtype) break;
    join.offsets.push_back(at);
    at += static_cast<size_t>(shapes[e].Size()) * DTypeSize(dtype) / images;
  }
  if (at * images != static_cast<size_t>(shape.Size()) * DTypeSize(dtype)) return {};
  if (per_image) join.row_bytes = at;
  return join;
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

void Executor::HoldBindMemory(BindMemoryReservation reservation) { bind_memory_.push_back(std::move(reservation)); }

uint64_t Executor::BindMemoryHeld() const {
  uint64_t held = 0;
  for (const BindMemoryReservation& r : bind_memory_) held += r.bytes();
  return held;
}

uint64_t Executor::NodeSeed(uint32_t node_id) const {
  return MixSeed(MixSeed(seed_, node_id), run_counter_);
}

std::shared_ptr<Storage> Workspace::Block(size_t rank, size_t bytes) {
  // Address space to grow into in place: a block that must grow stays where it is, so the
  // executors bound with it before share its memory instead of keeping the old block beside
  // the new one (pages take memory only once used).
  constexpr size_t kReserve = size_t{1} << 30;
  std::lock_guard<std::mutex> lock(mu_);
  if (rank >= blocks_.size()) blocks_.resize(rank + 1);
  std::shared_ptr<Storage>& block = blocks_[rank];
  if (block && block->bytes() >= bytes) return block;
  std::shared_ptr<Storage> grown = block ? block->Grown(bytes) : nullptr;
  block = grown ? grown : Storage::Reserved(bytes, kReserve, "a shared workspace buffer");
  return block;
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
  OpContext ctx{is_train, NodeSeed(nid), output_image_stride_[t], node_states_[t].get(), precision_,
                compact_weights_, int8_even_weights_};
  std::vector<OpReq> req(node_outputs_[t].size(), OpReq::kWrite);
  if (!profiling_) return CallForward(*attrs.op, ctx, attrs, node_inputs_[t], req, node_outputs_[t]);
  auto start = std::chrono::steady_clock::now();
  CallForward(*attrs.op, ctx, attrs, node_inputs_[t], req, node_outputs_[t]);
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
    last_forward_train_ = is_train;
    partial_steps_done_ = 0;
  }
  return steps - step - 1;
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

}  // namespace symbind
