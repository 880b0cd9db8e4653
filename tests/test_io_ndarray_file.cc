#include <cmath>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include <symbind/io/ndarray_file.h>

#include "test_io_util.h"

using namespace symbind;
using symbind_test::Bytes;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
}

// A float32 read straight from the file at `offset`, without the loader.
float FloatAt(const std::string& path, size_t offset) {
  std::ifstream is(path, std::ios::binary);
  is.seekg(static_cast<std::streamoff>(offset));
  float v = 0;
  is.read(reinterpret_cast<char*>(&v), 4);
  REQUIRE(is.gcount() == 4);
  return v;
}

// Expected parameter names of an MTCNN net: every variable of its symbol JSON except the
// data input and the labels, as "arg:<name>".
std::set<std::string> ExpectedMtcnnNames(const std::string& json_path) {
  auto j = nlohmann::json::parse(Slurp(json_path));
  std::set<std::string> out;
  for (auto& n : j["nodes"]) {
    std::string name = n["name"];
    if (n["op"] == "null" && name != "data" && name.find("label") == std::string::npos)
      out.insert("arg:" + name);
  }
  return out;
}

// Expects an IOError whose message contains every fragment.
void ExpectIOError(const std::string& bytes, const std::vector<std::string>& fragments) {
  try {
    LoadNDArrayBuffer(bytes.data(), bytes.size());
    FAIL("expected IOError");
  } catch (const IOError& e) {
    std::string msg = e.what();
    INFO(msg);
    for (auto& f : fragments) CHECK(msg.find(f) != std::string::npos);
  }
}

bool BitEqual(const NDArray& a, const NDArray& b) {
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  return a.shape() == b.shape() && a.dtype() == b.dtype() && a.bytes() == b.bytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0;
}

// An array with distinct bytes in every element.
NDArray Pattern(const TShape& s, DType t, int seed) {
  NDArray a(s, t);
  auto* p = static_cast<unsigned char*>(a.raw_data());
  for (size_t i = 0; i < a.bytes(); ++i) p[i] = static_cast<unsigned char>(i * 131 + seed * 7 + 1);
  if (t == DType::kBool)
    for (size_t i = 0; i < a.bytes(); ++i) p[i] &= 1;
  return a;
}

}  // namespace

TEST_CASE("io: every MTCNN .params file loads with names, shapes, dtypes and values",
          "[io][shared]") {
  struct Spot {
    std::string name;
    TShape shape;
    float first, last;
  };
  struct Case {
    std::string net;
    size_t count;
    std::vector<Spot> spots;
  };
  // Values read from the files with an independent script.
  std::vector<Case> cases = {
      {"det1", 13,
       {{"arg:prelu2_gamma", {16}, 0.06700239330530167f, -0.05835217237472534f},
        {"arg:conv2_weight", {16, 10, 3, 3}, -0.11650128662586212f, -1.1300735473632812f}}},
      {"det2", 16,
       {{"arg:conv4_weight", {128, 576}, 0.016650894656777382f, -0.043069686740636826f}}},
      {"det3", 21,
       {{"arg:conv5_weight", {256, 1152}, 0.012195014394819736f, 0.011740791611373425f},
        {"arg:conv6_2_bias", {4}, 0.09993825107812881f, -0.009516803547739983f}}},
  };
  for (auto& c : cases) {
    const std::string dir = symbind_test::SharedDir() + "/models/mtcnn/";
    const std::string path = dir + c.net + "-0001.params";
    INFO(path);
    NDArrayFile f = LoadNDArrayFile(path);
    REQUIRE(f.arrays.size() == c.count);
    REQUIRE(f.names.size() == c.count);
    REQUIRE(f.formats == std::vector<int>(c.count, 0));
    std::set<std::string> names(f.names.begin(), f.names.end());
    CHECK(names == ExpectedMtcnnNames(dir + c.net + "-symbol.json"));

    // Walk the legacy layout to find each array's data offset, then read the first and last
    // element straight from the file.
    size_t offset = 24;
    for (size_t i = 0; i < f.arrays.size(); ++i) {
      const NDArray& a = f.arrays[i];
      REQUIRE(a.dtype() == DType::kFloat32);
      REQUIRE(a.ctx() == Context::CPU());
      offset += 4 + 4 * static_cast<size_t>(a.shape().ndim()) + 12;
      CHECK(a.GetFlat(0) == FloatAt(path, offset));
      CHECK(a.GetFlat(a.Size() - 1) == FloatAt(path, offset + a.bytes() - 4));
      offset += a.bytes();
    }
    CHECK(offset + 8 + c.count * 8 < Slurp(path).size());

    auto map = LoadNDArrayMap(path);
    for (auto& s : c.spots) {
      INFO(s.name);
      REQUIRE(map.count(s.name));
      const NDArray& a = map.at(s.name);
      CHECK(a.shape() == s.shape);
      CHECK(a.GetFlat(0) == s.first);
      CHECK(a.GetFlat(a.Size() - 1) == s.last);
    }
    std::map<std::string, NDArray> args, aux;
    SplitArgAux(map, &args, &aux);
    CHECK(args.size() == c.count);
    CHECK(aux.empty());
  }
}

