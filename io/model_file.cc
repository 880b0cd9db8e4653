#include "model_file.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <utility>

// Parameter data is 64-byte aligned (Storage::kAlignment); FlatBuffers caps forced alignment
// at 32 unless told otherwise (an assertion in debug builds).
#define FLATBUFFERS_MAX_ALIGNMENT 64
// The verifier then records where the last structure it checked ends (trailing bytes check).
#define FLATBUFFERS_TRACK_VERIFIER_BUFFER_SIZE
#include <flatbuffers/flatbuffers.h>

#include <symbind/core/graph.h>
#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/kernels/gemm_kernels.h>

#include "checkpoint.h"
#include "file_kind.h"
#include "mapped_file.h"
#include "model_generated.h"
#include "ndarray_file.h"
#include "regular_file.h"
#include "symbol_json.h"

namespace symbind {

namespace {

constexpr size_t kDataAlignment = Storage::kAlignment;
constexpr int kMaxNDim = 32;            // as the .params reader
constexpr int kMaxTableDepth = 16;      // the schema nests 3 deep

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  throw IOError(where + ": " + what);
}

uint32_t ReadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The root table and its vtable, checked before the FlatBuffers verifier so that the two
// commonest corruptions get a precise message (the verifier only says yes or no).
void CheckRoot(const uint8_t* data, size_t size, const std::string& where) {
  if (size < 8)
    Fail(where, StrCat("the file is ", size, " bytes; a .symbind file has at least 8 "
                       "(root offset and the identifier \"SBMD\")"));
  if (!fb::ModelBufferHasIdentifier(data)) {
    std::string id(reinterpret_cast<const char*>(data) + 4, 4);
    for (auto& c : id)
      if (c < 32 || c > 126) c = '?';
    Fail(where, StrCat("not a .symbind file: identifier '", id, "' at byte 4, expected 'SBMD'"));
  }
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    Fail(where, StrCat("the file is ", size, " bytes; FlatBuffers files are limited to ",
                       FLATBUFFERS_MAX_BUFFER_SIZE - 1));
  const uint64_t root = ReadU32(data);
  if (root % 4 != 0 || root + 4 > size)
    Fail(where, StrCat("root table offset ", root, " lies outside the ", size,
                       "-byte file or is not 4-byte aligned"));
  int32_t to_vtable;
  std::memcpy(&to_vtable, data + root, sizeof(to_vtable));
  const int64_t vtable = static_cast<int64_t>(root) - to_vtable;
  if (vtable < 0 || vtable % 2 != 0 || static_cast<uint64_t>(vtable) + 4 > size)
    Fail(where, StrCat("the root table's vtable at byte ", vtable, " lies outside the ", size,
                       "-byte file"));
  uint16_t vtable_bytes;
  std::memcpy(&vtable_bytes, data + vtable, sizeof(vtable_bytes));
  if (vtable_bytes < 4 || vtable_bytes % 2 != 0 || static_cast<uint64_t>(vtable) + vtable_bytes > size)
    Fail(where, StrCat("the root table's vtable at byte ", vtable, " claims ", vtable_bytes,
                       " bytes, which do not fit the ", size, "-byte file"));
}

// A vector of int64 copied out. The verifier checks a vector's 4-byte length prefix only;
// int64 elements need 8.
std::vector<int64_t> Int64s(const flatbuffers::Vector<int64_t>* v, const std::string& where,
                            const std::string& what) {
  if (!v) return {};
  if (v->size() > 0 && reinterpret_cast<uintptr_t>(v->data()) % alignof(int64_t) != 0)
    Fail(where, StrCat(what, " is not 8-byte aligned in the file"));
  return std::vector<int64_t>(v->begin(), v->end());
}

// Dims with each >= 0; the element count and byte size with overflow checks.
TShape CheckedShape(const flatbuffers::Vector<int64_t>* dims, const std::string& where,
                    const std::string& what) {
  std::vector<int64_t> d = Int64s(dims, where, what + ": its dims");
  if (d.size() > static_cast<size_t>(kMaxNDim))
    Fail(where, StrCat(what, " has ", d.size(), " dims; at most ", kMaxNDim, " are supported"));
  for (size_t k = 0; k < d.size(); ++k)
    if (d[k] < 0) Fail(where, StrCat(what, " has dim ", k, " = ", d[k], "; dims must be >= 0"));
  return TShape(std::move(d));
}

uint64_t CheckedBytes(const TShape& shape, DType dtype, const std::string& where,
                      const std::string& what) {
  uint64_t bytes = DTypeSize(dtype);
  for (int k = 0; k < shape.ndim(); ++k)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[k]), &bytes))
      Fail(where, StrCat(what, " of shape ", shape, " overflows 64-bit byte counts"));
  return bytes;
}

