// Typed operator parameters parsed from strings, in the spirit of dmlc::Parameter.
//
//   struct FCParam : Parameter<FCParam> {
//     int64_t num_hidden; bool no_bias;
//     static void Declare(ParamDeclarer<FCParam>& d) {
//       d.field("num_hidden", &FCParam::num_hidden).lower_bound(1).describe("...");
//       d.field("no_bias", &FCParam::no_bias).set_default(false).describe("...");
//     }
//   };
//   FCParam p = FCParam::Parse({{"num_hidden", "10"}});
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype.h"
#include "error.h"
#include "tshape.h"

namespace symbind {

using KwArgs = std::map<std::string, std::string>;
// A tuple whose entries may be None, as slice's begin/end take.
using OptIntTuple = std::vector<std::optional<int64_t>>;

// How values of type T are parsed, printed and named. Parse returns false on bad input.
template <typename T>
struct ParamValue;
template <> struct ParamValue<int> {
  static const char* TypeName() { return "int"; }
  static bool Parse(const std::string& s, int* v);
  static std::string Print(int v) { return std::to_string(v); }
};
template <> struct ParamValue<int64_t> {
  static const char* TypeName() { return "long"; }
  static bool Parse(const std::string& s, int64_t* v);
  static std::string Print(int64_t v) { return std::to_string(v); }
};
template <> struct ParamValue<float> {
  static const char* TypeName() { return "float"; }
  static bool Parse(const std::string& s, float* v);
  static std::string Print(float v);
};
template <> struct ParamValue<double> {
  static const char* TypeName() { return "double"; }
  static bool Parse(const std::string& s, double* v);
  static std::string Print(double v);
};
template <> struct ParamValue<bool> {
  static const char* TypeName() { return "boolean"; }
  static bool Parse(const std::string& s, bool* v);
  static std::string Print(bool v) { return v ? "True" : "False"; }
};
template <> struct ParamValue<std::string> {
  static const char* TypeName() { return "string"; }
  static bool Parse(const std::string& s, std::string* v) { *v = s; return true; }
  static std::string Print(const std::string& v) { return v; }
};
template <> struct ParamValue<TShape> {
  static const char* TypeName() { return "Shape(tuple)"; }
  static bool Parse(const std::string& s, TShape* v);
  static std::string Print(const TShape& v);
};
template <> struct ParamValue<std::vector<float>> {
  static const char* TypeName() { return "tuple of <float>"; }
  static bool Parse(const std::string& s, std::vector<float>* v);
  static std::string Print(const std::vector<float>& v);
};
template <> struct ParamValue<OptIntTuple> {
  static const char* TypeName() { return "Shape(tuple)"; }
  static bool Parse(const std::string& s, OptIntTuple* v);
  static std::string Print(const OptIntTuple& v);
};
template <typename T>
struct ParamValue<std::optional<T>> {
  static std::string TypeName() { return std::string("") + ParamValue<T>::TypeName() + " or None"; }
  static bool Parse(const std::string& s, std::optional<T>* v) {
    if (s == "None" || s.empty()) {
      v->reset();
      return true;
    }
    T inner;
    if (!ParamValue<T>::Parse(s, &inner)) return false;
    *v = inner;
    return true;
  }
  static std::string Print(const std::optional<T>& v) {
    return v ? ParamValue<T>::Print(*v) : std::string("None");
  }
};

// One declared field, type-erased over the owning struct.
class ParamField {
 public:
  virtual ~ParamField() = default;
  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  bool has_default() const { return has_default_; }
  // "int (non-negative), required" / "{'relu', 'tanh'}, optional, default='relu'"
  std::string TypeInfo() const;
  // The default printed as in JSON ("" when required).
  virtual std::string DefaultString() const = 0;
  virtual void Set(void* obj, const std::string& value) const = 0;  // throws ParamError
  virtual void SetDefault(void* obj) const = 0;
  virtual std::string Get(const void* obj) const = 0;

 protected:
  virtual std::string BaseTypeInfo() const = 0;
  std::string name_, doc_;
  bool has_default_ = false;
};

namespace detail {
[[noreturn]] void ThrowBadFormat(const std::string& field, const std::string& type,
                                 const std::string& value);
[[noreturn]] void ThrowBadEnum(const std::string& field, const std::string& value,
                               const std::vector<std::pair<std::string, int>>& options);
std::string FormatNumber(double v);

// False when a floating value of `v` (a number, an optional one or a tuple) is NaN or infinite.
template <typename T>
bool AllFinite(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isfinite(v);
  } else if constexpr (std::is_same_v<T, std::optional<float>> || std::is_same_v<T, std::optional<double>>) {
    return !v || std::isfinite(*v);
  } else if constexpr (std::is_same_v<T, std::vector<float>>) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
  } else {
    return true;
  }
}
}  // namespace detail