TEST_CASE("io: save then load is bit-exact for every dtype", "[io]") {
  const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kUint8,
                       DType::kInt32,   DType::kInt8,    DType::kInt64,   DType::kBool,
                       DType::kBFloat16};
  std::vector<NDArray> arrays;
  std::vector<std::string> names;
  int seed = 0;
  for (DType t : all) {
    for (const TShape& s : {TShape{3, 5}, TShape{7}, TShape{2, 1, 3, 2}, TShape(std::vector<int64_t>{}),
                             TShape{0, 4}}) {
      arrays.push_back(Pattern(s, t, seed++));
      names.push_back(StrCat("a", seed, "_", DTypeName(t)));
    }
  }
  arrays.push_back(NDArray());
  names.push_back("none");

  for (bool named : {true, false}) {
    std::string bytes = SaveNDArraysToString(arrays, named ? names : std::vector<std::string>{});
    NDArrayFile f = LoadNDArrayBuffer(bytes.data(), bytes.size());
    REQUIRE(f.arrays.size() == arrays.size());
    CHECK(f.names == (named ? names : std::vector<std::string>{}));
    for (size_t i = 0; i < arrays.size(); ++i) {
      INFO(i);
      CHECK(BitEqual(f.arrays[i], arrays[i]));
      // Scalars need V3 (V2's ndim 0 means none); everything else is V2.
      bool scalar = !arrays[i].is_none() && arrays[i].shape().ndim() == 0;
      CHECK(f.formats[i] == (scalar ? 3 : 2));
    }
    // Saving the loaded file again gives the same bytes.
    CHECK(SaveNDArraysToString(f.arrays, f.names) == bytes);
  }

  // Through a file and the map API.
  std::map<std::string, NDArray> m;
  for (size_t i = 0; i + 1 < arrays.size(); ++i) m[names[i]] = arrays[i];
  const std::string path = symbind_test::TempPath("roundtrip.params");
  SaveNDArrays(path, m);
  auto back = LoadNDArrayMap(path);
  REQUIRE(back.size() == m.size());
  for (auto& kv : m) CHECK(BitEqual(back.at(kv.first), kv.second));

  // Mapped: the same values, read-only; arrays the file does not align for their type are copies.
  NDArrayLoadOptions mapped_options;
  mapped_options.map_read_only = true;
  auto mapped = LoadNDArrayMap(path, mapped_options);
  REQUIRE(mapped.size() == m.size());
  size_t views = 0;
  for (auto& kv : m) {
    INFO(kv.first);
    const NDArray& a = mapped.at(kv.first);
    CHECK(BitEqual(a, kv.second));
    if (a.bytes() == 0) continue;
    const bool aligned = reinterpret_cast<uintptr_t>(a.address()) % DTypeSize(a.dtype()) == 0;
    CHECK(aligned);
    if (a.read_only()) {
      ++views;
      CHECK_THROWS_AS(a.Fill(1.0f), Error);
    }
  }
  CHECK(views > 0);
  std::remove(path.c_str());
  // A file of float32 arrays only (every real model's) is all views.
  std::map<std::string, NDArray> floats;
  for (auto& kv : m)
    if (kv.second.dtype() == DType::kFloat32 && kv.second.bytes() > 0) floats[kv.first] = kv.second;
  SaveNDArrays(path, floats);
  for (auto& kv : LoadNDArrayMap(path, mapped_options)) {
    CHECK(kv.second.read_only());
    CHECK(BitEqual(kv.second, floats.at(kv.first)));
  }
  std::remove(path.c_str());
}

TEST_CASE("io: V2 dense layout written by Save matches MXNet's byte order", "[io]") {
  NDArray a(TShape{2}, std::vector<float>{1.5f, -2.0f});
  std::string got = SaveNDArraysToString({a}, {"arg:w"});
  Bytes b;
  b.list_header(1).u32(0xF993FAC9).i32(0).shape64({2}).i32(1).i32(0).i32(0).f32(1.5f).f32(-2.0f);
  b.names({"arg:w"});
  CHECK(got == b.str());
}

