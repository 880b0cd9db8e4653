#include <catch2/catch.hpp>

#include <symbind/core/ndarray.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/npy.h>

#include "test_io_util.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace symbind;
using namespace std::string_literals;

namespace {

const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens";

using symbind_test::TempPath;

// Where the data of a version 1.0 file starts, read from the bytes directly.
size_t DataOffsetV1(const std::string& bytes) {
  REQUIRE(bytes.size() >= 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  REQUIRE(bytes[6] == 1);
  size_t hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  return 10 + hlen;
}

float FloatAt(const std::string& bytes, size_t offset, int64_t index) {
  float v;
  std::memcpy(&v, bytes.data() + offset + static_cast<size_t>(index) * 4, 4);
  return v;
}

// A .npy file with the given header dict (padded like numpy) and data.
std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t hlen = dict.size() + 1;
  hlen += 64 - (8 + len_bytes + hlen) % 64;
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((hlen >> (8 * i)) & 0xFF);
  out += dict;
  out.append(hlen - dict.size() - 1, ' ');
  out += '\n';
  return out + data;
}

std::string Floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(v.begin()), v.size() * sizeof(float));
}

void CheckLoadFails(const std::string& bytes, const std::string& what) {
  try {
    LoadNpyBuffer(bytes.data(), bytes.size(), "case.npy");
    FAIL("expected IOError about '" << what << "'");
  } catch (const IOError& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("case.npy") != std::string::npos);
    CHECK(msg.find(what) != std::string::npos);
  }
}

// Value k (C order) of the fixtures written by scripts/make_npy_fixtures.py, as double.
double FixtureValue(const std::string& tag, int64_t k) {
  if (tag == "f4" || tag == "f8" || tag == "f2") return k * 0.5 - 1.25;
  if (tag == "i4") return static_cast<double>((k - 3) * 100003);
  if (tag == "i8") return static_cast<double>((k - 3) * ((int64_t{1} << 40) + 7));
  if (tag == "u1") return static_cast<double>((k * 51 + 1) % 256);
  if (tag == "i1") return static_cast<double>((k * 51 + 1) % 256 - 128);
  if (tag == "b1") return k % 3 == 0 ? 1.0 : 0.0;
  FAIL("unknown tag " << tag);
  return 0;
}

// Element k of `a` as double, read through the typed pointer of its dtype.
double ElementAsDouble(const NDArray& a, int64_t k) {
  switch (a.dtype()) {
    case DType::kFloat32: return a.data<float>()[k];
    case DType::kFloat64: return a.data<double>()[k];
    case DType::kFloat16: return HalfToFloat(static_cast<const uint16_t*>(a.raw_data())[k]);
    case DType::kInt32: return a.data<int32_t>()[k];
    case DType::kInt64: return static_cast<double>(a.data<int64_t>()[k]);
    case DType::kUint8: return a.data<uint8_t>()[k];
    case DType::kInt8: return a.data<int8_t>()[k];
    case DType::kBool: return static_cast<const uint8_t*>(a.raw_data())[k];
    default: FAIL("unexpected dtype"); return 0;
  }
}

}  // namespace

TEST_CASE("npy reads the MTCNN goldens written by numpy", "[io][npy]") {
  std::string manifest_text = ReadFileToString(kGoldens + "/mtcnn/manifest.json");
  auto manifest = nlohmann::json::parse(manifest_text);
  REQUIRE(manifest["cases"].size() == 4);
  int files = 0;
  for (const auto& c : manifest["cases"]) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> entries;
    entries.emplace_back(c["input_file"].get<std::string>(),
                         c["input"]["data"].get<std::vector<int64_t>>());
    for (const auto& o : c["outputs"])
      entries.emplace_back(o["file"].get<std::string>(), o["shape"].get<std::vector<int64_t>>());
    for (const auto& [file, shape] : entries) {
      INFO(file);
      std::string path = kGoldens + "/mtcnn/" + file;
      NDArray a = LoadNpy(path);
      REQUIRE(a.dtype() == DType::kFloat32);
      REQUIRE(a.shape() == TShape(shape));
      // Spot-check values against the bytes of the file, located by hand.
      std::string bytes = ReadFileToString(path);
      size_t offset = DataOffsetV1(bytes);
      CHECK(offset % 64 == 0);
      const int64_t n = a.Size();
      REQUIRE(bytes.size() == offset + static_cast<size_t>(n) * 4);
      for (int64_t k : {int64_t{0}, int64_t{1}, n / 3, n / 2, n - 2, n - 1})
        CHECK(a.GetFlat(k) == FloatAt(bytes, offset, k));
      CHECK(std::memcmp(a.raw_data(), bytes.data() + offset, static_cast<size_t>(n) * 4) == 0);
      ++files;
    }
  }
  CHECK(files == 4 + 9);

  // Properties of the values: inputs uniform in [-1, 1], probabilities summing to 1.
  NDArray data = LoadNpy(kGoldens + "/mtcnn/det1_97x123_data.npy");
  std::vector<float> v = data.ToVector();
  for (float x : v) REQUIRE(std::fabs(x) <= 1.0f);
  NDArray prob = LoadNpy(kGoldens + "/mtcnn/det1_97x123_prob1_output.npy");
  REQUIRE(prob.shape() == TShape({1, 2, 44, 57}));
  for (int64_t y = 0; y < 44; ++y)
    for (int64_t x = 0; x < 57; ++x)
      REQUIRE(prob.At({0, 0, y, x}) + prob.At({0, 1, y, x}) == Approx(1.0f).margin(1e-5));
  NDArray prob3 = LoadNpy(kGoldens + "/mtcnn/det3_48x48_prob1_output.npy");
  for (int64_t i = 0; i < 4; ++i)
    CHECK(prob3.At({i, 0}) + prob3.At({i, 1}) == Approx(1.0f).margin(1e-5));
}

