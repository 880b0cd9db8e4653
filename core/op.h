// The operator registry. Each op registers, in its own file, its parameters, input and
// output names, shape and type inference, forward and backward:
//
//   SYMBIND_REGISTER_OP(FullyConnected)
//       .describe("...")
//       .set_params<FullyConnectedParam>()
//       .set_arguments([](const NodeAttrs& a) { ... })
//       .set_infer_shape(...).set_forward(...).set_backward(...);
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ndarray.h"
#include "param.h"

namespace symbind {

struct Op;

// How a kernel writes an output (MXNet's OpReqType values).
enum class OpReq : int { kNull = 0, kWrite = 1, kWriteInplace = 2, kAdd = 3 };

// A parameter struct parsed from strings, with the schema and type it was parsed as, so
// NodeAttrs::param<P>() can check P.
struct ParsedParams {
  std::shared_ptr<const void> value;
  const ParamSchema* schema = nullptr;
  const std::type_info* type = nullptr;
};

struct NodeAttrs;
// Thrown by param<P>() when the node holds no parameters of type P (a kernel reading another
// op's struct): a symbind::Error naming the node, its op and both structs.
[[noreturn]] void ThrowParamTypeMismatch(const NodeAttrs& attrs, const std::type_info& asked);

// The per-node configuration: which op, its name and its parameters.
struct NodeAttrs {
  const Op* op = nullptr;  // null for a variable
  std::string name;
  KwArgs dict;                // parameters as strings, as given or as read from JSON
  ParsedParams parsed;        // the op's parsed parameter struct (Op::ParseAttrs)
  // The parsed struct; one pointer comparison checks that it is a P.
  template <typename P>
  const P& param() const {
    if (parsed.schema != &P::Schema() || !parsed.value) ThrowParamTypeMismatch(*this, typeid(P));
    return *static_cast<const P*>(parsed.value.get());
  }
};

// A node's kernel state (MXNet's FCreateOpState, ncnn's create_pipeline, ORT's OpKernel): made
// once per node when an executor is set up, for the node's shapes, it keeps what the kernel
// derives between calls, such as its weights packed for the GEMM. A node's kernel runs on one
// thread at a time, so a state needs no lock. Ops that keep none leave Op::create_state empty.
class OpState {
 public:
  virtual ~OpState() = default;
};

// What a kernel may know about the run.
// The arithmetic an executor runs convolution and FullyConnected in (PredictorOptions::precision):
// kBfloat16 rounds their operands to bfloat16 and sums in float32 (ops/kernels/gemm_bf16.h).
enum class Precision { kFloat32, kBfloat16 };

struct OpContext {
  bool is_train = false;
  // Seed for this node in this run; kernels needing randomness derive their engine from it,
  // so results do not depend on the thread schedule.
  uint64_t seed = 0;
  // Elements from one image (axis-0 slice) of output 0 to the next when an executor placed
  // output 0 inside a Concat's output along axis 1 at batch > 1 (only for ops whose
  // Op::strided_output says they can write so); 0: output 0 is contiguous, as its shape says.
  int64_t output_image_stride = 0;
  // The node's state (Op::create_state) when an executor runs the node; null for a call
  // without one (an imperative call), where the kernel derives what it needs on that call.
  OpState* state = nullptr;
  Precision precision = Precision::kFloat32;
  // Kernels keep no derived weights larger than the weights themselves (no Winograd-transformed
  // filters): less memory, slower 3x3 convolutions (PredictorOptions::compact_weights).
  bool compact_weights = false;
  // Quantized convolutions may take even weight levels where that runs faster (7-bit weights on
  // CPUs with AVX2 but not AVX512-VNNI; PredictorOptions::int8_even_weights).
  bool int8_even_weights = false;
};

// The arrays a backward kernel sees. `in_grads` and `req` cover the arguments only
// (aux states get no gradient). `out_grads` has one entry per output; an output nobody
// differentiates gets a zero array.
struct BackwardArgs {
  const std::vector<NDArray>& out_grads;
  const std::vector<NDArray>& inputs;   // arguments then aux states
  const std::vector<NDArray>& outputs;
  const std::vector<OpReq>& req;
  const std::vector<NDArray>& in_grads;
};

using NameListFn = std::function<std::vector<std::string>(const NodeAttrs&)>;
// Shapes: `in` holds arguments then aux states. Use ShapeAssignCheck to fill or verify.
using InferShapeFn =
    std::function<void(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out)>;
// Types as DType flags, -1 for unknown.
using InferTypeFn =
    std::function<void(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out)>;
using ForwardFn = std::function<void(const OpContext&, const NodeAttrs&,
                                     const std::vector<NDArray>& inputs,
                                     const std::vector<OpReq>& req,
                                     const std::vector<NDArray>& outputs)>;
using BackwardFn = std::function<void(const OpContext&, const NodeAttrs&, const BackwardArgs&)>;
// Multiply-adds of one call, from known input shapes (arguments then aux states) and output
// shapes (TVM's FMacCount): a fact of the op, so reports need no list of op names.
using MacCountFn = std::function<int64_t(const NodeAttrs&, const std::vector<TShape>& in,
                                         const std::vector<TShape>& out)>;
// Makes a node's state from its attributes and its inputs' and outputs' shapes.
using CreateStateFn = std::function<std::unique_ptr<OpState>(const NodeAttrs&, const std::vector<TShape>& in,
                                                             const std::vector<TShape>& out)>;
// Output shapes from the input arrays themselves (arguments then aux states), for ops whose
// output shapes depend on the inputs' values (MXNet's dynamic shapes: boolean_mask keeps the
// rows its index marks; an image decoder's output has the size its header states).
using ValueShapeFn = std::function<std::vector<TShape>(const NodeAttrs&, const std::vector<NDArray>& in)>;

// prefix0, prefix1, ..., prefix<n-1>: the names of a variadic op's inputs or outputs.
std::vector<std::string> NumberedNames(const std::string& prefix, int n);

struct Op {
  std::string name;
  std::vector<std::string> aliases;
  std::string description;
  const ParamSchema* schema = &EmptyParam::Schema();
  std::function<ParsedParams(const KwArgs&)> parse_params;
  NameListFn arguments;   // default {"data"}
  NameListFn aux_states;  // default {}
  NameListFn outputs;     // default {"output"}
  // One output's name without listing all of them (set by set_numbered_outputs): naming every
  // output of a SliceChannel of 65536 outputs one by one must not build 65536 lists.
  std::function<std::string(const NodeAttrs&, uint32_t index)> output_name;
  // The output count without building the names (ops with a parameter-sized output list).
  std::function<int(const NodeAttrs&)> num_outputs;
  std::function<int(const NodeAttrs&)> num_visible_outputs;  // default: all outputs
  // For variadic ops (Concat): the parameter set from the number of positional inputs.
  std::string key_var_num_args;
  InferShapeFn infer_shape;
  InferTypeFn infer_type;  // default: every input and output shares one type
  // Most kernels read and write float32 only, so type inference rejects any other dtype on
  // an op's inputs and outputs at bind (naming the node) instead of failing inside Forward.
  // Ops whose kernels handle every dtype (copies, casts) set dtype_generic; inputs that may
  // hold any dtype (indices, conditions) are listed by argument name in any_dtype_inputs.
  bool dtype_generic = false;
  // Backward kernels get float32 copies of other floating arrays, except float64 ones for ops
  // that set float64_backward (their gradients must reach float64's precision: linalg's).
  bool float64_backward = false;
  // Set for ops whose gradients are integers on integer arrays (sums, differences, products,
  // extrema), which MXNet differentiates in the arrays' own integer type: their backward gets
  // float64 (float32 without float64_backward) copies and the gradients are converted back.
  bool integer_backward = false;
  std::vector<std::string> any_dtype_inputs;
  ForwardFn forward;
  BackwardFn backward;     // empty: the op is not differentiable
  MacCountFn mac_count;    // empty: no multiply-adds worth counting (element-wise, copies)
  CreateStateFn create_state;  // empty: the kernel keeps no state between calls
  // Set for ops whose output shapes depend on their inputs' values: infer_shape leaves what it
  // cannot know unknown, and imperative calls (Invoke) take the shapes from this before the
  // forward. A graph holding such an op cannot be bound, as MXNet's executors refuse dynamic
  // shapes.
  ValueShapeFn value_dependent_shape;
  // What each input means, by argument or aux-state name (MXNet's add_argument): shown in
  // docs/ops.md and returned by MXSymbolGetAtomicSymbolInfo, so generated op.h documents it.
  std::vector<std::pair<std::string, std::string>> argument_docs;
  // Loss heads compute their gradient from the label; they ignore the head gradient.
  bool is_loss = false;
  // The gradient is zero whatever the inputs (BlockGrad, zeros_like): as in MXNet, an executor's
  // backward skips the nodes whose only gradient comes through such an op. Set with
  // set_zero_gradient, which also gives the op its backward.
  bool zero_gradient = false;
  // Forward may write output 0 over input 0 (same size, element by element), so executors
  // that compute no gradient run it in place when nothing else reads input 0 afterwards.
  bool forward_inplace = false;
  // For ops whose forward copies every input, whole and in order, into output 0 along an axis
  // (Concat): that axis for an output of `ndim` dims. Executors that plan memory may then
  // place inputs inside the output, and forward must skip an input already in its place.
  std::function<int(const NodeAttrs&, int ndim)> join_axis;
  // A join whose forward may rewrite an input planned in its place (the quantized concat
  // rescales one whose range differs from the output's): executors join such an input only
  // where the join is its last reader.
  bool join_rewrites_inputs = false;
  // Whether forward, for these attributes, writes output 0's images OpContext::
  // output_image_stride elements apart when asked (not req add): executors that plan memory
  // may then place output 0 inside a join_axis op's output along axis 1 at batch > 1, where
  // each image of it is a separate run (SqueezeNet's fire modules at batch 8: the Concats
  // copied 46 MB per forward). Empty: never.
  std::function<bool(const NodeAttrs&)> strided_output;
  // MXNet's default initializer for an input, by input name (BatchNorm's moving_var:
  // ["one", {}]). Composing the op stores it as the "__init__" attribute of a variable given
  // for that input that has none, as MXNet does; MXNet's Python initializers read it.
  std::map<std::string, std::string> input_initializers;
  // For ops whose MXNet form lists aux states among its arguments (_sg_mkldnn_conv: the
  // BatchNorm statistics before the sum input): the position in MXNet's input list of each
  // input here (arguments, then aux states). Symbol files are read and written in MXNet's order.
  std::function<std::vector<size_t>(const NodeAttrs&)> file_input_order;
  // MXNet registers no input names for this op (no FListInputNames: its unary, scalar,
  // reduction, random and optimizer ops, Activation, ...), so its executor monitor calls
  // input i "input<i>" instead of by the argument's name.
  bool monitor_numbered_inputs = false;