TEST_CASE("io: hand-written legacy, V1, V2 and V3 arrays load", "[io]") {
  Bytes b;
  b.list_header(7);
  // 0: legacy (2,2) float32 from gpu(1)
  b.u32(2).u32(2).u32(2).i32(2).i32(1).i32(0).f32(1).f32(2).f32(3).f32(4);
  // 1: legacy none (ndim 0): nothing follows
  b.u32(0);
  // 2: V1 (3,) int64
  b.u32(0xF993FAC8).shape64({3}).i32(1).i32(0).i32(6).i64(-1).i64(0).i64(1LL << 40);
  // 3: V1 none
  b.u32(0xF993FAC8).i32(0);
  // 4: V2 dense (1,2) float64
  b.u32(0xF993FAC9).i32(0).shape64({1, 2}).i32(1).i32(0).i32(1).put<double>(0.25).put<double>(8);
  // 5: V3 scalar (ndim 0, one element) uint8
  b.u32(0xF993FACA).i32(0).i32(0).i32(1).i32(0).i32(3).put<uint8_t>(200);
  // 6: V3 none (ndim -1)
  b.u32(0xF993FACA).i32(0).i32(-1);
  b.names({"g", "n0", "l", "n1", "d", "s", "n3"});
  NDArrayFile f = LoadNDArrayBuffer(b.str().data(), b.str().size());
  REQUIRE(f.arrays.size() == 7);
  CHECK(f.formats == std::vector<int>{0, 0, 1, 1, 2, 3, 3});
  CHECK(f.arrays[0].shape() == TShape{2, 2});
  CHECK(f.arrays[0].ctx() == Context::CPU());
  CHECK(f.arrays[0].ToVector() == std::vector<float>{1, 2, 3, 4});
  CHECK(f.arrays[1].is_none());
  CHECK(f.arrays[2].dtype() == DType::kInt64);
  CHECK(f.arrays[2].data<int64_t>()[0] == -1);
  CHECK(f.arrays[2].data<int64_t>()[2] == (1LL << 40));
  CHECK(f.arrays[3].is_none());
  CHECK(f.arrays[4].dtype() == DType::kFloat64);
  CHECK(f.arrays[4].data<double>()[1] == 8.0);
  CHECK(f.arrays[5].shape() == TShape(std::vector<int64_t>{}));
  CHECK(f.arrays[5].Size() == 1);
  CHECK(f.arrays[5].data<uint8_t>()[0] == 200);
  CHECK(f.arrays[6].is_none());
  CHECK(f.names[6] == "n3");
}

TEST_CASE("io: sparse V2 arrays (row_sparse, csr) are converted to dense", "[io]") {
  Bytes b;
  b.list_header(3);
  // row_sparse (4,3) float32 with rows 1 and 3 stored; int64 indices.
  b.u32(0xF993FAC9).i32(1).shape64({2, 3}).shape64({4, 3}).i32(1).i32(0).i32(0);
  b.i32(6).shape64({2});
  for (float v : {1, 2, 3, 4, 5, 6}) b.f32(v);
  b.i64(1).i64(3);
  // csr (2,3) float32: row 0 has col 2 = 7, row 1 has cols 0,1 = 8,9; int64 indptr/indices.
  b.u32(0xF993FAC9).i32(2).shape64({3}).shape64({2, 3}).i32(1).i32(0).i32(0);
  b.i32(6).shape64({3}).i32(6).shape64({3});
  b.f32(7).f32(8).f32(9);
  b.i64(0).i64(1).i64(3);
  b.i64(2).i64(0).i64(1);
  // V3 csr with int32 indices and float64 data, on gpu.
  b.u32(0xF993FACA).i32(2).shape64({1}).shape64({1, 2}).i32(2).i32(0).i32(1);
  b.i32(4).shape64({2}).i32(4).shape64({1});
  b.put<double>(-3.5);
  b.i32(0).i32(1);
  b.i32(1);
  b.names({});
  NDArrayFile f = LoadNDArrayBuffer(b.str().data(), b.str().size());
  REQUIRE(f.arrays.size() == 3);
  CHECK(f.names.empty());
  CHECK(f.formats == std::vector<int>{2, 2, 3});
  CHECK(f.storage_types == std::vector<int>{1, 2, 2});
  CHECK(f.arrays[0].shape() == TShape{4, 3});
  CHECK(f.arrays[0].ToVector() == std::vector<float>{0, 0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6});
  CHECK(f.arrays[1].shape() == TShape{2, 3});
  CHECK(f.arrays[1].ToVector() == std::vector<float>{0, 0, 7, 8, 9, 0});
  CHECK(f.arrays[2].dtype() == DType::kFloat64);
  CHECK(f.arrays[2].ToVector() == std::vector<float>{0, -3.5f});
}

