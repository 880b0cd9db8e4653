// Writes mxnet-cpp/op.h: one pair of functions per registered operator (and per alias that is a
// plain identifier), with the signatures MXNet's cpp-package OpWrapperGenerator gives them:
//   inline Symbol FullyConnected(const std::string& symbol_name, Symbol data, Symbol weight,
//                                Symbol bias, int num_hidden, bool no_bias = false,
//                                bool flatten = true);
//   inline Symbol FullyConnected(Symbol data, Symbol weight, Symbol bias, int num_hidden, ...);
// Inputs (arguments, then aux states) come first as Symbols -- or one
// `const std::vector<Symbol>& data` for variadic operators -- then required parameters in
// declaration order, then optional ones with their defaults. Enum parameters become
// `enum class <Op><FieldCamel> { kValue, ... }` converted to strings. Operators whose names
// start with '_' are left out (op_suppl.h covers the elementwise ones).
//
// Usage: symbind_gen_op_header <output path>. The file is rewritten only when it changes.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <symbind/core/op.h>
#include <symbind/core/op_docs.h>

using symbind::Op;
using symbind::ParamField;

namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

const std::set<std::string>& Keywords() {
  static const std::set<std::string> k = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
      "class", "const", "continue", "default", "delete", "do", "double", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "namespace", "new", "not", "operator", "or", "private", "protected",
      "public", "register", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "template", "this", "throw", "true", "try", "typedef", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "while", "xor", "symbol_name"};
  return k;
}

std::string CppName(const std::string& name) { return Keywords().count(name) ? name + "_" : name; }

std::string Camel(const std::string& field) {
  std::string out;
  bool up = true;
  for (char c : field) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string EnumValueName(const std::string& v) {
  std::string s = "k";
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    s += i == 0 ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
  }
  return s;
}

std::string CString(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') { o += "\\n"; continue; }
    o += c;
  }
  return o + "\"";
}

struct ParamInfo {
  std::string name;         // as the operator spells it
  std::string cpp_name;     // the C++ argument name
  std::string type;         // C++ type
  bool is_enum = false;
  std::string enum_type;
  std::vector<std::string> enum_values;
  bool has_default = false;
  std::string default_expr;
  std::string doc;
};

std::string NumberLiteral(const std::string& d, const std::string& type) {
  if (d == "inf" || d == "Infinity") return "std::numeric_limits<" + type + ">::infinity()";
  if (d == "-inf" || d == "-Infinity") return "-std::numeric_limits<" + type + ">::infinity()";
  if (d == "nan" || d == "NaN") return "std::numeric_limits<" + type + ">::quiet_NaN()";
  return d;
}

