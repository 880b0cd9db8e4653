// Executor::Backward: the gradient plan (which nodes run, where each gradient is written or
// summed), built at the first Backward, and its run in reverse topological order.
#include <algorithm>

#include "backward_plan.h"
#include "bind_memory.h"
#include "executor.h"
#include "in_use_guard.h"
#include "kernel_call.h"
#include "task_graph.h"

namespace symbind {

namespace {
// The dtype of the executor's own gradient buffers (head gradients, sums, parts): float64 for
// float64 entries, so that float64 gradients keep their precision, float32 for the rest.
DType GradientDType(const NDArray& entry) {
  return entry.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}
}  // namespace

Executor::GradientFlow Executor::PlanGradientFlow(const char* where) const {
  GradientFlow flow;
  const size_t num_entries = graph_.num_entries();
  // Which entries need a gradient: arguments with a non-null req, and outputs of ops that
  // have an input needing one.
  std::vector<bool>& needs = flow.needs;
  needs.assign(num_entries, false);
  flow.arg_index.assign(graph_.num_nodes(), -1);
  {
    int a = 0;
    for (uint32_t id : graph_.arg_nodes())
      if (!graph_.is_aux_node(id)) {
        flow.arg_index[id] = a;
        needs[graph_.entry_id(id, 0)] = grad_reqs_[static_cast<size_t>(a)] != OpReq::kNull;
        ++a;
      }
  }
  // Which entries can receive a non-zero gradient: the heads, and the inputs of nodes that
  // receive one, unless the op's gradient is zero (MXNet's zero-gradient pruning).
  std::vector<bool> reached(num_entries, false);
  for (const auto& head : graph_.heads()) reached[graph_.entry_id(head)] = true;
  for (size_t r = op_nodes_.size(); r-- > 0;) {
    const uint32_t nid = op_nodes_[r];
    const auto& info = graph_.node(nid);
    bool any = false;
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) any = any || reached[graph_.entry_id(nid, i)];
    if (!any || info.node->attrs.op->zero_gradient) continue;
    for (const auto& in : info.inputs) reached[graph_.entry_id(in)] = true;
  }
  flow.runs.assign(op_nodes_.size(), false);
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    uint32_t nid = op_nodes_[t];
    const auto& info = graph_.node(nid);
    auto aux_mask = AuxInputMask(*info.node);
    bool any = false, reaches = false;
    for (size_t k = 0; k < info.inputs.size(); ++k)
      if (!aux_mask[k] && needs[graph_.entry_id(info.inputs[k])]) any = true;
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) reaches = reaches || reached[graph_.entry_id(nid, i)];
    if (!any || !reaches) continue;
    if (!info.node->attrs.op->backward)
      throw Error(StrCat(where, ": operator ", info.node->name(), " (", info.node->attrs.op->name,
                         ") has no gradient, but its inputs need one"));
    flow.runs[t] = true;
    for (uint32_t i = 0; i < graph_.num_node_outputs(nid); ++i) needs[graph_.entry_id(nid, i)] = true;
  }
  return flow;
}

