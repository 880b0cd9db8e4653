// MXNet cpp-package compatibility: Operator, the builder behind every generated op function,
// for symbols (CreateSymbol) and for imperative calls on NDArrays (Invoke).
#pragma once
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nnvm/c_api.h>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/symbol.h"

namespace mxnet {
namespace cpp {

namespace detail {
// The shortest text that reads back as the same value (libmxnet.so).
std::string FloatParamString(float v);
std::string FloatParamString(double v);

inline std::string ParamString(const std::string& v) { return v; }
inline std::string ParamString(const char* v) { return v; }
inline std::string ParamString(bool v) { return v ? "True" : "False"; }
inline std::string ParamString(float v) { return FloatParamString(v); }
inline std::string ParamString(double v) { return FloatParamString(v); }
inline std::string ParamString(long double v) { return FloatParamString(static_cast<double>(v)); }
template <typename T>
std::string ParamStringOf(const T& v, std::true_type /*integral*/) {
  return std::to_string(v);
}
template <typename T>
std::string ParamStringOf(const T& v, std::false_type /*integral*/) {
  std::ostringstream os;
  os << v;
  return os.str();
}
template <typename T>
std::string ParamString(const T& v) {
  return ParamStringOf(v, std::integral_constant<bool, std::is_integral<T>::value>());
}
template <typename T>
std::string ParamString(const std::vector<T>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + ParamString(v[i]);
  if (v.size() == 1) s += ",";
  return s + ")";
}
}  // namespace detail

class Operator {
 public:
  explicit Operator(const std::string& operator_name);
  Operator& operator=(const Operator& rhs) = default;
  Operator(const Operator&) = default;

  template <typename T>
  Operator& SetParam(const std::string& name, const T& value) {
    params_[name] = detail::ParamString(value);
    return *this;
  }
  // An empty symbol is skipped (the input becomes an automatic variable), as in MXNet.
  Operator& SetInput(const std::string& name, const Symbol& symbol);
  Operator& SetInput(const std::string& name, const NDArray& ndarray);
  void PushInput(const Symbol& symbol);
  void PushInput(const NDArray& ndarray);

  Operator& operator()() { return *this; }
  Operator& operator()(const Symbol& symbol) {
    PushInput(symbol);
    return *this;
  }
  Operator& operator()(const NDArray& ndarray) {
    PushInput(ndarray);
    return *this;
  }
  Operator& operator()(const std::vector<Symbol>& symbols) {
    for (auto& s : symbols) PushInput(s);
    return *this;
  }
  Operator& operator()(const std::vector<NDArray>& ndarrays) {
    for (auto& a : ndarrays) PushInput(a);
    return *this;
  }
  template <typename T, typename... Args>
  Operator& operator()(const T& arg, const Args&... args) {
    PushInput(arg);
    return (*this)(args...);
  }

  Symbol CreateSymbol(const std::string& name = "");

  // The operator's C API handle (AtomicSymbolCreator, the same as NNGetOpHandle's), for
  // MXSymbolCreateAtomicSymbol, MXImperativeInvoke or MXSymbolGetAtomicSymbolInfo. Operators
  // live as long as the process: nothing to free. MXNet 1.9.1's Operator keeps it private;
  // this mirrors NDArray's and Symbol's GetHandle().
  AtomicSymbolCreator GetHandle() const;

  // Runs the operator once on the NDArray inputs (inference mode) through the same kernels an
  // executor uses; executors are cached by operator, parameters and input shapes.
  std::vector<NDArray> Invoke();
  // Writes the outputs into existing arrays (which may be inputs too).
  void Invoke(NDArray& output);
  void Invoke(std::vector<NDArray>& outputs);

 private:
  std::string op_name_;
  std::map<std::string, std::string> params_;
  std::vector<std::pair<std::string, Symbol>> named_symbols_;
  std::vector<Symbol> positional_symbols_;
  std::vector<std::pair<std::string, NDArray>> named_arrays_;
  std::vector<NDArray> positional_arrays_;
};

}  // namespace cpp
}  // namespace mxnet