  Op& describe(std::string d) { description = std::move(d); return *this; }
  Op& add_alias(const std::string& alias);
  template <typename P>
  Op& set_params() {
    schema = &P::Schema();
    parse_params = [](const KwArgs& kw) {
      return ParsedParams{std::make_shared<P>(P::Parse(kw)), &P::Schema(), &typeid(P)};
    };
    return *this;
  }
  Op& set_arguments(NameListFn f) { arguments = std::move(f); return *this; }
  Op& set_arguments(std::vector<std::string> names);
  Op& set_aux_states(NameListFn f) { aux_states = std::move(f); return *this; }
  Op& set_aux_states(std::vector<std::string> names);
  Op& set_outputs(NameListFn f) { outputs = std::move(f); return *this; }
  Op& set_outputs(std::vector<std::string> names);
  // Outputs `prefix`0, `prefix`1, ... (SliceChannel's output0, output1, ...), `count` of them.
  Op& set_numbered_outputs(const std::string& prefix, std::function<int(const NodeAttrs&)> count);
  Op& set_num_outputs(std::function<int(const NodeAttrs&)> f) {
    num_outputs = std::move(f);
    return *this;
  }
  Op& set_num_visible_outputs(std::function<int(const NodeAttrs&)> f) {
    num_visible_outputs = std::move(f);
    return *this;
  }
  Op& set_key_var_num_args(std::string k) { key_var_num_args = std::move(k); return *this; }
  Op& set_infer_shape(InferShapeFn f) { infer_shape = std::move(f); return *this; }
  Op& set_infer_type(InferTypeFn f) { infer_type = std::move(f); return *this; }
  Op& set_dtype_generic() { dtype_generic = true; return *this; }
  Op& set_float64_backward() { float64_backward = true; return *this; }
  Op& set_integer_backward() { integer_backward = true; return *this; }
  Op& set_any_dtype_inputs(std::vector<std::string> names) {
    any_dtype_inputs = std::move(names);
    return *this;
  }
  Op& set_forward(ForwardFn f) { forward = std::move(f); return *this; }
  Op& set_backward(BackwardFn f) { backward = std::move(f); return *this; }
  Op& set_mac_count(MacCountFn f) { mac_count = std::move(f); return *this; }
  Op& set_create_state(CreateStateFn f) { create_state = std::move(f); return *this; }
  Op& set_value_dependent_shape(ValueShapeFn f) { value_dependent_shape = std::move(f); return *this; }
  Op& add_argument_doc(std::string input_name, std::string description) {
    argument_docs.emplace_back(std::move(input_name), std::move(description));
    return *this;
  }
  // The description add_argument_doc gave `input_name`; empty when none.
  const std::string& ArgumentDoc(const std::string& input_name) const;
  Op& set_is_loss(bool v = true) { is_loss = v; return *this; }
  // Declares the gradient zero whatever the inputs: sets zero_gradient and a backward that
  // writes zeros to the input gradients (still needed where an input asks for its gradient
  // directly, and by autograd).
  Op& set_zero_gradient();
  Op& set_input_initializer(const std::string& input_name, std::string init_json) {
    input_initializers[input_name] = std::move(init_json);
    return *this;
  }
  Op& set_forward_inplace(bool v = true) { forward_inplace = v; return *this; }
  Op& set_strided_output(std::function<bool(const NodeAttrs&)> f) {
    strided_output = std::move(f);
    return *this;
  }
  Op& set_file_input_order(std::function<std::vector<size_t>(const NodeAttrs&)> f) {
    file_input_order = std::move(f);
    return *this;
  }
  Op& set_monitor_numbered_inputs(bool v = true) { monitor_numbered_inputs = v; return *this; }
  Op& set_join_axis(std::function<int(const NodeAttrs&, int ndim)> f) {
    join_axis = std::move(f);
    return *this;
  }
  Op& set_join_rewrites_inputs(bool v = true) { join_rewrites_inputs = v; return *this; }

