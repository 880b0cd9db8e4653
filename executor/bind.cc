// Binding: the memory bound checked before anything is allocated, SimpleBind (arrays by name,
// the rest allocated and Gaussian-filled, grad_req by MXNet's name rule) and Bind.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>

#include "bind_memory.h"
#include "executor.h"
#include "seed.h"

namespace symbind {

namespace {
std::atomic<uint64_t> g_max_bind_bytes{0};  // 0: environment variable or the default
std::atomic<uint64_t> g_reserved_bind_bytes{0};  // what live executors hold (BindMemoryReservation)

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return b != 0 && a > std::numeric_limits<uint64_t>::max() / b ? std::numeric_limits<uint64_t>::max()
                                                                : a * b;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
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

BindMemoryReservation::~BindMemoryReservation() { g_reserved_bind_bytes.fetch_sub(bytes_); }

void BindMemoryReservation::Release(uint64_t bytes) {
  bytes = std::min(bytes, bytes_);
  bytes_ -= bytes;
  g_reserved_bind_bytes.fetch_sub(bytes);
}

uint64_t ReservedBindBytes() { return g_reserved_bind_bytes.load(); }

BindMemoryReservation ReserveBindMemory(const std::vector<PlannedArray>& arrays, const char* who,
                                        uint64_t already_held, uint64_t own_reserved) {
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
    total = SaturatingAdd(total, bytes);
  }
  if (total > limit)
    throw OutOfMemoryError(StrCat(who, ": the ", arrays.size(), " arrays to allocate need ",
                                  total - already_held, " bytes",
                                  already_held ? StrCat(" (with the ", already_held, " bytes the executor holds, ", total, ")")
                                               : std::string(),
                                  " together, more than ", LimitHint(limit)));
  const uint64_t wanted = total - already_held;
  uint64_t reserved = g_reserved_bind_bytes.load();
  do {
    const uint64_t others = reserved - std::min(reserved, own_reserved);
    if (SaturatingAdd(total, others) > limit)
      throw OutOfMemoryError(StrCat(who, ": the ", arrays.size(), " arrays to allocate need ", wanted,
                                    " bytes and the executors alive in this process hold ", others,
                                    " bytes: together more than ", LimitHint(limit),
                                    ", which bounds all executors of the process"));
  } while (!g_reserved_bind_bytes.compare_exchange_weak(reserved, reserved + wanted));
  return BindMemoryReservation(wanted);
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
  if (pages <= 0 || page_size <= 0) return kDefaultMaxBindBytes;
  return std::min(kDefaultMaxBindBytes, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 2);
}

void SetMaxBindBytes(uint64_t bytes) { g_max_bind_bytes.store(bytes); }

std::string OutOfMemoryMessage(const std::string& during) {
  return StrCat(during, ": out of memory: an allocation failed (std::bad_alloc); give smaller inputs, or "
                "lower SYMBIND_MAX_BIND_BYTES so that binding refuses such sizes before allocating");
}

void FillGaussian(const NDArray& a, uint64_t seed, const std::string& name) {
  uint64_t h = seed;
  for (char c : name) h = MixSeed(h, static_cast<unsigned char>(c));
  std::mt19937_64 engine(h);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  if (a.dtype() == DType::kFloat32 && !a.read_only()) {  // the common case, without SetFlat's per-element checks
    float* p = a.fdata();
    for (int64_t i = 0, n = a.Size(); i < n; ++i) p[i] = dist(engine);
    return;
  }
  for (int64_t i = 0, n = a.Size(); i < n; ++i) a.SetFlat(i, dist(engine));
}


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
  std::optional<BindMemoryReservation> reservation;
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
    reservation.emplace(ReserveBindMemory(planned, "SimpleBind"));
  }

  // Inputs placed in the shared input workspace: one after the other, aligned as arrays are.
  std::map<std::string, size_t> input_offsets;
  std::shared_ptr<Storage> input_block;
  if (options.input_workspace) {
    size_t bytes = 0;
    for (size_t i = 0; i < arg_names.size(); ++i) {
      if (args_map.count(arg_names[i]) || !options.zeroed.count(arg_names[i])) continue;
      input_offsets[arg_names[i]] = bytes;
      const size_t size = static_cast<size_t>(shapes.arg_shapes[i].Size()) * DTypeSize(types.arg_types[i]);
      bytes += (size + Storage::kAlignment - 1) / Storage::kAlignment * Storage::kAlignment;
    }
    if (bytes > 0) input_block = options.input_workspace->Block(0, bytes);
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
    } else if (input_offsets.count(name)) {
      args.push_back(NDArray::View(input_block, input_offsets.at(name), shapes.arg_shapes[i], types.arg_types[i], ctx));
    } else {
      NDArray a(shapes.arg_shapes[i], types.arg_types[i], ctx);
      if (!options.zeroed.count(name)) FillGaussian(a, options.seed, name);
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
  auto exec = std::make_unique<Executor>(std::move(graph), ctx, args, grads, reqs, aux, options.seed,
                                         std::move(shapes.entry_shapes), std::move(types.entry_types),
                                         options.workspace, options.buffer_sharing);
  // Checked as if every op output had its own buffer; held as the memory plan allocated them.
  const ExecutorMemory& memory = exec->memory();
  reservation->Release(memory.unplanned_bytes - std::min(memory.unplanned_bytes, memory.output_bytes));
  exec->HoldBindMemory(std::move(*reservation));
  return exec;
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