TEST_CASE("io: hostile .params input throws IOError naming array and byte offset", "[io]") {
  // A valid prefix: header and one legacy (2,) float32 array (array 0 ends at byte 52).
  auto prefix = [](uint64_t count) {
    Bytes b;
    b.list_header(count).u32(1).u32(2).i32(1).i32(0).i32(0).f32(1).f32(2);
    return b;
  };
  SECTION("bad list magic") {
    Bytes b;
    b.u64(0x113).u64(0).u64(0).u64(0);
    ExpectIOError(b.str(), {"file header", "byte offset 0", "expected 274"});
  }
  SECTION("empty and short files") {
    ExpectIOError("", {"file header", "byte offset 0", "truncated"});
    ExpectIOError(std::string("\x12\x01\0\0", 4), {"byte offset 0", "truncated"});
  }
  SECTION("array count beyond the file") {
    Bytes b;
    b.list_header(1ULL << 60);
    ExpectIOError(b.str(), {"byte offset 16", "array count"});
  }
  SECTION("unknown magic / legacy ndim > 32") {
    Bytes b = prefix(2);
    b.u32(0xF993FACB);
    ExpectIOError(b.str(), {"array 1", "byte offset 52", "0xF993FACB"});
    Bytes c = prefix(2);
    c.u32(33);
    ExpectIOError(c.str(), {"array 1", "byte offset 52", "got 33"});
  }
  SECTION("V1/V2 ndim negative or > 32, V3 ndim below -1") {
    Bytes b = prefix(2);
    b.u32(0xF993FAC8).i32(-1);
    ExpectIOError(b.str(), {"array 1", "byte offset 56", "bad ndim", "got -1"});
    Bytes c = prefix(2);
    c.u32(0xF993FAC9).i32(0).i32(40);
    ExpectIOError(c.str(), {"array 1", "byte offset 60", "got 40"});
    Bytes d = prefix(2);
    d.u32(0xF993FACA).i32(0).i32(-2);
    ExpectIOError(d.str(), {"array 1", "byte offset 60", "or -1", "got -2"});
  }
  SECTION("negative dim") {
    Bytes b = prefix(2);
    b.u32(0xF993FAC8).shape64({2, -5});
    ExpectIOError(b.str(), {"array 1", "byte offset 68", "negative dim 1"});
  }
  SECTION("dims whose product overflows") {
    Bytes b = prefix(2);
    b.u32(0xF993FAC8).shape64({1LL << 32, 1LL << 32}).i32(1).i32(0).i32(0);
    ExpectIOError(b.str(), {"array 1", "byte offset 52", "overflows"});
  }
  SECTION("data larger than the bytes left (nothing is allocated)") {
    Bytes b = prefix(2);
    b.u32(0xF993FAC8).shape64({1LL << 20, 1LL << 20}).i32(1).i32(0).i32(0).f32(1);
    ExpectIOError(b.str(), {"array 1", "byte offset 88", "only 4 bytes are left"});
    Bytes c = prefix(2);
    c.u32(3).u32(100000).u32(100000).u32(100000).i32(1).i32(0).i32(0);
    ExpectIOError(c.str(), {"array 1", "byte offset 80", "bytes are left"});
  }
  SECTION("unknown dtype, storage type and context") {
    Bytes b = prefix(2);
    b.u32(1).u32(1).i32(1).i32(0).i32(9).f32(0);
    ExpectIOError(b.str(), {"array 1", "byte offset 68", "unknown type flag 9"});
    Bytes c = prefix(2);
    c.u32(0xF993FAC9).i32(3);
    ExpectIOError(c.str(), {"array 1", "byte offset 56", "unknown storage type 3"});
    Bytes d = prefix(2);
    d.u32(1).u32(1).i32(7).i32(0).i32(0).f32(0);
    ExpectIOError(d.str(), {"array 1", "byte offset 60", "dev_type 7"});
  }
  SECTION("truncated names and name lengths beyond the file") {
    Bytes b = prefix(1);
    b.u64(2);
    ExpectIOError(b.str(), {"names section", "byte offset 52", "name count 2"});
    Bytes c = prefix(1);
    c.u64(1).u64(1ULL << 62).raw("abc");
    ExpectIOError(c.str(), {"names section", "byte offset 60", "length 4611686018427387904"});
    Bytes d = prefix(1);
    ExpectIOError(d.str(), {"names section", "byte offset 52", "truncated"});
  }
  SECTION("inconsistent sparse arrays") {
    Bytes b = prefix(2);  // row_sparse with index shape not matching the storage shape
    b.u32(0xF993FAC9).i32(1).shape64({2, 3}).shape64({4, 3}).i32(1).i32(0).i32(0);
    b.i32(6).shape64({3});
    ExpectIOError(b.str(), {"array 1", "byte offset 52", "row_sparse"});
    Bytes c = prefix(2);  // row index out of range
    c.u32(0xF993FAC9).i32(1).shape64({1, 1}).shape64({4, 1}).i32(1).i32(0).i32(0);
    c.i32(6).shape64({1}).f32(1).i64(4);
    ExpectIOError(c.str(), {"array 1", "byte offset 132", "outside [0, 4)"});
    Bytes d = prefix(2);  // csr column out of range
    d.u32(0xF993FAC9).i32(2).shape64({1}).shape64({1, 2}).i32(1).i32(0).i32(0);
    d.i32(6).shape64({2}).i32(6).shape64({1}).f32(1).i64(0).i64(1).i64(2);
    ExpectIOError(d.str(), {"array 1", "byte offset 156", "column index 0 is 2"});
    Bytes e = prefix(2);  // float indices
    e.u32(0xF993FAC9).i32(1).shape64({1, 1}).shape64({4, 1}).i32(1).i32(0).i32(0);
    e.i32(0).shape64({1}).f32(1).f32(0);
    ExpectIOError(e.str(), {"array 1", "byte offset 132", "non-integer"});
    Bytes g = prefix(2);  // dense size beyond the conversion limit
    g.u32(0xF993FAC9).i32(1).shape64({0, 1LL << 40}).shape64({1LL << 20, 1LL << 40});
    g.i32(1).i32(0).i32(0).i32(6).shape64({0});
    ExpectIOError(g.str(), {"array 1", "byte offset 52", "too large"});
  }
}