Symbol ReadGraph(const fb::Model& m, const std::string& where) {
  SymbolAssembler assembler(m.mxnet_version(), where + ": ");
  const auto& nodes = *m.nodes();
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const fb::Node& n = *nodes.Get(i);
    GraphNodeRecord r;
    r.op = n.op()->str();
    r.name = n.name()->str();
    if (n.attrs())
      for (const fb::Attr* a : *n.attrs()) {
        if (!r.attrs.emplace(a->key()->str(), a->value()->str()).second)
          Fail(where, StrCat("node ", i, " '", r.name, "' has attribute '", a->key()->str(), "' twice"));
      }
    if (n.inputs())
      for (const fb::Entry* e : *n.inputs()) r.inputs.push_back(GraphEntryRecord{e->node(), e->index()});
    try {
      assembler.AddNode(r);
    } catch (const ParamError& e) {
      throw ParamError(where + ": " + e.what());
    }
  }
  std::vector<GraphEntryRecord> heads;
  for (const fb::Entry* e : *m.heads()) heads.push_back(GraphEntryRecord{e->node(), e->index()});
  Symbol symbol = assembler.Finish(heads);

  // arg_nodes / aux_nodes mirror MXNet's JSON: every entry must be a variable, and the aux
  // states must be the graph's.
  auto check_variables = [&](const flatbuffers::Vector<uint32_t>* ids, const char* field) {
    std::set<std::string> names;
    if (!ids) return names;
    for (uint32_t id : *ids) {
      if (id >= nodes.size())
        Fail(where, StrCat(field, " lists node ", id, " but the graph has ", nodes.size(), " nodes"));
      if (nodes.Get(id)->op()->str() != "null")
        Fail(where, StrCat(field, " lists node ", id, " '", nodes.Get(id)->name()->str(),
                           "', which is not a variable"));
      names.insert(nodes.Get(id)->name()->str());
    }
    return names;
  };
  check_variables(m.arg_nodes(), "arg_nodes");
  const std::set<std::string> aux = check_variables(m.aux_nodes(), "aux_nodes");
  const auto graph_aux = symbol.ListAuxiliaryStates();
  if (aux != std::set<std::string>(graph_aux.begin(), graph_aux.end()))
    Fail(where, StrCat("aux_nodes lists ", aux.size(), " aux states but the graph has ",
                       graph_aux.size(), " (", JoinNames(graph_aux), ")"));
  return symbol;
}