template <typename Obj, typename T>
class ParamFieldOf : public ParamField {
 public:
  ParamFieldOf(std::string name, T Obj::*member) : member_(member) { name_ = std::move(name); }

  ParamFieldOf& set_default(const T& v) {
    default_ = v;
    has_default_ = true;
    return *this;
  }
  ParamFieldOf& describe(std::string doc) {
    doc_ = std::move(doc);
    return *this;
  }
  ParamFieldOf& lower_bound(double lo) {
    lower_ = lo;
    return *this;
  }
  ParamFieldOf& set_range(double lo, double hi) {
    lower_ = lo;
    upper_ = hi;
    return *this;
  }
  // A condition no bound expresses (non-zero, finite): a value failing `ok` is a ParamError
  // "value V for Parameter NAME should be <what>".
  ParamFieldOf& require(std::function<bool(const T&)> ok, std::string what) {
    requirements_.emplace_back(std::move(ok), std::move(what));
    return *this;
  }
  // Floating fields are finite unless they opt in here: a NaN or an infinity (or a literal
  // beyond the type's range) poisons every value an op computes from it.
  ParamFieldOf& allow_non_finite() {
    allow_non_finite_ = true;
    return *this;
  }
  // Declares a string alternative for an integral (or optional integral) field.
  ParamFieldOf& add_enum(const std::string& key, int value) {
    enum_.emplace_back(key, value);
    return *this;
  }

  std::string DefaultString() const override { return has_default_ ? Print(default_) : ""; }
  void SetDefault(void* obj) const override {
    if (has_default_) static_cast<Obj*>(obj)->*member_ = default_;
  }
  std::string Get(const void* obj) const override {
    return Print(static_cast<const Obj*>(obj)->*member_);
  }
  void Set(void* obj, const std::string& value) const override {
    T v{};
    if (!enum_.empty()) {
      v = ParseEnum(value);
    } else if (!ParamValue<T>::Parse(value, &v)) {
      detail::ThrowBadFormat(name_, ParamValue<T>::TypeName(), value);
    }
    if (!allow_non_finite_ && !detail::AllFinite(v))
      throw ParamError("value " + value + " for Parameter " + name_ + " should be a finite number");
    CheckRange(v, value);
    for (auto& r : requirements_)
      if (!r.first(v))
        throw ParamError("value " + value + " for Parameter " + name_ + " should be " + r.second);
    static_cast<Obj*>(obj)->*member_ = v;
  }

 protected:
  std::string BaseTypeInfo() const override {
    std::string s = BoundsTypeInfo();
    for (auto& r : requirements_) s += ", " + r.second;
    return s;
  }

 private:
  std::string BoundsTypeInfo() const {
    if (!enum_.empty()) {
      std::string s = "{";
      for (size_t i = 0; i < enum_.size(); ++i) s += (i ? ", '" : "'") + enum_[i].first + "'";
      return s + "}";
    }
    std::string t = ParamValue<T>::TypeName();
    if (lower_ && upper_) return t + ", in [" + detail::FormatNumber(*lower_) + ", " + detail::FormatNumber(*upper_) + "]";
    // dmlc writes "(non-negative)" for integers only; MXNet's op.h generator reads it so.
    if (lower_ && *lower_ == 0 && std::is_integral<T>::value) return t + " (non-negative)";
    if (lower_) return t + ", >= " + detail::FormatNumber(*lower_);
    return t;
  }
  std::string Print(const T& v) const {
    if (!enum_.empty()) return PrintEnum(v);
    return ParamValue<T>::Print(v);
  }
  template <typename U>
  static std::optional<int> AsInt(const U& v) {
    if constexpr (std::is_integral_v<U>) return static_cast<int>(v);
    else if constexpr (std::is_same_v<U, std::optional<int>>) return v;
    else return std::nullopt;
  }
  std::string PrintEnum(const T& v) const {
    std::optional<int> iv = AsInt(v);
    if (!iv) return "None";
    for (auto& e : enum_)
      if (e.second == *iv) return e.first;
    return std::to_string(*iv);
  }
  T ParseEnum(const std::string& value) const {
    if constexpr (std::is_integral_v<T> || std::is_same_v<T, std::optional<int>>) {
      if constexpr (std::is_same_v<T, std::optional<int>>) {
        if (value == "None") return std::nullopt;
      }
      for (auto& e : enum_)
        if (e.first == value) return static_cast<T>(e.second);
      detail::ThrowBadEnum(name_, value, enum_);
    } else {
      throw Error("add_enum used on a non-integral field " + name_);
    }
  }
  void CheckRange(const T& v, const std::string& text) const {
    if constexpr (std::is_arithmetic_v<T>) {
      double d = static_cast<double>(v);
      // Negated comparisons so that nan (which compares false) is out of every range.
      if (lower_ && upper_ && !(d >= *lower_ && d <= *upper_))
        throw ParamError("value " + text + " for Parameter " + name_ + " should be in range [" +
                         detail::FormatNumber(*lower_) + ", " + detail::FormatNumber(*upper_) + "]");
      if (lower_ && !(d >= *lower_))
        throw ParamError("value " + text + " for Parameter " + name_ +
                         " should be greater equal to " + detail::FormatNumber(*lower_));
    }
  }

