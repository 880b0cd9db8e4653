#include "tshape.h"

#include <cctype>
#include <limits>

#include "checked_math.h"

namespace symbind {

TShape TShape::Filled(int ndim, int64_t value) {
  return TShape(std::vector<int64_t>(static_cast<size_t>(ndim), value));
}

bool TShape::is_known() const {
  if (!known_rank_) return false;
  for (int64_t d : dims_)
    if (d < 0) return false;
  return true;
}

int64_t TShape::ProdDims(int begin, int end) const {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) {
    int64_t d = dims_[static_cast<size_t>(i)];
    if (d < 0) throw Error(StrCat("shape ", ToString(), " has an unknown dim"));
    n = CheckedMul(n, d, "shape ", *this, " has more elements than int64 can count");
  }
  return n;
}

int64_t TShape::Size() const {
  if (!known_rank_) throw Error("shape of unknown rank has no size");
  return ProdDims(0, ndim());
}

namespace {
std::string FormatDims(const std::vector<int64_t>& dims, bool unknown_as_question) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    const bool unknown = unknown_as_question && dims[i] == TShape::kUnknownDim;
    s += unknown ? std::string("?") : std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}
}  // namespace

std::string TShape::ToString() const {
  if (!known_rank_) return "?";
  return FormatDims(dims_, true);
}

std::string TShape::ToStringAsWritten() const {
  if (!known_rank_) return "None";
  return FormatDims(dims_, false);
}

TShape TShape::Parse(const std::string& text) {
  auto fail = [&](const std::string& why) {
    return ParamError(StrCat("cannot parse shape '", text, "': ", why));
  };
  size_t i = 0, n = text.size();
  auto skip_space = [&] {
    while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  char close = 0;
  if (i < n && (text[i] == '(' || text[i] == '[')) {
    close = text[i] == '(' ? ')' : ']';
    ++i;
  }
  std::vector<int64_t> dims;
  skip_space();
  while (i < n && text[i] != close) {
    skip_space();
    bool neg = false;
    if (i < n && text[i] == '-') {
      neg = true;
      ++i;
    }
    if (i >= n || !std::isdigit(static_cast<unsigned char>(text[i]))) {
      // "None" inside a tuple means an unknown dim (MXNet writes it for partial shapes).
      if (text.compare(i, 4, "None") == 0) {
        dims.push_back(kUnknownDim);
        i += 4;
      } else {
        throw fail("expected an integer");
      }
    } else {
      int64_t v = 0;
      while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) throw fail("dim too large");
        v = v * 10 + (text[i] - '0');
        ++i;
      }
      if (i < n && text[i] == 'L') ++i;  // Python 2 long suffix
      dims.push_back(neg ? -v : v);
    }
    skip_space();
    if (i < n && text[i] == ',') {
      ++i;
      skip_space();
    } else if (i < n && text[i] != close) {
      throw fail(StrCat("unexpected character '", text[i], "'"));
    }
  }
  if (close) {
    if (i >= n) throw fail(StrCat("missing '", close, "'"));
    ++i;
  }
  skip_space();
  if (i != n) throw fail("trailing characters");
  return TShape(std::move(dims));
}

std::ostream& operator<<(std::ostream& os, const TShape& s) { return os << s.ToString(); }

bool UnifyShapes(const TShape& a, const TShape& b, TShape* out) {
  if (!a.ndim_known()) {
    *out = b;
    return true;
  }
  if (!b.ndim_known()) {
    *out = a;
    return true;
  }
  if (a.ndim() != b.ndim()) return false;
  TShape r = a;
  for (int i = 0; i < a.ndim(); ++i) {
    if (a[i] < 0) {
      r[i] = b[i];
    } else if (b[i] >= 0 && a[i] != b[i]) {
      return false;
    }
  }
  *out = r;
  return true;
}

}  // namespace symbind