// Where the stored forms of this process's instruction set lie: from the first form array's
// start to the last one's, found before the file is verified so that those bytes can be mapped
// as huge pages before anything reads them (kernels read all of them on every forward). It
// reads only the tables on the way, each within the verifier's bounds rules, never the arrays;
// {0, 0} when the file has no such forms or anything is amiss (the full verification reports it).
std::pair<size_t, size_t> StoredFormsExtent(const uint8_t* data, size_t size) {
  using Tables = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
  flatbuffers::Verifier v(data, size, kMaxTableDepth);
  // CheckRoot has checked the root offset.
  const auto* model = flatbuffers::GetRoot<flatbuffers::Table>(data);
  if (!model->VerifyTableStart(v) || !model->VerifyOffset(v, fb::Model::VT_FORMS_ISA) ||
      !model->VerifyOffset(v, fb::Model::VT_FORMS))
    return {0, 0};
  const auto* isa = model->GetPointer<const flatbuffers::String*>(fb::Model::VT_FORMS_ISA);
  const auto* forms = model->GetPointer<const Tables*>(fb::Model::VT_FORMS);
  if (!isa || !forms || !v.VerifyString(isa) || isa->str() != GemmIsa() || !v.VerifyVector(forms)) return {0, 0};
  size_t first = size, last = 0;
  for (flatbuffers::uoffset_t i = 0; i < forms->size(); ++i) {
    const flatbuffers::Table* form = forms->Get(i);
    if (!form->VerifyTableStart(v) || !form->VerifyOffset(v, fb::Form::VT_ARRAYS)) return {0, 0};
    const auto* arrays = form->GetPointer<const Tables*>(fb::Form::VT_ARRAYS);
    if (arrays && !v.VerifyVector(arrays)) return {0, 0};
    for (flatbuffers::uoffset_t j = 0; arrays && j < arrays->size(); ++j) {
      const flatbuffers::Table* array = arrays->Get(j);
      if (!array->VerifyTableStart(v) || !array->VerifyOffset(v, fb::FloatArray::VT_DATA)) return {0, 0};
      if (const auto* bytes = array->GetPointer<const uint8_t*>(fb::FloatArray::VT_DATA)) {
        first = std::min(first, static_cast<size_t>(bytes - data));
        last = std::max(last, static_cast<size_t>(bytes - data));
      }
      v.EndTable();
    }
    v.EndTable();
  }
  return first < last ? std::make_pair(first, last) : std::make_pair(size_t{0}, size_t{0});
}

// The file's stored forms into model->forms; those for this process's instruction set are
// handed to their parameters' storage, where the kernels find them (DerivedWeights).
void ReadForms(const fb::Model& m, const uint8_t* data, const std::shared_ptr<Storage>& storage,
               const std::shared_ptr<const void>& keep,
               const std::string& where, Model* model) {
  model->forms_isa = m.forms_isa() ? m.forms_isa()->str() : "";
  const bool this_isa = model->forms_isa == GemmIsa();
  for (uint32_t i = 0; i < m.forms()->size(); ++i) {
    const fb::Form& f = *m.forms()->Get(i);
    const std::string what = StrCat("stored form ", i);
    if (!m.params() || f.param() >= m.params()->size())
      Fail(where, StrCat(what, " names parameter ", f.param(), ", which the file does not have"));
    const std::string prefixed = m.params()->Get(f.param())->name()->str();
    StoredForm s;
    s.param = prefixed.substr(4);  // SplitArgAux checked the prefix
    const NDArray& param = prefixed.compare(0, 4, "arg:") == 0 ? model->args.at(s.param) : model->aux.at(s.param);
    s.codec = f.codec()->str();
    s.key = Int64s(f.key(), where, what + ": its key");
    s.header = Int64s(f.header(), where, what + ": its header");
    if (param.dtype() != DType::kFloat32 || !KeyHasShapeAt(s.key, 0, param.shape()))
      Fail(where, StrCat(what, " (", s.codec, ") does not belong to the float32 parameter '", s.param, "' of shape ",
                         param.shape()));
    std::vector<FloatSpan> spans;
    if (f.arrays())
      for (const fb::FloatArray* a : *f.arrays()) {
        const size_t bytes = a->data()->size(), offset = static_cast<size_t>(a->data()->data() - data);
        // An empty array has no data to align (FlatBuffers places it anywhere), as for parameters.
        if (bytes % sizeof(float) != 0 || (bytes > 0 && offset % kDataAlignment != 0))
          Fail(where, StrCat(what, " of '", s.param, "': an array of ", bytes, " bytes at byte ", offset,
                             " is not whole floats on a ", kDataAlignment, "-byte boundary"));
        const int64_t floats = static_cast<int64_t>(bytes / sizeof(float));
        NDArray array = floats ? NDArray::View(storage, offset, TShape({floats}))
                               : NDArray(TShape({0}));
        spans.push_back(FloatSpan{array.fdata(), floats});
        s.arrays.push_back(std::move(array));
      }
    const FormCodec* codec = FindFormCodec(s.codec);
    if (this_isa && codec && param.bytes() > 0 && param.read_only()) {
      std::shared_ptr<const void> value;
      try {
        value = codec->load(s.header, spans, keep);
      } catch (const Error& e) {
        Fail(where, StrCat(what, " (", s.codec, ") of '", s.param, "': ", e.what()));
      }
      if (value) {
        // As DerivedWeights keys it: the offset into the storage, then the stored key.
        std::vector<int64_t> key{OffsetInStorage(param)};
        key.insert(key.end(), s.key.begin(), s.key.end());
        param.storage()->AddDerivedForm(codec->type, std::move(key), std::move(value));
        ++model->forms_in_use;
      }
    }
    model->forms.push_back(std::move(s));
  }
}