  T Obj::*member_;
  T default_{};
  std::optional<double> lower_, upper_;
  bool allow_non_finite_ = false;
  std::vector<std::pair<std::string, int>> enum_;
  std::vector<std::pair<std::function<bool(const T&)>, std::string>> requirements_;
};

// The declared fields of one parameter struct, with the shared parse logic.
class ParamSchema {
 public:
  const std::vector<std::unique_ptr<ParamField>>& fields() const { return fields_; }
  const ParamField* Find(const std::string& name) const;
  // Sets every field of `obj`: defaults first, then `kwargs`. Unknown keys, bad values and
  // missing required fields throw ParamError with dmlc's wording; then the declared checks
  // between fields run.
  void Init(void* obj, const KwArgs& kwargs) const;
  // Each field's current value as a string.
  KwArgs ToKwArgs(const void* obj) const;
  // The "Possible Arguments" listing: "name : type info\n    doc" per field.
  std::string Describe() const;
  // What the checks between fields require, one sentence each.
  const std::vector<std::string>& constraints() const { return constraints_; }

 protected:
  std::vector<std::unique_ptr<ParamField>> fields_;
  // Conditions between fields (a_min <= a_max); each throws ParamError when violated.
  std::vector<std::function<void(const void*)>> checks_;
  std::vector<std::string> constraints_;  // what each check requires, for the docs
};

template <typename Obj>
class ParamDeclarer : public ParamSchema {
 public:
  template <typename T>
  ParamFieldOf<Obj, T>& field(const std::string& name, T Obj::*member) {
    auto f = std::make_unique<ParamFieldOf<Obj, T>>(name, member);
    auto* raw = f.get();
    fields_.push_back(std::move(f));
    return *raw;
  }
  // A condition between fields, checked after every field is set: `ok` false throws
  // ParamError "<what> (got <the fields as given>)".
  void check(std::function<bool(const Obj&)> ok, const std::string& what,
             std::vector<std::string> fields) {
    constraints_.push_back(what);
    std::vector<const ParamField*> named;  // the fields outlive the schema's moves; `this` does not
    for (auto& name : fields) named.push_back(Find(name));
    checks_.push_back([ok, what, named](const void* obj) {
      if (ok(*static_cast<const Obj*>(obj))) return;
      std::string got;
      for (auto* f : named) got += (got.empty() ? "" : ", ") + f->name() + "=" + f->Get(obj);
      throw ParamError(what + " (got " + got + ")");
    });
  }
};

// CRTP base: Derived declares `static void Declare(ParamDeclarer<Derived>&)`.
template <typename Derived>
struct Parameter {
  static const ParamSchema& Schema() {
    static const ParamDeclarer<Derived> schema = [] {
      ParamDeclarer<Derived> d;
      Derived::Declare(d);
      return d;
    }();
    return schema;
  }
  static Derived Parse(const KwArgs& kwargs) {
    Derived p{};
    Schema().Init(&p, kwargs);
    return p;
  }
  KwArgs ToKwArgs() const { return Schema().ToKwArgs(static_cast<const Derived*>(this)); }
};

// An op without parameters.
struct EmptyParam : Parameter<EmptyParam> {
  static void Declare(ParamDeclarer<EmptyParam>&) {}
};

}  // namespace symbind