TEST_CASE("npy reads every dtype numpy wrote, and writes the same bytes", "[io][npy]") {
  struct Fixture {
    std::string tag;
    DType dtype;
  };
  for (const Fixture& f : {Fixture{"f4", DType::kFloat32}, Fixture{"f8", DType::kFloat64},
                           Fixture{"f2", DType::kFloat16}, Fixture{"i4", DType::kInt32},
                           Fixture{"i8", DType::kInt64}, Fixture{"u1", DType::kUint8},
                           Fixture{"i1", DType::kInt8}, Fixture{"b1", DType::kBool}}) {
    INFO(f.tag);
    std::string path = kGoldens + "/npy/" + f.tag + "_2x3.npy";
    NDArray a = LoadNpy(path);
    REQUIRE(a.dtype() == f.dtype);
    REQUIRE(a.shape() == TShape({2, 3}));
    for (int64_t k = 0; k < 6; ++k) CHECK(ElementAsDouble(a, k) == FixtureValue(f.tag, k));
    CHECK(NpyDescr(f.dtype) == (DTypeSize(f.dtype) == 1 ? "|" : "<") + f.tag);
    // numpy.save's exact bytes.
    CHECK(SaveNpyToString(a) == ReadFileToString(path));
  }

  for (const char* name : {"f4_scalar", "f4_empty_0x3", "f4_2x3x4", "u1_70000"}) {
    INFO(name);
    std::string path = kGoldens + "/npy/" + name + ".npy";
    NDArray a = LoadNpy(path);
    std::string tag = std::string(name).substr(0, 2);
    for (int64_t k = 0; k < a.Size(); ++k) REQUIRE(ElementAsDouble(a, k) == FixtureValue(tag, k));
    CHECK(SaveNpyToString(a) == ReadFileToString(path));
  }
  CHECK(LoadNpy(kGoldens + "/npy/f4_scalar.npy").shape() == TShape(std::vector<int64_t>{}));
  CHECK(LoadNpy(kGoldens + "/npy/f4_empty_0x3.npy").shape() == TShape({0, 3}));
  CHECK(LoadNpy(kGoldens + "/npy/f4_2x3x4.npy").shape() == TShape({2, 3, 4}));
  CHECK(LoadNpy(kGoldens + "/npy/u1_70000.npy").shape() == TShape({70000}));

  // Format versions 2.0 and 3.0 hold the same array.
  NDArray v1 = LoadNpy(kGoldens + "/npy/f4_2x3.npy");
  for (const char* name : {"f4_2x3_v2", "f4_2x3_v3"}) {
    INFO(name);
    NDArray a = LoadNpy(kGoldens + "/npy/" + name + ".npy");
    CHECK(a.shape() == v1.shape());
    CHECK(a.ToVector() == v1.ToVector());
  }

  // Fortran order and big-endian data: clear errors.
  try {
    LoadNpy(kGoldens + "/npy/f4_2x3_fortran.npy");
    FAIL("Fortran order accepted");
  } catch (const IOError& e) {
    CHECK(std::string(e.what()).find("Fortran-order") != std::string::npos);
    CHECK(std::string(e.what()).find("f4_2x3_fortran.npy") != std::string::npos);
  }
  CHECK_THROWS_WITH(LoadNpy(kGoldens + "/npy/f4_2x3_bigendian.npy"),
                    Catch::Contains("big-endian"));
}

