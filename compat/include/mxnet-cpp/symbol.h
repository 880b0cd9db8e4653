// MXNet cpp-package compatibility: Symbol, a handle to a graph (copies share it).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <mxnet/c_api.h>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"

namespace mxnet {
namespace cpp {

class Executor;
// What a Symbol refers to: defined inside libmxnet.so (compat/compat_internal.h).
struct SymbolImpl;

class Symbol {
 public:
  Symbol();  // an empty symbol
  // A variable called `name`.
  explicit Symbol(const char* name);
  explicit Symbol(const std::string& name);

  // Element-wise arithmetic through the elemwise and _scalar operators.
  Symbol operator+(const Symbol& rhs) const;
  Symbol operator-(const Symbol& rhs) const;
  Symbol operator*(const Symbol& rhs) const;
  Symbol operator/(const Symbol& rhs) const;
  Symbol operator+(mx_float scalar) const;
  Symbol operator-(mx_float scalar) const;
  Symbol operator*(mx_float scalar) const;
  Symbol operator/(mx_float scalar) const;
  Symbol Copy() const;

  static Symbol Variable(const std::string& name = "");
  Symbol operator[](int index) const;
  Symbol operator[](const std::string& index) const;
  static Symbol Group(const std::vector<Symbol>& symbols);
  // MXNet symbol JSON (any MXNet generation).
  static Symbol Load(const std::string& file_name);
  static Symbol LoadJSON(const std::string& json_str);
  void Save(const std::string& file_name) const;
  std::string ToJSON() const;
  Symbol GetInternals() const;
  Symbol GetChildren() const;

  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListOutputs() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  std::vector<std::string> ListInputs() const;
  std::map<std::string, std::string> ListAttributes() const;
  void SetAttribute(const std::string& key, const std::string& value);
  void SetAttributes(const std::map<std::string, std::string>& attrs);
  std::string GetName() const;
  // Number of outputs (a group has one per member).
  mx_uint GetNumOutputs() const;

  // Shapes in ListArguments / ListAuxiliaryStates / ListOutputs order; shapes that cannot be
  // inferred come back empty.
  void InferShape(const std::map<std::string, std::vector<mx_uint>>& arg_shapes,
                  std::vector<std::vector<mx_uint>>* in_shape,
                  std::vector<std::vector<mx_uint>>* aux_shape,
                  std::vector<std::vector<mx_uint>>* out_shape) const;
  // MXNet's cpp-package rules: given arrays are used as they are; missing arguments, aux
  // states and gradients are allocated (zero); grad_req defaults to kNullOp for names
  // containing "data" or "label", kWriteTo otherwise.
  void InferExecutorArrays(const Context& context, std::vector<NDArray>* arg_arrays,
                           std::vector<NDArray>* grad_arrays, std::vector<OpReqType>* grad_reqs,
                           std::vector<NDArray>* aux_arrays,
                           const std::map<std::string, NDArray>& args_map,
                           const std::map<std::string, NDArray>& arg_grad_store =
                               std::map<std::string, NDArray>(),
                           const std::map<std::string, OpReqType>& grad_req_type =
                               std::map<std::string, OpReqType>(),
                           const std::map<std::string, NDArray>& aux_map =
                               std::map<std::string, NDArray>()) const;
  // Adds zero arrays for the arguments whose shapes follow from `known_args`.
  void InferArgsMap(const Context& context, std::map<std::string, NDArray>* args_map,
                    const std::map<std::string, NDArray>& known_args) const;
  // The caller owns (deletes) the executor.
  Executor* SimpleBind(const Context& context, const std::map<std::string, NDArray>& args_map,
                       const std::map<std::string, NDArray>& arg_grad_store =
                           std::map<std::string, NDArray>(),
                       const std::map<std::string, OpReqType>& grad_req_type =
                           std::map<std::string, OpReqType>(),
                       const std::map<std::string, NDArray>& aux_map =
                           std::map<std::string, NDArray>());
  Executor* Bind(const Context& context, const std::vector<NDArray>& arg_arrays,
                 const std::vector<NDArray>& grad_arrays,
                 const std::vector<OpReqType>& grad_reqs,
                 const std::vector<NDArray>& aux_arrays,
                 const std::map<std::string, Context>& group_to_ctx =
                     std::map<std::string, Context>(),
                 Executor* shared_exec = nullptr);

  bool IsEmpty() const;
  // A C API handle to this graph (made on first use, freed with the last copy of this
  // Symbol).
  SymbolHandle GetHandle() const;

 private:
  friend struct SymbolImpl;
  std::shared_ptr<SymbolImpl> impl_;  // never null; shared by copies
};

Symbol operator+(mx_float lhs, const Symbol& rhs);
Symbol operator-(mx_float lhs, const Symbol& rhs);
Symbol operator*(mx_float lhs, const Symbol& rhs);
Symbol operator/(mx_float lhs, const Symbol& rhs);

}  // namespace cpp
}  // namespace mxnet