// Verifies the image at `data` (which `owner` keeps alive, 64-byte aligned) and builds the
// model; parameter arrays view the image (a memory-mapped file when `file_mapped`).
Model ReadModel(const uint8_t* data, size_t size, std::shared_ptr<const void> owner, bool file_mapped,
                const std::string& where) {
  CheckRoot(data, size, where);
  const std::string storage_name = "weights mapped from " + where;
  const std::shared_ptr<const void> keep = owner;  // for stored forms, which view the same bytes
  auto storage = file_mapped ? Storage::MappedFile(data, size, std::move(owner), storage_name)
                             : Storage::External(data, size, std::move(owner), storage_name);
  const std::pair<size_t, size_t> forms = StoredFormsExtent(data, size);
  storage->PreferHugePages(data + forms.first, forms.second - forms.first);
  flatbuffers::Verifier verifier(data, size, kMaxTableDepth);
  if (!fb::VerifyModelBuffer(verifier))
    Fail(where, "FlatBuffers verification failed: an offset, vector length, string or vtable "
                "points outside the file, or a required field (nodes, heads, node op/name, "
                "param name/data) is missing");
  const fb::Model& m = *fb::GetModel(data);
  if (m.format_version() == 0 || m.format_version() > kModelFormatVersion)
    Fail(where, StrCat("format version ", m.format_version(), " is not supported (this build "
                       "reads versions 1 to ", kModelFormatVersion, ")"));
  Model model;
  model.symbol = ReadGraph(m, where);

  if (m.input_shapes())
    for (const fb::InputShape* s : *m.input_shapes()) {
      const std::string name = s->name()->str();
      TShape shape = CheckedShape(s->dims(), where, "input shape '" + name + "'");
      try {
        shape.Size();  // an element count past int64 would wrap every size computed from it
      } catch (const ShapeError& e) {
        Fail(where, e.what());
      }
      if (!model.input_shapes.emplace(name, shape).second)
        Fail(where, "input shape '" + name + "' is given twice");
    }

  std::map<std::string, NDArray> params;
  if (m.params())
    for (uint32_t i = 0; i < m.params()->size(); ++i) {
      const fb::Param& p = *m.params()->Get(i);
      const std::string what = StrCat("param ", i, " '", p.name()->str(), "'");
      if (!IsValidDTypeFlag(p.dtype()))
        Fail(where, StrCat(what, " has dtype code ", p.dtype(), ", which is not an MXNet type flag"));
      const DType dtype = static_cast<DType>(p.dtype());
      const TShape shape = CheckedShape(p.shape(), where, what);
      const uint64_t bytes = CheckedBytes(shape, dtype, where, what);
      if (bytes != p.data()->size())
        Fail(where, StrCat(what, " of shape ", shape, " and dtype ", DTypeName(dtype), " needs ",
                           bytes, " bytes but its data holds ", p.data()->size()));
      const size_t offset = static_cast<size_t>(p.data()->data() - data);
      NDArray array;
      if (bytes == 0) {
        array = NDArray(shape, dtype);
      } else {
        if (offset % kDataAlignment != 0)
          Fail(where, StrCat(what, ": data starts at byte ", offset, ", not on a ",
                             kDataAlignment, "-byte boundary"));
        array = NDArray::View(storage, offset, shape, dtype);
      }
      if (!params.emplace(p.name()->str(), array).second)
        Fail(where, StrCat(what, ": the name is used twice"));
    }
  try {
    SplitArgAux(params, &model.args, &model.aux);
  } catch (const IOError& e) {
    Fail(where, e.what());
  }
  if (m.forms()) ReadForms(m, data, storage, keep, where, &model);
  // Checked last, so that a shortened array names itself. The writer leaves fewer than 64 zero bytes after its last structure (the alignment of the
  // first array's data); more, or anything else, was added to the file afterwards.
  const size_t used = verifier.GetComputedSize();
  const bool padding_only = size - used < kDataAlignment &&
                            std::all_of(data + used, data + size, [](uint8_t byte) { return byte == 0; });
  if (!padding_only)
    Fail(where, StrCat(size - used, " trailing bytes after the model's last structure (the file should end at byte ",
                       used, ")"));
  storage->ReleaseResidentPages(data, size);  // what was read to verify it; arrays come back as used
  return model;
}

}  // namespace