  // Parses `dict` into attrs->parsed; errors name the op and node.
  void ParseAttrs(NodeAttrs* attrs) const;
  std::vector<std::string> ListArguments(const NodeAttrs& a) const;
  // Whether input `index` may hold any dtype: dtype_generic, or an argument in any_dtype_inputs.
  bool ReadsAnyDType(const NodeAttrs& a, size_t index) const;
  std::vector<std::string> ListAuxStates(const NodeAttrs& a) const;
  std::vector<std::string> ListOutputs(const NodeAttrs& a) const;
  // ListOutputs(a)[index], in constant time for ops with numbered outputs.
  std::string OutputName(const NodeAttrs& a, uint32_t index) const;
  int NumInputs(const NodeAttrs& a) const;
  // The names MXNet's executor monitor gives the inputs (arguments then aux states) with
  // monitor_all: the input names, or input0, input1, ... (monitor_numbered_inputs).
  std::vector<std::string> MonitorInputNames(const NodeAttrs& a) const;
  int NumOutputs(const NodeAttrs& a) const;
  int NumVisibleOutputs(const NodeAttrs& a) const;
};

class OpRegistry {
 public:
  static OpRegistry& Global();
  Op& Register(const std::string& name);
  // Null when unknown.
  const Op* Find(const std::string& name) const;
  // Throws symbind::Error "Cannot find operator X".
  const Op& Get(const std::string& name) const;
  // Canonical ops, sorted by name.
  std::vector<const Op*> ListOps() const;
  void AddAlias(const std::string& alias, Op* op);

