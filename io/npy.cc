#include <symbind/io/npy.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <symbind/io/ndarray_file.h>

namespace symbind {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr int kMaxDims = 64;         // NumPy 2's limit (1.x: 32)
constexpr size_t kAlign = 64;        // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kGrowthDigits = 21; // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

struct DTypeCode {
  const char* kind;  // descr without the byte-order character
  DType dtype;
};
constexpr DTypeCode kCodes[] = {
    {"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"f2", DType::kFloat16},
    {"i4", DType::kInt32},   {"i8", DType::kInt64},   {"u1", DType::kUint8},
    {"i1", DType::kInt8},    {"b1", DType::kBool},
};

// A parser for the header's dict literal, restricted to what .npy headers hold.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  void Parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    Expect('{');
    for (;;) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key = String();
      Expect(':');
      SkipSpace();
      if (key == "descr") {
        if (have_descr) Fail("'descr' given twice");
        if (Peek() != '\'' && Peek() != '"')
          Fail("structured dtypes (a 'descr' that is not a string) are not supported");
        *descr = String();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) Fail("'fortran_order' given twice");
        *fortran = Bool();
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) Fail("'shape' given twice");
        *shape = Tuple();
        have_shape = true;
      } else {
        Fail(StrCat("unexpected key '", key, "'"));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++i_;
        continue;
      }
      if (Peek() != '}') Fail("expected ',' or '}'");
    }
    ++i_;  // '}'
    SkipSpace();
    if (i_ != s_.size()) Fail("unexpected text after the dict");
    if (!have_descr || !have_fortran || !have_shape)
      Fail(StrCat("missing key '",
                  !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape", "'"));
  }

 private:
  [[noreturn]] void Fail(const std::string& msg) const {
    throw IOError(StrCat(what_, ": bad .npy header at character ", i_, ": ", msg));
  }
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) Fail(StrCat("expected '", c, "'"));
    ++i_;
  }
  std::string String() {
    char quote = Peek();
    if (quote != '\'' && quote != '"') Fail("expected a quoted string");
    size_t end = s_.find(quote, i_ + 1);
    if (end == std::string::npos) Fail("unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    if (out.find('\\') != std::string::npos) Fail("escapes in strings are not supported");
    i_ = end + 1;
    return out;
  }
  bool Bool() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    Fail("expected True or False");
  }
  // "(2, 3)", "(5,)", "()"; a list "[2, 3]" too. Old Python 2 files may write "3L".
  std::vector<int64_t> Tuple() {
    char open = Peek();
    if (open != '(' && open != '[') Fail("expected a tuple for 'shape'");
    char close = open == '(' ? ')' : ']';
    ++i_;
    std::vector<int64_t> dims;
    // The dict or the header ending inside the tuple means its closing bracket is missing.
    auto fail_if_unclosed = [&] {
      if (Peek() == '}' || i_ >= s_.size())
        Fail(StrCat("the 'shape' tuple is not closed: missing '", close, "'"));
    };
    for (;;) {
      SkipSpace();
      if (Peek() == close) break;
      fail_if_unclosed();
      if (Peek() < '0' || Peek() > '9') Fail("a shape dimension must be a non-negative integer");
      int64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        int digit = Peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
          Fail("a shape dimension is too large");
        v = v * 10 + digit;
        ++i_;
      }
      if (Peek() == 'L') ++i_;
      dims.push_back(v);
      if (dims.size() > static_cast<size_t>(kMaxDims))
        Fail(StrCat("more than ", kMaxDims, " dimensions"));
      SkipSpace();
      if (Peek() == ',') {
        ++i_;
      } else if (Peek() != close) {
        fail_if_unclosed();
        Fail(StrCat("expected ',' or '", close, "' after a shape dimension"));
      }
    }
    ++i_;
    return dims;
  }

  const std::string& s_;
  const std::string& what_;
  size_t i_ = 0;
};

DType DTypeFromDescr(const std::string& descr, const std::string& what) {
  if (descr.size() >= 2) {
    char order = descr[0];
    std::string kind = descr.substr(1);
    for (const DTypeCode& c : kCodes) {
      if (kind != c.kind) continue;
      bool one_byte = DTypeSize(c.dtype) == 1;
      if (order == '<' || (one_byte && (order == '|' || order == '>' || order == '=')))
        return c.dtype;
      if (order == '>')
        throw IOError(StrCat(what, ": big-endian data ('", descr, "') is not supported"));
      throw IOError(StrCat(what, ": byte order '", order, "' of dtype '", descr,
                           "' is not supported (expected '<')"));
    }
  }
  if (descr == "|O")
    throw IOError(StrCat(what, ": object arrays (pickled Python objects) are not supported"));
  throw IOError(StrCat(what, ": unsupported dtype '", descr,
                       "' (supported: <f4 <f8 <f2 <i4 <i8 |u1 |i1 |b1)"));
}