std::vector<std::string> TupleItems(const std::string& d) {
  std::vector<std::string> items;
  std::string inner;
  for (char c : d)
    if (c != '(' && c != ')' && c != '[' && c != ']' && c != ' ') inner += c;
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

ParamInfo Describe(const std::string& op_name, const ParamField& f) {
  ParamInfo p;
  p.name = f.name();
  p.cpp_name = CppName(f.name());
  p.doc = f.doc();
  p.has_default = f.has_default();
  std::string base = symbind::ParamBaseType(f), def = f.has_default() ? f.DefaultString() : "";
  if (!base.empty() && base[0] == '{') {
    p.is_enum = true;
    p.enum_type = op_name + Camel(f.name());
    p.enum_values = symbind::EnumValues(base);
    // Sorted, with None (listed for optional enums) first.
    bool has_none = p.enum_values.front() == "None";
    if (has_none) p.enum_values.erase(p.enum_values.begin());
    std::sort(p.enum_values.begin(), p.enum_values.end());
    if (has_none) p.enum_values.insert(p.enum_values.begin(), "None");
    p.type = p.enum_type;
    if (p.has_default) p.default_expr = p.enum_type + "::" + EnumValueName(def);
    return p;
  }
  std::string token = base.substr(0, base.find(", "));
  bool nonneg = false;
  const std::string nn = " (non-negative)";
  if (token.size() > nn.size() && token.compare(token.size() - nn.size(), nn.size(), nn) == 0) {
    nonneg = true;
    token = token.substr(0, token.size() - nn.size());
  }
  bool optional = false;
  const std::string on = " or None";
  if (token.size() > on.size() && token.compare(token.size() - on.size(), on.size(), on) == 0) {
    optional = true;
    token = token.substr(0, token.size() - on.size());
  }
  std::string core;
  if (token == "int") core = nonneg ? "uint32_t" : "int";
  else if (token == "long") core = nonneg ? "uint64_t" : "int64_t";
  else if (token == "float") core = "mx_float";
  else if (token == "double") core = "double";
  else if (token == "boolean") core = "bool";
  else if (token == "Shape(tuple)" || token == "Shape") core = "Shape";
  else if (token.rfind("tuple of <", 0) == 0) core = "std::vector<mx_float>";
  else core = "std::string";
  bool by_ref = core == "std::string" || core == "std::vector<mx_float>";
  if (optional) p.type = "dmlc::optional<" + core + ">";
  else p.type = by_ref ? "const " + core + "&" : core;
  if (!p.has_default) return p;

  auto value_expr = [&](const std::string& d) -> std::string {
    if (core == "bool") return (d == "True" || d == "true" || d == "1") ? "true" : "false";
    if (core == "std::string") return CString(d);
    if (core == "Shape") {
      auto items = TupleItems(d);
      for (auto& i : items)
        if (i == "None") return "Shape()";
      if (items.empty()) return "Shape()";
      std::string s = "Shape(";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
      return s + ")";
    }
    if (core == "std::vector<mx_float>") {
      auto items = TupleItems(d);
      std::string s = "std::vector<mx_float>{";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
      return s + "}";
    }
    if (core == "mx_float") {
      std::string lit = NumberLiteral(d, "float");
      if (lit != d) return lit;
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), std::stof(d));
      return std::string(buf, r.ptr);
    }
    if (core == "double") return NumberLiteral(d, "double");
    return d;
  };
  if (optional) p.default_expr = def == "None" ? p.type + "()" : p.type + "(" + value_expr(def) + ")";
  else p.default_expr = value_expr(def);
  return p;
}

// The inputs, warning when they cannot be listed.
symbind::OpInputList ListInputs(const Op& op) {
  symbind::OpInputList in = symbind::ListOpInputs(op);
  if (!in.error.empty())
    std::cerr << "gen_op_header: " << op.name << ": cannot list inputs (" << in.error
              << "); assuming 'data'\n";
  return in;
}

std::string FirstSentence(const std::string& d) {
  std::string s = d.substr(0, d.find('\n'));
  return s;
}