TEST_CASE("npy round-trips every dtype and shape through a file", "[io][npy]") {
  std::mt19937 rng(7);
  const std::vector<TShape> shapes = {TShape(std::vector<int64_t>{}), TShape({0}), TShape({0, 3}),
                                      TShape({7}), TShape({2, 3, 4}), TShape({1, 1, 1, 1, 5})};
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
                   DType::kInt64, DType::kUint8, DType::kInt8, DType::kBool}) {
    for (const TShape& shape : shapes) {
      INFO(DTypeName(dt) << " " << shape);
      NDArray a(shape, dt);
      auto* bytes = static_cast<unsigned char*>(a.raw_data());
      for (size_t i = 0; i < a.bytes(); ++i) bytes[i] = static_cast<unsigned char>(rng());
      if (dt == DType::kBool)
        for (size_t i = 0; i < a.bytes(); ++i) bytes[i] &= 1;
      std::string path = TempPath("rt.npy");
      SaveNpy(path, a);
      NDArray b = LoadNpy(path);
      std::remove(path.c_str());
      REQUIRE(b.dtype() == dt);
      REQUIRE(b.shape() == shape);
      CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
      std::string s = SaveNpyToString(a);
      CHECK(DataOffsetV1(s) % 64 == 0);
      CHECK(s.size() == DataOffsetV1(s) + a.bytes());
    }
  }
  // Bools stored as other non-zero bytes read as 1.
  std::string b1 = MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                           std::string("\x00\x07\x01", 3));
  NDArray b = LoadNpyBuffer(b1.data(), b1.size());
  CHECK(std::vector<uint8_t>(static_cast<uint8_t*>(b.raw_data()),
                             static_cast<uint8_t*>(b.raw_data()) + 3) ==
        std::vector<uint8_t>{0, 1, 1});

  // A view saves only its own rows.
  NDArray m(TShape({4, 2}), std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  std::string s = SaveNpyToString(m.Slice(1, 3));
  NDArray back = LoadNpyBuffer(s.data(), s.size());
  CHECK(back.shape() == TShape({2, 2}));
  CHECK(back.ToVector() == std::vector<float>{2, 3, 4, 5});

  // Header variants numpy never writes but accepts: other key order, double quotes, lists,
  // no trailing comma, Python 2 longs, Fortran order for rank <= 1, version 2.0.
  const std::string data = Floats({1, 2, 3, 4});
  for (const std::string& dict :
       {std::string("{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}"),
        std::string("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": [2, 2]}"),
        std::string("{'descr':'<f4','fortran_order':False,'shape':(2L,2L),}")}) {
    INFO(dict);
    std::string f = MakeNpy(dict, data);
    NDArray a = LoadNpyBuffer(f.data(), f.size());
    CHECK(a.shape() == TShape({2, 2}));
    CHECK(a.ToVector() == std::vector<float>{1, 2, 3, 4});
  }
  std::string f1 = MakeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", data);
  CHECK(LoadNpyBuffer(f1.data(), f1.size()).ToVector() == std::vector<float>{1, 2, 3, 4});
  std::string f2 = MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", data, 2);
  CHECK(LoadNpyBuffer(f2.data(), f2.size()).shape() == TShape({4}));

  CHECK_THROWS_AS(SaveNpyToString(NDArray()), Error);
  CHECK_THROWS_AS(SaveNpyToString(NDArray(TShape({2}), DType::kBFloat16)), Error);
  CHECK_THROWS_AS(NpyDescr(DType::kBFloat16), Error);
  CHECK_THROWS_AS(LoadNpy(TempPath("does_not_exist.npy")), IOError);
}