uint32_t LittleEndian(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string ShapeRepr(const TShape& s) {
  if (s.ndim() == 0) return "()";
  std::string out = "(";
  for (int i = 0; i < s.ndim(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + (s.ndim() == 1 ? ",)" : ")");
}

}  // namespace

std::string NpyDescr(DType dtype) {
  for (const DTypeCode& c : kCodes)
    if (c.dtype == dtype) return std::string(DTypeSize(dtype) == 1 ? "|" : "<") + c.kind;
  throw Error(StrCat("dtype ", DTypeName(dtype), " has no NumPy .npy equivalent"));
}

NDArray LoadNpyBuffer(const void* data, size_t size, const std::string& what) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < kMagicLen + 2 || std::memcmp(p, kMagic, kMagicLen) != 0)
    throw IOError(StrCat(what, ": not a .npy file (no \\x93NUMPY magic)"));
  int major = p[kMagicLen], minor = p[kMagicLen + 1];
  if (major < 1 || major > 3 || minor != 0)
    throw IOError(StrCat(what, ": unsupported .npy format version ", major, ".", minor));
  int len_bytes = major == 1 ? 2 : 4;
  size_t preamble = kMagicLen + 2 + static_cast<size_t>(len_bytes);
  if (size < preamble) throw IOError(StrCat(what, ": truncated .npy preamble"));
  size_t header_len = LittleEndian(p + kMagicLen + 2, len_bytes);
  if (header_len > size - preamble)
    throw IOError(StrCat(what, ": truncated .npy header (", header_len, " bytes declared, ",
                         size - preamble, " present)"));
  std::string header(reinterpret_cast<const char*>(p + preamble), header_len);
  for (char ch : header)
    if (static_cast<unsigned char>(ch) >= 0x80 || ch == '\0')
      throw IOError(StrCat(what, ": bad .npy header: non-ASCII or NUL byte"));

  std::string descr;
  bool fortran = false;
  std::vector<int64_t> dims;
  HeaderParser(header, what).Parse(&descr, &fortran, &dims);
  DType dtype = DTypeFromDescr(descr, what);
  if (fortran && dims.size() > 1)
    throw IOError(StrCat(what, ": Fortran-order (column-major) arrays are not supported; save a "
                               "C-order copy (numpy.ascontiguousarray)"));

  const size_t offset = preamble + header_len;
  const size_t available = size - offset;
  const size_t item = DTypeSize(dtype);
  // The element count, bounded by what the data could hold (so no overflow and no huge
  // allocation for a hostile shape).
  uint64_t count = 1;
  bool empty = false;
  for (int64_t d : dims) empty = empty || d == 0;
  if (empty) {
    // No data, but the other dims must still be countable (shape code multiplies them).
    int64_t product = 1;
    for (int64_t d : dims) {
      if (d != 0 && product > std::numeric_limits<int64_t>::max() / d)
        throw IOError(StrCat(what, ": .npy shape ", ShapeRepr(TShape(dims)),
                             " has too many elements to count"));
      if (d != 0) product *= d;
    }
    count = 0;
  } else {
    const uint64_t limit = available / item;
    for (int64_t d : dims) {
      if (count > limit / static_cast<uint64_t>(d))
        throw IOError(StrCat(what, ": truncated .npy data: shape ", ShapeRepr(TShape(dims)),
                             " of ", descr, " needs more than the ", available,
                             " bytes present"));
      count *= static_cast<uint64_t>(d);
    }
  }
  const size_t need = static_cast<size_t>(count) * item;
  if (need != available)
    throw IOError(StrCat(what, ": .npy data is ", available, " bytes but shape ",
                         ShapeRepr(TShape(dims)), " of ", descr, " needs ", need,
                         need > available ? " (truncated)" : " (trailing bytes)"));

  NDArray out(TShape(dims), dtype);
  if (need > 0) std::memcpy(out.raw_data(), p + offset, need);
  if (dtype == DType::kBool) {
    auto* b = static_cast<unsigned char*>(out.raw_data());
    for (size_t i = 0; i < need; ++i) b[i] = b[i] != 0;
  }
  return out;
}

NDArray LoadNpy(const std::string& path) {
  std::string bytes = ReadFileToString(path);
  return LoadNpyBuffer(bytes.data(), bytes.size(), path);
}

std::string SaveNpyToString(const NDArray& array) {
  if (array.is_none()) throw Error("SaveNpy: cannot save a none array");
  const TShape& shape = array.shape();
  std::string dict = StrCat("{'descr': '", NpyDescr(array.dtype()),
                            "', 'fortran_order': False, 'shape': ", ShapeRepr(shape), ", }");
  // Like numpy: room for the first dim to grow to 21 digits, then pad with spaces and '\n' so
  // that the data starts at a multiple of 64.
  if (shape.ndim() > 0) {
    size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthDigits) dict.append(kGrowthDigits - digits, ' ');
  }
  int major = 1;
  size_t preamble = kMagicLen + 2 + 2;
  size_t padded = dict.size() + 1;
  padded += kAlign - (preamble + padded) % kAlign;
  if (padded > 0xFFFF) {
    major = 2;
    preamble = kMagicLen + 2 + 4;
    padded = dict.size() + 1;
    padded += kAlign - (preamble + padded) % kAlign;
  }
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((padded >> (8 * i)) & 0xFF);
  out += dict;
  out.append(padded - dict.size() - 1, ' ');
  out += '\n';
  out.append(static_cast<const char*>(array.raw_data()), array.bytes());
  return out;
}

void SaveNpy(const std::string& path, const NDArray& array) {
  WriteStringToFile(path, SaveNpyToString(array));
}

}  // namespace symbind
