#include "param.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace symbind {

namespace {
std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Splits "(a, b)" / "[a,b]" / "a,b" into trimmed items; false when brackets don't match.
bool SplitTuple(const std::string& text, std::vector<std::string>* items) {
  std::string s = Trim(text);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) {
    char close = s.front() == '(' ? ')' : ']';
    if (s.back() != close) return false;
    s = s.substr(1, s.size() - 2);
  }
  items->clear();
  if (Trim(s).empty()) return true;
  std::string cur;
  std::stringstream ss(s);
  while (std::getline(ss, cur, ',')) items->push_back(Trim(cur));
  if (!items->empty() && items->back().empty()) items->pop_back();  // "(3,)"
  for (auto& it : *items)
    if (it.empty()) return false;
  return true;
}

template <typename I>
bool ParseInteger(const std::string& text, I* v) {
  std::string s = Trim(text);
  if (!s.empty() && s.back() == 'L') s.pop_back();
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end != '\0') return false;
  if (x < static_cast<long long>(std::numeric_limits<I>::min()) ||
      x > static_cast<long long>(std::numeric_limits<I>::max()))
    return false;
  *v = static_cast<I>(x);
  return true;
}

bool ParseReal(const std::string& text, double* v) {
  std::string s = Trim(text);
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (*end != '\0') return false;
  if (errno == ERANGE && std::isinf(x)) return false;
  *v = x;
  return true;
}
}  // namespace

bool ParamValue<int>::Parse(const std::string& s, int* v) { return ParseInteger(s, v); }
bool ParamValue<int64_t>::Parse(const std::string& s, int64_t* v) { return ParseInteger(s, v); }

bool ParamValue<float>::Parse(const std::string& s, float* v) {
  double d;
  if (!ParseReal(s, &d)) return false;
  *v = static_cast<float>(d);
  return true;
}
std::string ParamValue<float>::Print(float v) {
  // Seven significant digits where they read back as the same float, else nine (always enough).
  auto with_digits = [v](int digits) {
    std::ostringstream os;
    os.precision(digits);
    os << v;
    return os.str();
  };
  const std::string short_text = with_digits(7);
  float back = 0;
  return ParamValue<float>::Parse(short_text, &back) && back == v ? short_text : with_digits(9);
}
bool ParamValue<double>::Parse(const std::string& s, double* v) { return ParseReal(s, v); }
std::string ParamValue<double>::Print(double v) { return detail::FormatNumber(v); }

bool ParamValue<bool>::Parse(const std::string& text, bool* v) {
  std::string s = Trim(text);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "1") *v = true;
  else if (s == "false" || s == "0") *v = false;
  else return false;
  return true;
}

bool ParamValue<TShape>::Parse(const std::string& s, TShape* v) {
  std::vector<std::string> items;
  if (!SplitTuple(s, &items)) return false;
  std::vector<int64_t> dims;
  for (auto& it : items) {
    int64_t d;
    if (it == "None") d = TShape::kUnknownDim;
    else if (!ParseInteger(it, &d)) return false;
    dims.push_back(d);
  }
  *v = TShape(dims);
  return true;
}
std::string ParamValue<TShape>::Print(const TShape& v) {
  if (!v.ndim_known()) return "None";
  std::string s = "(";
  for (int i = 0; i < v.ndim(); ++i) s += (i ? ", " : "") + (v[i] < 0 ? std::string("None") : std::to_string(v[i]));
  if (v.ndim() == 1) s += ",";
  return s + ")";
}

bool ParamValue<std::vector<float>>::Parse(const std::string& s, std::vector<float>* v) {
  std::vector<std::string> items;
  if (!SplitTuple(s, &items)) return false;
  v->clear();
  for (auto& it : items) {
    double d;
    if (!ParseReal(it, &d)) return false;
    v->push_back(static_cast<float>(d));
  }
  return true;
}
std::string ParamValue<std::vector<float>>::Print(const std::vector<float>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ParamValue<float>::Print(v[i]);
  if (v.size() == 1) s += ",";
  return s + ")";
}