std::string SaveModelToString(const Model& model) {
  const std::map<std::string, NDArray> params = MergeArgAux(model.args, model.aux);
  size_t data_bytes = 0;
  for (auto& kv : params) {
    if (kv.second.is_none()) throw Error("SaveModel: parameter '" + kv.first + "' has no array");
    data_bytes += kv.second.bytes() + kDataAlignment;
  }
  // Each form's parameter, as an index into `params`.
  std::vector<uint32_t> form_params;
  for (const StoredForm& f : model.forms) {
    const std::string name = model.args.count(f.param) ? "arg:" + f.param : "aux:" + f.param;
    auto it = params.find(name);
    if (it == params.end()) throw Error("SaveModel: a stored form names '" + f.param + "', which is no parameter");
    form_params.push_back(static_cast<uint32_t>(std::distance(params.begin(), it)));
    for (const NDArray& a : f.arrays) {
      if (a.dtype() != DType::kFloat32 || a.shape().ndim() != 1)
        throw Error("SaveModel: the stored forms of '" + f.param + "' hold arrays that are not 1-D float32");
      data_bytes += a.bytes() + kDataAlignment;
    }
  }
  flatbuffers::FlatBufferBuilder b(data_bytes + (size_t{1} << 20));

  // Array data first: nothing may be open while a vector is built.
  auto aligned_bytes = [&](const NDArray& a) {
    b.ForceVectorAlignment(a.bytes(), 1, kDataAlignment);
    return b.CreateVector(static_cast<const uint8_t*>(a.raw_data()), a.bytes());
  };
  // Small arrays (biases, BatchNorm statistics) side by side, apart from the large weights: the
  // kernels read them on every forward, while a large weight whose packed form is stored stays
  // unread, and a first read maps a whole page-cache folio (up to 2 MiB) around what it reads.
  constexpr size_t kSmallArrayBytes = size_t{64} << 10;
  std::vector<flatbuffers::Offset<flatbuffers::Vector<uint8_t>>> data(params.size());
  for (const bool small : {true, false}) {
    size_t k = 0;
    for (auto& kv : params) {
      if ((kv.second.bytes() < kSmallArrayBytes) == small) data[k] = aligned_bytes(kv.second);
      ++k;
    }
  }
  std::vector<std::vector<flatbuffers::Offset<flatbuffers::Vector<uint8_t>>>> form_data(model.forms.size());
  for (size_t i = 0; i < model.forms.size(); ++i)
    for (const NDArray& a : model.forms[i].arrays) form_data[i].push_back(aligned_bytes(a));
  std::vector<flatbuffers::Offset<fb::Form>> forms;
  for (size_t i = 0; i < model.forms.size(); ++i) {
    const StoredForm& f = model.forms[i];
    std::vector<flatbuffers::Offset<fb::FloatArray>> arrays;
    for (auto& d : form_data[i]) arrays.push_back(fb::CreateFloatArray(b, d));
    const auto arrays_vector = b.CreateVector(arrays);
    const auto header = b.CreateVector(f.header);
    const auto key = b.CreateVector(f.key);
    const auto codec = b.CreateString(f.codec);
    forms.push_back(fb::CreateForm(b, form_params[i], codec, key, header, arrays_vector));
  }
  std::vector<flatbuffers::Offset<fb::Param>> fparams;
  size_t k = 0;
  for (auto& kv : params) {
    const TShape& s = kv.second.shape();
    const std::vector<int64_t>& dims = s.dims();
    const auto fdims = b.CreateVector(dims);
    const auto name = b.CreateString(kv.first);
    fparams.push_back(fb::CreateParam(b, name, static_cast<int32_t>(kv.second.dtype()), fdims, data[k++]));
  }

  const Graph g(model.symbol);
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (uint32_t i = 0; i < g.num_nodes(); ++i) {
    const Node& n = *g.node(i).node;
    std::map<std::string, std::string> attrs(n.attrs.dict.begin(), n.attrs.dict.end());
    for (auto& kv : n.user_attrs) attrs[kv.first] = kv.second;
    std::vector<flatbuffers::Offset<fb::Attr>> fattrs;
    for (auto& kv : attrs) {
      const auto value = b.CreateString(kv.second);
      const auto key = b.CreateString(kv.first);
      fattrs.push_back(fb::CreateAttr(b, key, value));
    }
    std::vector<fb::Entry> inputs;
    for (auto& e : g.node(i).inputs) inputs.emplace_back(e.node_id, e.index, 0);
    const auto finputs = b.CreateVectorOfStructs(inputs);
    const auto fattrs_vector = b.CreateVector(fattrs);
    const auto name = b.CreateString(n.name());
    const auto op = b.CreateString(n.is_variable() ? std::string("null") : n.attrs.op->name);
    nodes.push_back(fb::CreateNode(b, op, name, fattrs_vector, finputs));
  }
  std::vector<uint32_t> aux_nodes;
  for (uint32_t id : g.arg_nodes())
    if (g.is_aux_node(id)) aux_nodes.push_back(id);
  std::vector<fb::Entry> heads;
  for (auto& h : g.heads()) heads.emplace_back(h.node_id, h.index, 0);
  std::vector<flatbuffers::Offset<fb::InputShape>> shapes;
  for (auto& kv : model.input_shapes) {
    const std::vector<int64_t>& dims = kv.second.dims();
    const auto fdims = b.CreateVector(dims);
    const auto name = b.CreateString(kv.first);
    shapes.push_back(fb::CreateInputShape(b, name, fdims));
  }
  const std::vector<uint32_t> arg_nodes(g.arg_nodes().begin(), g.arg_nodes().end());
  // Each piece built in its own statement, last field first: the bytes then do not depend on the
  // order a compiler evaluates function arguments in (GCC's, right to left, made the files so far).
  const auto fforms = model.forms.empty() ? 0 : b.CreateVector(forms);
  const auto forms_isa = model.forms.empty() ? 0 : b.CreateString(model.forms_isa);
  const auto fparams_vector = b.CreateVector(fparams);
  const auto fshapes = b.CreateVector(shapes);
  const auto fheads = b.CreateVectorOfStructs(heads);
  const auto faux = b.CreateVector(aux_nodes);
  const auto fargs = b.CreateVector(arg_nodes);
  const auto fnodes = b.CreateVector(nodes);
  auto root = fb::CreateModel(b, kModelFormatVersion, kSymbolWriteVersion, fnodes, fargs, faux, fheads, fshapes,
                              fparams_vector, forms_isa, fforms);
  fb::FinishModelBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

void SaveModel(const std::string& path, const Model& model) {
  WriteStringToFile(path, SaveModelToString(model));
}

Model LoadModel(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  const auto* data = static_cast<const uint8_t*>(file->data());
  const size_t size = file->size();
  const std::string wrong_kind = WrongFileKindMessage(path, DetectFileKind(data, size), FileKind::kSymbindModel);
  if (!wrong_kind.empty()) throw IOError(wrong_kind);
  return ReadModel(data, size, std::move(file), true, path);
}

Model LoadModelBuffer(const void* data, size_t size, const std::string& where) {
  auto copy = std::make_shared<Storage>(size, "a model buffer");
  if (size) std::memcpy(copy->data(), data, size);
  const auto* bytes = static_cast<const uint8_t*>(copy->data());
  return ReadModel(bytes, size, std::move(copy), false, where);
}

bool IsModelBuffer(const void* data, size_t size) {
  return data != nullptr && size >= 8 && fb::ModelBufferHasIdentifier(data);
}

bool IsModelFile(const std::string& path) {
  const std::string head = RegularFile(path).ReadHead(8);
  return IsModelBuffer(head.data(), head.size());
}

namespace {
std::atomic<ModelFileLoader> onnx_model_loader{nullptr};
}  // namespace

void SetOnnxModelLoader(ModelFileLoader loader) { onnx_model_loader = loader; }

Model LoadModelFiles(const std::string& model_or_symbol_path, const std::string& params_path) {
  if (DetectFileKindOfPath(model_or_symbol_path) == FileKind::kOnnx) {
    if (!params_path.empty())
      throw IOError(StrCat(model_or_symbol_path, " is an ONNX model, which holds its parameters; got also ",
                           params_path));
    const ModelFileLoader load = onnx_model_loader;
    if (!load)
      throw IOError(StrCat(model_or_symbol_path, " is an ONNX model: this program was built without ONNX support "
                           "(libsymbind_onnx; configure with libonnx-dev installed)"));
    return load(model_or_symbol_path);
  }
  if (IsModelFile(model_or_symbol_path)) {
    if (!params_path.empty())
      throw IOError(StrCat(model_or_symbol_path, " is a .symbind model, which holds its parameters; "
                           "got also ", params_path));
    return LoadModel(model_or_symbol_path);
  }
  if (!params_path.empty() && DetectFileKindOfPath(model_or_symbol_path) == FileKind::kParams &&
      DetectFileKindOfPath(params_path) == FileKind::kSymbolJson)
    throw IOError(StrCat("the arguments are swapped: ", model_or_symbol_path, " is a .params file and ", params_path,
                         " is symbol JSON; give the symbol JSON first, then the .params file"));
  Model model;
  model.symbol = LoadSymbolFile(model_or_symbol_path);
  // As LoadModel maps a .symbind: the arrays view the mapped file.
  if (!params_path.empty()) LoadArgAuxParams(params_path, &model.args, &model.aux, /*map_read_only=*/true);
  return model;
}

Model LoadCheckpointFiles(const std::string& prefix, int epoch) {
  return LoadModelFiles(CheckpointSymbolPath(prefix), CheckpointParamsPath(prefix, epoch));
}

}  // namespace symbind