 private:
  std::map<std::string, std::unique_ptr<Op>> ops_;
  std::map<std::string, Op*> by_name_;  // names and aliases
};

// Thrown by ShapeAssignCheck; the graph turns it into a ShapeError naming the node.
struct ShapeAssignFailure {
  const std::vector<TShape>* slots;
  size_t index;
  TShape provided, inferred;
};

// SHAPE_ASSIGN_CHECK: an unknown slot takes `inferred`; a known one must agree
// (unknown dims unify). Returns true when the slot changed.
bool ShapeAssignCheck(std::vector<TShape>* slots, size_t index, const TShape& inferred);

// Likewise for type flags (-1 unknown).
struct TypeAssignFailure {
  const std::vector<int>* slots;
  size_t index;
  int provided, inferred;
};
bool TypeAssignCheck(std::vector<int>* slots, size_t index, int inferred);

// The default InferType: all inputs and outputs share the first known type.
void InferSameType(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out);

// Adds or writes `value` into `dst` as `req` says (the common tail of every kernel).
void AssignWithReq(float* dst, const float* value, int64_t n, OpReq req);

#define SYMBIND_OP_CONCAT_INNER(a, b) a##b
#define SYMBIND_OP_CONCAT(a, b) SYMBIND_OP_CONCAT_INNER(a, b)
#define SYMBIND_REGISTER_OP(Name)                                                  \
  static ::symbind::Op& SYMBIND_OP_CONCAT(symbind_op_registration_, __COUNTER__) = \
      ::symbind::OpRegistry::Global().Register(#Name)

// Registers a family of ops from one function body (a table of element-wise ops):
//   SYMBIND_REGISTER_OP_FAMILY(unary_math) { for (const auto& row : kTable) RegisterUnary(row); }
#define SYMBIND_REGISTER_OP_FAMILY(Family)                                  \
  static void SymbindRegisterOpFamily_##Family();                           \
  [[maybe_unused]] static const bool symbind_op_family_registered_##Family = \
      (SymbindRegisterOpFamily_##Family(), true);                           \
  static void SymbindRegisterOpFamily_##Family()

}  // namespace symbind