TEST_CASE("npy rejects hostile and broken files with IOError", "[io][npy]") {
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string two = Floats({1, 2});
  auto with = [&](const std::string& dict, const std::string& data = std::string()) {
    return MakeNpy(dict, data);
  };
  std::string good = with(good_dict, two);
  REQUIRE(LoadNpyBuffer(good.data(), good.size()).ToVector() == std::vector<float>{1, 2});

  CheckLoadFails("", "not a .npy file");
  CheckLoadFails("\x93NUMP", "not a .npy file");
  CheckLoadFails("PK\x03\x04 this is a zip", "not a .npy file");
  std::string v = good;
  v[6] = 4;
  CheckLoadFails(v, "unsupported .npy format version 4.0");
  v = good;
  v[7] = 1;
  CheckLoadFails(v, "version 1.1");
  CheckLoadFails(good.substr(0, 9), "truncated .npy preamble");
  v = good;
  v[8] = '\xff';
  v[9] = '\xff';
  CheckLoadFails(v, "truncated .npy header");
  CheckLoadFails(good.substr(0, good.size() - 1), "truncated .npy data");
  CheckLoadFails(good + "x", "(trailing bytes)");

  CheckLoadFails(with("", two), "expected '{'");
  CheckLoadFails(with("{'descr': '<f4', 'shape': (2,), }", two), "missing key 'fortran_order'");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False}", two), "missing key 'shape'");
  CheckLoadFails(with("{'fortran_order': False, 'shape': (2,)}", two), "missing key 'descr'");
  CheckLoadFails(with("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                      two), "'descr' given twice");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two),
                 "unexpected key 'x'");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", two),
                 "expected True or False");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", two),
                 "non-negative integer");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}", two),
                 "expected ',' or ')' after a shape dimension");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", two),
                 "the 'shape' tuple is not closed: missing ')'");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}", two),
                 "the 'shape' tuple is not closed: missing ')'");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': [2, }", two),
                 "the 'shape' tuple is not closed: missing ']'");
  CheckLoadFails(with("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", two),
                 "expected ',' or '}'");
  CheckLoadFails(with("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", two),
                 "expected ':'");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'unterminated}",
                      two), "unterminated string");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': 2}", two),
                 "expected a tuple");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} extra", two),
                 "unexpected text after the dict");
  CheckLoadFails(with("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", two),
                 "expected ',' or '}'");
  CheckLoadFails(with("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}", two),
                 "escapes");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'sh\0pe': (2,)}"s, two),
                 "NUL byte");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'caf\xc3\xa9': 1}",
                      two), "non-ASCII");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(99999999999999999999,)}", two), "too large");
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1,";
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, 'shape': " + many + ")}", two),
                 "more than 64 dimensions");

  // Shapes whose element count overflows, or exceeds the data, fail without allocating.
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (4611686018427387904, 4611686018427387904)}", two),
                 "truncated .npy data");
  CheckLoadFails(with("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,)}",
                      two), "truncated .npy data");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (0, 1000000000, 1000000000)}", two),
                 "(trailing bytes)");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (4611686018427387904, 4611686018427387904, 0)}"),
                 "too many elements");
  NDArray empty = [&] {
    std::string f = with("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (0, 4611686018427387904)}");
    return LoadNpyBuffer(f.data(), f.size());
  }();
  CHECK(empty.Size() == 0);

  // Dtypes outside the supported set.
  CheckLoadFails(with("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", two),
                 "unsupported dtype '<c8'");
  CheckLoadFails(with("{'descr': '<U2', 'fortran_order': False, 'shape': (1,)}", two),
                 "unsupported dtype '<U2'");
  CheckLoadFails(with("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", two),
                 "object arrays");
  CheckLoadFails(with("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", two),
                 "big-endian");
  CheckLoadFails(with("{'descr': '=f4', 'fortran_order': False, 'shape': (2,)}", two),
                 "byte order '='");
  CheckLoadFails(with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", two),
                 "structured dtypes");
  CheckLoadFails(with("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2)}", two),
                 "Fortran-order");
  CheckLoadFails(with("{'descr': '', 'fortran_order': False, 'shape': (2,)}", two),
                 "unsupported dtype ''");
  // Byte order is irrelevant for one-byte types.
  std::string u1 = with("{'descr': '<u1', 'fortran_order': False, 'shape': (2,)}", "ab");
  CHECK(LoadNpyBuffer(u1.data(), u1.size()).dtype() == DType::kUint8);

  // Every truncation of a real file fails cleanly; so do random byte changes.
  std::string real = ReadFileToString(kGoldens + "/npy/i8_2x3.npy");
  for (size_t n = 0; n < real.size(); ++n) {
    std::string cut = real.substr(0, n);
    CHECK_THROWS_AS(LoadNpyBuffer(cut.data(), cut.size()), IOError);
  }
  std::mt19937 rng(1234);
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string m = real;
    int changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < changes; ++c) {
      size_t at = rng() % (trial % 2 ? 128 : m.size());  // mostly the header
      m[at] = static_cast<char>(rng());
    }
    try {
      NDArray a = LoadNpyBuffer(m.data(), m.size());
      ++loaded;
      CHECK(a.bytes() <= m.size());
    } catch (const IOError&) {
      ++rejected;
    }
  }
  CHECK(loaded + rejected == 3000);
  CHECK(rejected > 0);
}