bool ParamValue<OptIntTuple>::Parse(const std::string& s, OptIntTuple* v) {
  std::vector<std::string> items;
  if (!SplitTuple(s, &items)) return false;
  v->clear();
  for (auto& it : items) {
    if (it == "None") {
      v->push_back(std::nullopt);
      continue;
    }
    int64_t d;
    if (!ParseInteger(it, &d)) return false;
    v->push_back(d);
  }
  return true;
}
std::string ParamValue<OptIntTuple>::Print(const OptIntTuple& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + (v[i] ? std::to_string(*v[i]) : std::string("None"));
  if (v.size() == 1) s += ",";
  return s + ")";
}

namespace detail {
void ThrowBadFormat(const std::string& field, const std::string& type, const std::string& value) {
  throw ParamError("Invalid Parameter format for " + field + " expect " + type + " but value='" +
                   value + "'");
}
void ThrowBadEnum(const std::string& field, const std::string& value,
                  const std::vector<std::pair<std::string, int>>& options) {
  std::string s = "Invalid Input: '" + value + "', valid values are: {";
  for (size_t i = 0; i < options.size(); ++i) s += (i ? ", '" : "'") + options[i].first + "'";
  throw ParamError(s + "} for Parameter " + field);
}
std::string FormatNumber(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}
}  // namespace detail

namespace {
// dmlc's names for the optional types MXNet declares as dmlc::optional<TShape> / <int>, and
// its order of enum values.
std::string DmlcTypeName(std::string s) {
  for (auto [ours, dmlc] : {std::pair<std::string, std::string>{"Shape(tuple) or None", "Shape or None"},
                            {"long or None", "int or None"}})
    if (s.compare(0, ours.size(), ours) == 0) s = dmlc + s.substr(ours.size());
  if (s.front() != '{') return s;
  // dmlc keeps enum values in a std::map, so it lists them sorted.
  std::vector<std::string> values;
  std::stringstream items(s.substr(1, s.find('}') - 1));
  for (std::string item; std::getline(items, item, ',');)
    values.push_back(item.substr(item.find('\'')));
  std::sort(values.begin(), values.end());
  std::string sorted = "{";
  for (size_t i = 0; i < values.size(); ++i) sorted += (i ? ", " : "") + values[i];
  return sorted + "}";
}
}  // namespace

std::string ParamField::TypeInfo() const {
  std::string s = DmlcTypeName(BaseTypeInfo());
  if (!has_default_) return s + ", required";
  std::string d = DefaultString();
  // dmlc prints boolean defaults as numbers, and lists None among an optional enum's values.
  if (s.compare(0, 7, "boolean") == 0 && (d == "True" || d == "False")) d = d == "True" ? "1" : "0";
  if (s.front() == '{' && d == "None") s = "{None, " + s.substr(1);
  // dmlc's wording: no space after an enum's braces; enums, ints and strings quote the default.
  bool is_enum = s.front() == '{';
  bool quoted = is_enum || s == "string" || s.compare(0, 3, "int") == 0;
  return s + (is_enum ? ",optional, default=" : ", optional, default=") +
         (quoted ? "'" + d + "'" : d);
}

const ParamField* ParamSchema::Find(const std::string& name) const {
  for (auto& f : fields_)
    if (f->name() == name) return f.get();
  return nullptr;
}

std::string ParamSchema::Describe() const {
  std::string s;
  for (auto& f : fields_) {
    s += f->name() + " : " + f->TypeInfo() + "\n";
    if (!f->doc().empty()) s += "    " + f->doc() + "\n";
  }
  return s;
}

void ParamSchema::Init(void* obj, const KwArgs& kwargs) const {
  for (auto& f : fields_) f->SetDefault(obj);
  for (auto& kv : kwargs) {
    const ParamField* f = Find(kv.first);
    if (!f)
      throw ParamError("Cannot find argument '" + kv.first +
                       "', Possible Arguments:\n----------------\n" + Describe());
    f->Set(obj, kv.second);
  }
  for (auto& f : fields_)
    if (!f->has_default() && !kwargs.count(f->name()))
      throw ParamError("Required parameter " + f->name() + " of " + f->TypeInfo().substr(0, f->TypeInfo().rfind(", required")) +
                       " is not presented");
  for (auto& check : checks_) check(obj);
}

KwArgs ParamSchema::ToKwArgs(const void* obj) const {
  KwArgs out;
  for (auto& f : fields_) out[f->name()] = f->Get(obj);
  return out;
}

}  // namespace symbind