TEST_CASE("io: every truncation of a valid file fails cleanly", "[io]") {
  Bytes b;
  b.list_header(4);
  b.u32(2).u32(2).u32(1).i32(1).i32(0).i32(0).f32(1).f32(2);
  b.u32(0xF993FAC8).shape64({2}).i32(1).i32(0).i32(4).i32(5).i32(6);
  b.u32(0xF993FAC9).i32(1).shape64({1, 1}).shape64({3, 1}).i32(1).i32(0).i32(0);
  b.i32(6).shape64({1}).f32(9).i64(2);
  b.u32(0xF993FACA).i32(0).i32(0).i32(1).i32(0).i32(2).put<uint16_t>(0x3C00);
  b.names({"a", "bb", "ccc", "dddd"});
  const std::string& full = b.str();
  NDArrayFile f = LoadNDArrayBuffer(full.data(), full.size());
  CHECK(f.arrays[2].ToVector() == std::vector<float>{0, 0, 9});
  CHECK(f.arrays[3].ToVector() == std::vector<float>{1});
  for (size_t n = 0; n < full.size(); ++n) {
    INFO("truncated to " << n << " bytes");
    CHECK_THROWS_AS(LoadNDArrayBuffer(full.data(), n), IOError);
  }
}

TEST_CASE("io: file-level errors name the path, arg/aux split", "[io]") {
  try {
    LoadNDArrayFile("/nonexistent/x.params");
    FAIL("expected IOError");
  } catch (const IOError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/x.params") != std::string::npos);
  }
  const std::string path = symbind_test::TempPath("positional.params");
  SaveNDArrays(path, {NDArray(TShape{1}, std::vector<float>{1})}, {});
  CHECK_THROWS_AS(LoadNDArrayMap(path), IOError);
  std::remove(path.c_str());

  std::map<std::string, NDArray> m = {{"arg:w", NDArray(TShape{1})},
                                      {"aux:bn_moving_mean", NDArray(TShape{2})}};
  std::map<std::string, NDArray> args, aux;
  SplitArgAux(m, &args, &aux);
  CHECK(args.count("w"));
  CHECK(aux.count("bn_moving_mean"));
  CHECK(MergeArgAux(args, aux).size() == 2);
  m["other"] = NDArray(TShape{1});
  CHECK_THROWS_AS(SplitArgAux(m, &args, &aux), IOError);
}