void EmitOp(std::ostream& os, const Op& op, const std::string& fn, bool with_name) {
  std::vector<ParamInfo> params;
  for (auto& f : op.schema->fields()) params.push_back(Describe(fn, *f));
  symbind::OpInputList inputs = ListInputs(op);
  std::set<std::string> input_names(inputs.names.begin(), inputs.names.end());
  for (auto& p : params)
    if (input_names.count(p.cpp_name)) p.cpp_name += "_param";

  if (with_name)
    for (auto& p : params) {
      if (!p.is_enum) continue;
      os << "/*! \\brief " << FirstSentence(p.doc) << " */\n";
      os << "enum class " << p.enum_type << " {\n";
      for (size_t i = 0; i < p.enum_values.size(); ++i)
        os << "  " << EnumValueName(p.enum_values[i]) << " = " << i
           << (i + 1 < p.enum_values.size() ? ",\n" : "\n");
      os << "};\n\n";
    }

  os << "/*!\n * \\brief " << FirstSentence(op.description) << "\n";
  if (with_name) os << " * \\param symbol_name name of the resulting symbol\n";
  if (inputs.variadic) os << " * \\param data the inputs\n";
  for (auto& n : inputs.names) os << " * \\param " << CppName(n) << " input '" << n << "'\n";
  for (auto& p : params) os << " * \\param " << p.cpp_name << " " << FirstSentence(p.doc) << "\n";
  os << " * \\return new symbol\n */\n";

  std::vector<std::string> decl;
  if (with_name) decl.push_back("const std::string& symbol_name");
  if (inputs.variadic) decl.push_back("const std::vector<Symbol>& data");
  for (auto& n : inputs.names) decl.push_back("Symbol " + CppName(n));
  for (auto& p : params)
    if (!p.has_default) decl.push_back(p.type + " " + p.cpp_name);
  for (auto& p : params)
    if (p.has_default) decl.push_back(p.type + " " + p.cpp_name + " = " + p.default_expr);
  std::string head = "inline Symbol " + fn + "(";
  os << head;
  for (size_t i = 0; i < decl.size(); ++i)
    os << (i ? ",\n" + std::string(head.size(), ' ') : "") << decl[i];
  os << ") {\n";
  for (auto& p : params) {
    if (!p.is_enum) continue;
    os << "  static const char* " << p.enum_type << "Values[] = {";
    for (size_t i = 0; i < p.enum_values.size(); ++i) os << (i ? ", " : "") << CString(p.enum_values[i]);
    os << "};\n";
  }
  os << "  return Operator(" << CString(op.name) << ")\n";
  auto ordered = params;
  std::stable_partition(ordered.begin(), ordered.end(), [](const ParamInfo& p) { return !p.has_default; });
  for (auto& p : ordered) {
    if (p.is_enum)
      os << "           .SetParam(" << CString(p.name) << ", " << p.enum_type << "Values[int(" << p.cpp_name
         << ")])\n";
    else
      os << "           .SetParam(" << CString(p.name) << ", " << p.cpp_name << ")\n";
  }
  for (auto& n : inputs.names) os << "           .SetInput(" << CString(n) << ", " << CppName(n) << ")\n";
  if (inputs.variadic) os << "           (data)\n";
  os << "           .CreateSymbol(" << (with_name ? "symbol_name" : "") << ");\n}\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <output op.h>\n";
    return 2;
  }
  std::ostringstream os;
  os << "// Generated by symbind_gen_op_header from the operator registry: do not edit.\n"
        "// One function per operator with MXNet cpp-package's op.h signatures.\n"
        "#pragma once\n#include <cstdint>\n#include <limits>\n#include <string>\n#include <vector>\n\n"
        "#include <dmlc/optional.h>\n\n"
        "#include \"mxnet-cpp/base.h\"\n#include \"mxnet-cpp/operator.h\"\n#include \"mxnet-cpp/symbol.h\"\n\n"
        "namespace mxnet {\nnamespace cpp {\n\n";
  std::vector<std::pair<std::string, const Op*>> fns;
  std::set<std::string> seen;
  for (const Op* op : symbind::OpRegistry::Global().ListOps()) {
    std::vector<std::string> names{op->name};
    names.insert(names.end(), op->aliases.begin(), op->aliases.end());
    for (auto& n : names) {
      if (n.empty() || n[0] == '_' || !IsIdentifier(n) || Keywords().count(n) || seen.count(n)) continue;
      seen.insert(n);
      fns.emplace_back(n, op);
    }
  }
  std::sort(fns.begin(), fns.end());
  for (auto& [name, op] : fns) EmitOp(os, *op, name, true);
  for (auto& [name, op] : fns) EmitOp(os, *op, name, false);
  os << "}  // namespace cpp\n}  // namespace mxnet\n";

  std::string text = os.str();
  {
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream old;
    old << in.rdbuf();
    if (in && old.str() == text) return 0;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out << text;
  if (!out) {
    std::cerr << "gen_op_header: cannot write " << argv[1] << "\n";
    return 1;
  }
  std::cout << "gen_op_header: wrote " << fns.size() << " operators to " << argv[1] << "\n";
  return 0;
}