void Executor::BuildBackwardPlan() {
  auto plan = std::make_unique<BackwardPlan>();
  const size_t num_entries = graph_.num_entries();
  GradientFlow flow = PlanGradientFlow("Backward");
  const std::vector<bool>& needs = flow.needs;
  const std::vector<int>& arg_index = flow.arg_index;
  plan->runs = std::move(flow.runs);

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
      planned.push_back({StrCat("head gradient ", h), {}, outputs_[h].shape(), GradientDType(outputs_[h])});
    for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
      if (!plan->runs[t]) continue;
      for (uint32_t i = 0; i < graph_.num_node_outputs(op_nodes_[t]); ++i) {
        const uint32_t e = graph_.entry_id(op_nodes_[t], i);
        const auto& c = contrib[e];
        const bool head_only = c.size() == 1 && c[0].task < 0;
        const TShape& shape = entry_arrays_[e].shape();
        const NodeEntry entry{graph_.node(op_nodes_[t]).node, i};
        const DType dtype = GradientDType(entry_arrays_[e]);
        if (!head_only) planned.push_back({"gradient", entry, shape, dtype});
        if (c.size() > 1)  // one buffer per contribution, summed
          for (auto& k : c)
            if (k.task >= 0) planned.push_back({"gradient part", entry, shape, dtype});
      }
    }
    for (uint32_t id : graph_.arg_nodes()) {
      const uint32_t e = graph_.entry_id(id, 0);
      if (arg_index[id] < 0 || contrib[e].size() < 2) continue;
      for (auto& k : contrib[e])
        if (k.task >= 0)
          planned.push_back({"gradient part of " + graph_.node(id).node->name(), {},
                             entry_arrays_[e].shape(), GradientDType(entry_arrays_[e])});
    }
    // Held: everything the executor works on (its op outputs and the arrays bound to it).
    uint64_t held = memory_.output_bytes;
    for (const auto* arrays : {&arg_arrays_, &grad_arrays_, &aux_arrays_})
      for (const NDArray& a : *arrays) held += a.bytes();
    HoldBindMemory(ReserveBindMemory(planned, "Backward", held, BindMemoryHeld()));
  }
  plan->head_grads.resize(outputs_.size());
  plan->head_is_ones.assign(outputs_.size(), true);
  plan->head_used.assign(outputs_.size(), false);
  for (size_t h = 0; h < outputs_.size(); ++h) {
    const auto& producer = *graph_.node(graph_.heads()[h].node_id).node;
    plan->head_used[h] = needs[graph_.entry_id(graph_.heads()[h])] &&
                         !(producer.attrs.op && producer.attrs.op->zero_gradient);
  }
  for (size_t h = 0; h < outputs_.size(); ++h) {
    plan->head_grads[h] = NDArray(outputs_[h].shape(), GradientDType(outputs_[h]));
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
      else entry_grad[e] = NDArray(entry_arrays_[e].shape(), GradientDType(entry_arrays_[e]));  // zero when nobody contributes
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
        NDArray part(target.shape(), GradientDType(target));
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
  // As MXNet, Backward may come first: the forward values are then the zeros bound (exact
  // for ops whose gradient does not read them, as repeat and tile).
  if (!backward_) BuildBackwardPlan();
  BackwardPlan& plan = *backward_;
  if (!head_grads.empty() && head_grads.size() != outputs_.size())
    throw Error(StrCat("Backward: ", head_grads.size(), " head gradients for ", outputs_.size(),
                       " outputs"));
  for (size_t h = 0; h < outputs_.size(); ++h) {
    // A head gradient nothing reads (the output of a zero-gradient op) is not looked at, as
    // in MXNet, whose pruned graph has no place for it.
    if (!plan.head_used[h]) continue;
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
    OpContext ctx{last_forward_train_, NodeSeed(nid), 0, node_states_[t].get()};
    BackwardArgs args{plan.out_grads[t], node_inputs_[t], node_outputs_[t], plan.req[t],
                      plan.in_grads[t]};
    CallBackward(*attrs.op, ctx, attrs, args);
  });
  for (auto& sum : plan.final_sums) sum.Apply();
}

}  // namespace symbind

namespace symbind {

std::vector<std::pair<std::string, NDArray>> Executor::BackwardNodeGradients() const {
  std::vector<std::pair<std::string, NDArray>> out;
  if (!backward_) return out;
  for (uint32_t t = 0; t < op_nodes_.size(); ++t) {
    if (!backward_->runs[t]) continue;
    const auto& node = *graph_.node(op_nodes_[t]).node;
    const std::vector<NDArray>& grads = backward_->in_grads[t];
    for (size_t k = 0; k < grads.size(); ++k) {
      if (grads[k].is_none()) continue;
      out.emplace_back(StrCat(node.name(), "_backward_output", grads.size() == 1 ? std::string() : std::to_string(k)),
                       grads[k]);
    }
  }
  return out;
}

}  // namespace symbind
