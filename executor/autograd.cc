#include "autograd.h"

#include <map>
#include <unordered_set>
#include <utility>

#include <symbind/core/error.h>

#include "kernel_call.h"

namespace symbind {
namespace autograd {

namespace {

thread_local bool recording = false;
thread_local bool training = false;

NDArray ZerosLike(const NDArray& a) { return NDArray(a.shape(), a.dtype(), a.ctx()); }

// `into` += `value` (same shape and dtype).
void AddInto(const NDArray& into, const NDArray& value) {
  NDArray out = into;
  Invoke("elemwise_add", {}, {into, value}, {out});
}

// Where a gradient accumulates: a node's output, or a variable.
using GradKey = std::pair<const void*, uint32_t>;
GradKey KeyOf(const Entry& e) {
  return e.node ? GradKey(e.node.get(), e.index) : GradKey(&e, UINT32_MAX);
}

// Nodes reachable from `heads`, inputs before the nodes that read them.
std::vector<Node*> TopologicalOrder(const std::vector<EntryPtr>& heads) {
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  // Iterative post-order: deep graphs (long RNN unrolls) must not exhaust the stack.
  std::vector<std::pair<Node*, size_t>> stack;
  for (const EntryPtr& h : heads) {
    if (!h || !h->node || !seen.insert(h->node.get()).second) continue;
    stack.emplace_back(h->node.get(), 0);
    while (!stack.empty()) {
      Node* n = stack.back().first;
      size_t& next = stack.back().second;
      if (next < n->inputs.size()) {
        const EntryPtr& in = n->inputs[next++];
        if (in && in->node && seen.insert(in->node.get()).second) stack.emplace_back(in->node.get(), 0);
        continue;
      }
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

// An input's entry as a new node keeps it: an output of a graph a backward has freed has no
// history left, so it counts as a constant (MXNet clears such arrays' autograd info).
EntryPtr Tracked(const EntryPtr& e) { return e && e->node && e->node->freed ? nullptr : e; }

}  // namespace

bool IsRecording() { return recording; }
bool IsTraining() { return training; }
bool SetRecording(bool value) { return std::exchange(recording, value); }
bool SetTraining(bool value) { return std::exchange(training, value); }

EntryPtr MarkVariable(const NDArray& grad, OpReq grad_req) {
  auto e = std::make_shared<Entry>();
  e->grad = grad;
  e->grad_req = grad_req;
  return e;
}

std::vector<EntryPtr> RecordOp(const InvokedCall& call, const std::vector<EntryPtr>& entries,
                               const InvokeOptions& options) {
  const Op& op = *call.attrs.op;
  auto node = std::make_shared<Node>();
  node->name = op.name;
  node->attrs = call.attrs;
  node->in_arrays = call.inputs;
  node->out_arrays = call.outputs;
  node->num_differentiable = op.ListArguments(call.attrs).size();
  for (size_t source : call.input_source)
    node->inputs.push_back(source < entries.size() ? Tracked(entries[source]) : nullptr);
  if (op.backward) {
    const bool is_train = options.is_train;
    const uint64_t seed = options.seed;
    Node* self = node.get();
    node->backward = [is_train, seed, self](const std::vector<NDArray>& out_grads,
                                           const std::vector<NDArray>& in_grads) {
      std::vector<OpReq> req(in_grads.size(), OpReq::kWrite);
      OpContext ctx;
      ctx.is_train = is_train;
      ctx.seed = seed;
      CallBackward(*self->attrs.op, ctx, self->attrs,
                   BackwardArgs{out_grads, self->in_arrays, self->out_arrays, req, in_grads});
    };
  }
  std::vector<EntryPtr> out;
  const int visible = op.NumVisibleOutputs(call.attrs);
  for (int i = 0; i < visible; ++i) {
    auto e = std::make_shared<Entry>();
    e->node = node;
    e->index = static_cast<uint32_t>(i);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<EntryPtr> RecordFunction(const std::string& name, const std::vector<NDArray>& inputs,
                                     const std::vector<EntryPtr>& entries,
                                     const std::vector<NDArray>& outputs, BackwardFn backward) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->in_arrays = inputs;
  node->out_arrays = outputs;
  node->num_differentiable = inputs.size();
  for (const EntryPtr& e : entries) node->inputs.push_back(Tracked(e));
  node->inputs.resize(inputs.size());
  node->backward = std::move(backward);
  std::vector<EntryPtr> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto e = std::make_shared<Entry>();
    e->node = node;
    e->index = static_cast<uint32_t>(i);
    out.push_back(std::move(e));
  }
  return out;
}

Symbol GetSymbol(const std::vector<EntryPtr>& heads) {
  std::map<const Node*, std::shared_ptr<symbind::Node>> made;
  std::map<const Entry*, std::shared_ptr<symbind::Node>> variables;
  int next_variable = 0;
  auto variable = [&](const Entry* key) {
    auto& v = variables[key];
    if (!v) {
      v = std::make_shared<symbind::Node>();
      v->attrs.name = StrCat("var", next_variable++);
    }
    return v;
  };
  int next_op = 0;
  for (Node* n : TopologicalOrder(heads)) {
    if (!n->attrs.op)
      throw Error(StrCat("autograd.get_symbol: the recorded graph holds a ", n->name,
                         " (a function recorded with its own backward), which has no operator to show"));
    auto s = std::make_shared<symbind::Node>();
    s->attrs = n->attrs;
    s->attrs.name = StrCat(n->attrs.op->name, next_op++);
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const EntryPtr& in = n->inputs[i];
      if (in && in->node) s->inputs.push_back(NodeEntry{made.at(in->node.get()), in->index});
      else s->inputs.push_back(NodeEntry{variable(in ? in.get() : reinterpret_cast<const Entry*>(&n->in_arrays[i])), 0});
    }
    made[n] = s;
  }
  std::vector<NodeEntry> outputs;
  for (const EntryPtr& h : heads) {
    if (!h) throw Error("autograd.get_symbol: the array is not in a recorded graph");
    outputs.push_back(h->node ? NodeEntry{made.at(h->node.get()), h->index} : NodeEntry{variable(h.get()), 0});
  }
  return Symbol::FromEntries(std::move(outputs));
}

std::vector<NDArray> Backward(const std::vector<EntryPtr>& heads, const std::vector<NDArray>& head_values,
                              const std::vector<NDArray>& head_grads, const std::vector<EntryPtr>& variables,
                              bool retain_graph, bool is_train) {
  if (heads.size() != head_values.size())
    throw Error(StrCat("backward: ", heads.size(), " heads but ", head_values.size(), " head arrays"));
  if (!head_grads.empty() && head_grads.size() != heads.size())
    throw Error(StrCat("backward: ", heads.size(), " heads but ", head_grads.size(), " head gradients"));
  std::map<GradKey, NDArray> grads;
  auto accumulate = [&](const Entry& e, const NDArray& g) {
    auto it = grads.find(KeyOf(e));
    if (it == grads.end()) grads.emplace(KeyOf(e), g);
    else AddInto(it->second, g);
  };
  for (size_t i = 0; i < heads.size(); ++i) {
    if (!heads[i])
      throw Error(StrCat("backward: head ", i, " is not in a recorded graph: compute it inside "
                         "autograd.record() from arrays with attach_grad()"));
    NDArray g;
    if (i < head_grads.size() && !head_grads[i].is_none()) {
      if (head_grads[i].shape() != head_values[i].shape())
        throw ShapeError(StrCat("backward: head gradient ", i, " has shape ", head_grads[i].shape().ToString(),
                                ", the head has ", head_values[i].shape().ToString()));
      g = head_grads[i].Copy();
    } else {
      g = NDArray(head_values[i].shape(), head_values[i].dtype(), head_values[i].ctx());
      g.Fill(1.0f);
    }
    accumulate(*heads[i], g);
  }

  const std::vector<Node*> order = TopologicalOrder(heads);
  // Only gradients that reach a variable taking one are computed: arrays made from constants
  // while recording (Python's index arrays, say) stay out of the backward pass, as in MXNet.
  std::unordered_set<const Entry*> asked(variables.size());
  for (const EntryPtr& v : variables) asked.insert(v.get());
  std::unordered_set<const Node*> leads;
  auto leads_to_variable = [&](const EntryPtr& e) {
    if (!e) return false;
    if (e->node) return leads.count(e->node.get()) > 0;
    return variables.empty() ? e->grad_req != OpReq::kNull && !e->grad.is_none() : asked.count(e.get()) > 0;
  };
  for (Node* n : order)
    for (size_t i = 0; i < n->num_differentiable && i < n->inputs.size(); ++i)
      if (leads_to_variable(n->inputs[i])) {
        leads.insert(n);
        break;
      }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    if (n->freed)
      throw Error(StrCat("backward: the graph through '", n->name, "' was freed by an earlier backward; "
                         "pass retain_graph=True to the first backward to run backward twice"));
    std::vector<NDArray> out_grads;
    bool reached = false;
    for (uint32_t i = 0; i < n->out_arrays.size(); ++i) {
      auto g = grads.find(GradKey(n, i));
      reached |= g != grads.end();
      out_grads.push_back(g != grads.end() ? g->second : ZerosLike(n->out_arrays[i]));
    }
    if (!reached || !leads.count(n)) continue;
    if (!n->backward)
      throw Error(StrCat("backward: operator '", n->name, "' is not differentiable"));
    std::vector<NDArray> in_grads;
    for (size_t i = 0; i < n->num_differentiable; ++i) in_grads.push_back(ZerosLike(n->in_arrays[i]));
    n->backward(out_grads, in_grads);
    for (size_t i = 0; i < n->num_differentiable && i < n->inputs.size(); ++i)
      if (leads_to_variable(n->inputs[i])) accumulate(*n->inputs[i], in_grads[i]);
    (void)is_train;
  }

  std::vector<NDArray> result;
  if (!variables.empty()) {
    for (const EntryPtr& v : variables) {
      if (!v) throw Error("backward: a variable asked for is not marked (attach_grad / mark_variables)");
      auto g = grads.find(KeyOf(*v));
      if (g != grads.end()) result.push_back(g->second);
      else if (!v->grad.is_none()) result.push_back(ZerosLike(v->grad));
      else throw Error("backward: a variable asked for has no gradient array");
    }
  } else {
    // Every variable reached takes its gradient by its grad_req.
    std::unordered_set<const Entry*> done;
    auto deliver = [&](const EntryPtr& e) {
      if (!e || !e->is_variable() || !done.insert(e.get()).second) return;
      auto g = grads.find(KeyOf(*e));
      if (g == grads.end() || e->grad.is_none() || e->grad_req == OpReq::kNull) return;
      if (g->second.shape() != e->grad.shape())
        throw ShapeError(StrCat("backward: a gradient of shape ", g->second.shape().ToString(),
                                " for a variable whose gradient array has shape ", e->grad.shape().ToString()));
      e->fresh_grad = true;
      if (e->grad_req == OpReq::kAdd) {
        AddInto(e->grad, g->second);
      } else {
        NDArray dst = e->grad;
        g->second.CopyTo(&dst);
      }
    };
    for (const EntryPtr& h : heads) deliver(h);
    for (Node* n : order)
      for (const EntryPtr& in : n->inputs) deliver(in);
  }
  if (!retain_graph) {
    for (Node* n : order) {
      n->freed = true;
      n->in_arrays.clear();
      n->out_arrays.clear();
      n->inputs.clear();
    }
  }
  return result;
}

}  // namespace autograd
}  // namespace symbind
