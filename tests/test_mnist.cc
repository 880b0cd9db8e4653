#include <catch2/catch.hpp>

#include <symbind/core/ndarray.h>
#include <symbind/io/mnist.h>

#include <zlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace symbind;
namespace fs = std::filesystem;

namespace {

// A temporary directory removed when it goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() /
           ("symbind_mnist_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void WriteFileBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

void WriteGzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile g = gzopen(path.c_str(), "wb");
  REQUIRE(g != nullptr);
  if (!bytes.empty())
    REQUIRE(gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size())) ==
            static_cast<int>(bytes.size()));
  REQUIRE(gzclose(g) == Z_OK);
}

// Inflates a whole .gz file with zlib's stream API (independent of the reader under test).
std::vector<uint8_t> Gunzip(const std::vector<uint8_t>& gz) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK);
  zs.next_in = const_cast<Bytef*>(gz.data());
  zs.avail_in = static_cast<uInt>(gz.size());
  std::vector<uint8_t> out;
  std::vector<uint8_t> buf(1 << 20);
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    zs.next_out = buf.data();
    zs.avail_out = static_cast<uInt>(buf.size());
    ret = inflate(&zs, Z_NO_FLUSH);
    REQUIRE((ret == Z_OK || ret == Z_STREAM_END));
    out.insert(out.end(), buf.data(), buf.data() + (buf.size() - zs.avail_out));
  }
  inflateEnd(&zs);
  return out;
}

void PutBE32(std::vector<uint8_t>* v, uint32_t x) {
  v->push_back(static_cast<uint8_t>(x >> 24));
  v->push_back(static_cast<uint8_t>(x >> 16));
  v->push_back(static_cast<uint8_t>(x >> 8));
  v->push_back(static_cast<uint8_t>(x));
}

std::vector<uint8_t> IdxImages(uint32_t n, uint32_t rows, uint32_t cols, size_t payload_bytes,
                               uint32_t magic = 0x803) {
  std::vector<uint8_t> v;
  PutBE32(&v, magic);
  PutBE32(&v, n);
  PutBE32(&v, rows);
  PutBE32(&v, cols);
  for (size_t i = 0; i < payload_bytes; ++i) v.push_back(static_cast<uint8_t>(i * 7 + 3));
  return v;
}

std::vector<uint8_t> IdxLabels(uint32_t n, size_t payload_bytes, uint32_t magic = 0x801) {
  std::vector<uint8_t> v;
  PutBE32(&v, magic);
  PutBE32(&v, n);
  for (size_t i = 0; i < payload_bytes; ++i) v.push_back(static_cast<uint8_t>(i % 10));
  return v;
}

bool HaveFashionMNIST() {
  return fs::exists(DefaultFashionMNISTDir() + "/train-images-idx3-ubyte.gz");
}

// A data set of n 2x3 images whose pixels encode their index, label = index % 10.
MNISTData Synthetic(int64_t n) {
  MNISTData d{NDArray(TShape({n, 2, 3})), NDArray(TShape({n}))};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < 6; ++p) d.images.SetFlat(i * 6 + p, static_cast<float>(i * 10 + p));
    d.labels.SetFlat(i, static_cast<float>(i % 10));
  }
  return d;
}

// Checks that every row of the current batch is the data set's row index()[i].
void CheckBatchMatchesIndex(const MNISTIter& it, const MNISTData& d) {
  NDArray data = it.data(), label = it.label();
  int64_t per = d.images.shape()[1] * d.images.shape()[2];
  for (int64_t i = 0; i < it.batch_size(); ++i) {
    int64_t s = it.index()[static_cast<size_t>(i)];
    CHECK(label.GetFlat(i) == d.labels.GetFlat(s));
    for (int64_t p = 0; p < per; ++p) REQUIRE(data.GetFlat(i * per + p) == d.images.GetFlat(s * per + p));
  }
}

template <typename F>
void CheckIOErrorMentions(F&& f, const std::string& file, const std::string& what) {
  try {
    f();
    FAIL("expected IOError about '" << what << "'");
  } catch (const IOError& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find(file) != std::string::npos);
    CHECK(msg.find(what) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("Fashion-MNIST loads with the right sizes, labels and pixels", "[io][mnist]") {
  if (!HaveFashionMNIST()) {
    WARN("Fashion-MNIST not found at " << DefaultFashionMNISTDir()
                                       << " (Debian package dataset-fashion-mnist); skipped");
    return;
  }
  const std::string dir = DefaultFashionMNISTDir();
  for (bool train : {true, false}) {
    const int64_t n = train ? 60000 : 10000;
    const std::string prefix = dir + (train ? "/train" : "/t10k");
    MNISTData d = LoadFashionMNIST(train);
    REQUIRE(d.images.shape() == TShape({n, 28, 28}));
    REQUIRE(d.labels.shape() == TShape({n}));
    CHECK(d.images.dtype() == DType::kFloat32);
    CHECK(d.labels.dtype() == DType::kFloat32);

    // Labels 0..9, and Fashion-MNIST is balanced: n/10 of each class.
    std::vector<int64_t> counts(10, 0);
    const float* lab = d.labels.fdata();
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(lab[i] >= 0.0f);
      REQUIRE(lab[i] <= 9.0f);
      REQUIRE(lab[i] == static_cast<float>(static_cast<int>(lab[i])));
      ++counts[static_cast<size_t>(lab[i])];
    }
    for (int64_t c : counts) CHECK(c == n / 10);

    // Pixels in [0, 1], using the whole range.
    const float* px = d.images.fdata();
    auto mm = std::minmax_element(px, px + n * 784);
    CHECK(*mm.first == 0.0f);
    CHECK(*mm.second == 1.0f);

    // Compare with the bytes inflated independently by zlib's stream API.
    std::vector<uint8_t> raw_images = Gunzip(ReadFileBytes(prefix + "-images-idx3-ubyte.gz"));
    std::vector<uint8_t> raw_labels = Gunzip(ReadFileBytes(prefix + "-labels-idx1-ubyte.gz"));
    REQUIRE(raw_images.size() == static_cast<size_t>(16 + n * 784));
    REQUIRE(raw_labels.size() == static_cast<size_t>(8 + n));
    CHECK(raw_images[3] == 0x03);
    CHECK(raw_labels[3] == 0x01);
    std::mt19937 pick(12345);
    for (int k = 0; k < 200; ++k) {
      int64_t i = static_cast<int64_t>(pick() % static_cast<uint32_t>(n));
      int64_t r = pick() % 28, c = pick() % 28;
      uint8_t byte = raw_images[static_cast<size_t>(16 + i * 784 + r * 28 + c)];
      REQUIRE(d.images.At({i, r, c}) == static_cast<float>(byte) / 255.0f);
      REQUIRE(d.labels.GetFlat(i) == static_cast<float>(raw_labels[static_cast<size_t>(8 + i)]));
    }
    // Every label, and a full first and last image.
    for (int64_t i = 0; i < n; ++i)
      REQUIRE(lab[i] == static_cast<float>(raw_labels[static_cast<size_t>(8 + i)]));
    for (int64_t p = 0; p < 784; ++p) {
      REQUIRE(px[p] == static_cast<float>(raw_images[static_cast<size_t>(16 + p)]) / 255.0f);
      REQUIRE(px[(n - 1) * 784 + p] ==
              static_cast<float>(raw_images[static_cast<size_t>(16 + (n - 1) * 784 + p)]) / 255.0f);
    }
  }
}

TEST_CASE("MNISTIter over Fashion-MNIST t10k: batch counts, padding, shapes", "[io][mnist]") {
  if (!HaveFashionMNIST()) {
    WARN("Fashion-MNIST not found at " << DefaultFashionMNISTDir() << "; skipped");
    return;
  }
  MNISTData d = LoadFashionMNIST(false);
  MNISTIter it(d, 128, /*shuffle=*/false, 0, /*flat=*/false);
  CHECK(it.num_batches() == 79);  // ceil(10000 / 128)
  int batches = 0, last_pad = -1;
  while (it.Next()) {
    ++batches;
    REQUIRE(it.data().shape() == TShape({128, 1, 28, 28}));
    REQUIRE(it.label().shape() == TShape({128}));
    last_pad = it.pad();
    if (batches < 79) REQUIRE(it.pad() == 0);
  }
  CHECK(batches == 79);
  CHECK(last_pad == 79 * 128 - 10000);
  // After the epoch, Reset starts over at sample 0.
  it.Reset();
  REQUIRE(it.Next());
  CHECK(it.index()[0] == 0);
  CheckBatchMatchesIndex(it, d);
  CHECK(it.data().At({5, 0, 14, 14}) == d.images.At({5, 14, 14}));

  MNISTIter flat(d, 100, /*shuffle=*/true, 7, /*flat=*/true);
  CHECK(flat.num_batches() == 100);
  int n = 0;
  while (flat.Next()) {
    ++n;
    REQUIRE(flat.data().shape() == TShape({100, 784}));
    REQUIRE(flat.pad() == 0);
  }
  CHECK(n == 100);
}

TEST_CASE("MNISTIter pads the last batch by wrapping to the start", "[io][mnist]") {
  MNISTData d = Synthetic(10);
  MNISTIter it(d, 4);
  CHECK(it.num_batches() == 3);
  CHECK(it.num_samples() == 10);
  CHECK_THROWS_AS(it.data(), Error);  // before Next()
  std::vector<std::vector<int64_t>> seen;
  std::vector<int> pads;
  while (it.Next()) {
    CHECK(it.data().shape() == TShape({4, 1, 2, 3}));
    CheckBatchMatchesIndex(it, d);
    seen.push_back(it.index());
    pads.push_back(it.pad());
  }
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(seen[1] == std::vector<int64_t>{4, 5, 6, 7});
  CHECK(seen[2] == std::vector<int64_t>{8, 9, 0, 1});
  CHECK(pads == std::vector<int>{0, 0, 2});
  CHECK_FALSE(it.Next());
  CHECK_THROWS_AS(it.label(), Error);

  // A batch larger than the data set wraps more than once.
  MNISTIter big(d, 25, false, 0, /*flat=*/true);
  CHECK(big.num_batches() == 1);
  REQUIRE(big.Next());
  CHECK(big.pad() == 15);
  CHECK(big.data().shape() == TShape({25, 6}));
  for (int64_t i = 0; i < 25; ++i) CHECK(big.index()[static_cast<size_t>(i)] == i % 10);
  CheckBatchMatchesIndex(big, d);
  CHECK_FALSE(big.Next());

  // Exact multiple: no padding.
  MNISTIter exact(d, 5);
  int count = 0;
  while (exact.Next()) {
    ++count;
    CHECK(exact.pad() == 0);
  }
  CHECK(count == 2);

  // Batches already handed out are not overwritten by the next one.
  MNISTIter keep(d, 2);
  REQUIRE(keep.Next());
  NDArray first = keep.data();
  REQUIRE(keep.Next());
  CHECK_FALSE(first.SharesStorageWith(keep.data()));
  CHECK(first.GetFlat(0) == 0.0f);
  CHECK(keep.data().GetFlat(0) == 20.0f);
}

TEST_CASE("MNISTIter shuffling is a permutation reproducible from the seed", "[io][mnist]") {
  MNISTData d = Synthetic(103);
  auto epoch = [](MNISTIter& it) {
    std::vector<int64_t> all;
    int pad = 0;
    while (it.Next()) {
      all.insert(all.end(), it.index().begin(), it.index().end());
      pad = it.pad();
    }
    all.resize(all.size() - static_cast<size_t>(pad));
    return all;
  };
  MNISTIter a(d, 8, true, 42), b(d, 8, true, 42), c(d, 8, true, 43), plain(d, 8, false, 42);
  std::vector<int64_t> ea = epoch(a), eb = epoch(b), ec = epoch(c), ep = epoch(plain);
  std::vector<int64_t> identity(103);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(ep == identity);
  CHECK(ea == eb);
  CHECK(ea != ec);
  CHECK(ea != identity);
  std::vector<int64_t> sorted = ea;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == identity);  // a permutation: every sample exactly once
  CHECK(a.order() == ea);

  // Reset reshuffles from the same generator: a new order, the same for both iterators.
  a.Reset();
  b.Reset();
  std::vector<int64_t> ea2 = epoch(a), eb2 = epoch(b);
  CHECK(ea2 == eb2);
  CHECK(ea2 != ea);
  sorted = ea2;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == identity);

  // Batch contents follow the shuffled indices; the padded rows repeat the order's start.
  MNISTIter s(d, 10, true, 5, true);
  int batches = 0;
  while (s.Next()) {
    ++batches;
    CheckBatchMatchesIndex(s, d);
    if (s.pad() > 0) {
      CHECK(s.pad() == 7);
      for (int i = 0; i < 7; ++i)
        CHECK(s.index()[static_cast<size_t>(3 + i)] == s.order()[static_cast<size_t>(i)]);
    }
  }
  CHECK(batches == 11);

  // The permutation does not depend on the standard library (Fisher-Yates over mt19937_64).
  std::mt19937_64 rng(42);
  std::vector<int64_t> expect = identity;
  for (int64_t i = 102; i > 0; --i)
    std::swap(expect[static_cast<size_t>(i)],
              expect[static_cast<size_t>(rng() % static_cast<uint64_t>(i + 1))]);
  CHECK(ea == expect);
}

TEST_CASE("MNISTIter rejects bad arguments", "[io][mnist]") {
  MNISTData d = Synthetic(4);
  CHECK_THROWS_AS(MNISTIter(d, 0), Error);
  CHECK_THROWS_AS(MNISTIter(d, -3), Error);
  CHECK_THROWS_AS(MNISTIter(MNISTData{}, 2), Error);
  CHECK_THROWS_AS(MNISTIter(MNISTData{d.images, NDArray(TShape({3}))}, 2), Error);
  CHECK_THROWS_AS(MNISTIter(MNISTData{d.images.Reshape(TShape({4, 6})), d.labels}, 2), Error);
  CHECK_THROWS_AS(MNISTIter(Synthetic(0), 2), Error);
}

TEST_CASE("idx reader reads small plain and gzip files", "[io][mnist]") {
  TempDir tmp;
  std::vector<uint8_t> im = IdxImages(3, 4, 5, 60), lb = IdxLabels(3, 3);
  WriteFileBytes(tmp.File("im"), im);
  WriteFileBytes(tmp.File("lb"), lb);
  WriteGzip(tmp.File("im.gz"), im);
  WriteGzip(tmp.File("lb.gz"), lb);
  for (bool gz : {false, true}) {
    MNISTData d = gz ? LoadMNIST(tmp.File("im.gz"), tmp.File("lb.gz"))
                     : LoadMNIST(tmp.File("im"), tmp.File("lb"));
    REQUIRE(d.images.shape() == TShape({3, 4, 5}));
    REQUIRE(d.labels.shape() == TShape({3}));
    for (int64_t i = 0; i < 60; ++i)
      CHECK(d.images.GetFlat(i) == static_cast<float>(im[static_cast<size_t>(16 + i)]) / 255.0f);
    CHECK(d.labels.ToVector() == std::vector<float>{0, 1, 2});
    MNISTIter it(d, 2, false, 0, true);
    REQUIRE(it.Next());
    CHECK(it.data().shape() == TShape({2, 20}));
  }
  // Zero samples is a valid (empty) file.
  WriteFileBytes(tmp.File("im0"), IdxImages(0, 28, 28, 0));
  CHECK(LoadMNISTImages(tmp.File("im0")).shape() == TShape({0, 28, 28}));
}

TEST_CASE("idx reader rejects hostile and broken files with IOError", "[io][mnist]") {
  TempDir tmp;
  auto images = [&](const std::string& name, const std::vector<uint8_t>& bytes,
                    const std::string& what) {
    std::string path = tmp.File(name);
    WriteFileBytes(path, bytes);
    CheckIOErrorMentions([&] { LoadMNISTImages(path); }, path, what);
  };
  auto labels = [&](const std::string& name, const std::vector<uint8_t>& bytes,
                    const std::string& what) {
    std::string path = tmp.File(name);
    WriteFileBytes(path, bytes);
    CheckIOErrorMentions([&] { LoadMNISTLabels(path); }, path, what);
  };

  CheckIOErrorMentions([&] { LoadMNISTImages(tmp.File("missing")); }, tmp.File("missing"),
                       "cannot open");
  CheckIOErrorMentions([&] { LoadMNISTImages(tmp.path.string()); }, tmp.path.string(),
                       "cannot read");
  images("empty", {}, "truncated idx header");
  images("short_header", {0, 0, 8, 3, 0, 0}, "truncated idx header");
  labels("short_label_header", {0, 0, 8, 1, 0}, "truncated idx header");
  images("bad_magic", IdxImages(1, 2, 2, 4, 0x12345678), "bad magic 0x12345678");
  images("labels_as_images", IdxLabels(4, 4), "bad magic 0x00000801");
  labels("images_as_labels", IdxImages(1, 2, 2, 4), "bad magic 0x00000803");
  images("zero_rows", IdxImages(1, 0, 28, 0), "dimension 1");
  images("zero_cols", IdxImages(1, 28, 0, 0), "dimension 2");
  images("huge", IdxImages(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 10), "absurd size");
  // Plausible header, claims a billion images (784 GB): must fail on the short data, not allocate.
  images("huge_count", IdxImages(1000000000u, 28, 28, 100), "truncated image file");
  labels("huge_labels", IdxLabels(0xFFFFFFFFu, 5), "truncated label file");
  images("truncated", IdxImages(3, 28, 28, 3 * 784 - 1), "truncated image file");
  images("trailing", IdxImages(2, 2, 2, 9), "longer than its header");
  labels("trailing_labels", IdxLabels(2, 3), "longer than its header");

  // A gzip stream cut short, and one with damaged compressed bytes.
  std::vector<uint8_t> good = IdxImages(50, 28, 28, 50 * 784);
  WriteGzip(tmp.File("good.gz"), good);
  std::vector<uint8_t> gz = ReadFileBytes(tmp.File("good.gz"));
  REQUIRE(gz.size() > 100);
  CHECK(LoadMNISTImages(tmp.File("good.gz")).shape() == TShape({50, 28, 28}));
  std::vector<uint8_t> cut(gz.begin(), gz.begin() + static_cast<std::ptrdiff_t>(gz.size() / 2));
  images("cut.gz", cut, "truncated");
  // All the data is there but the trailer (CRC, length) is cut: still an error.
  for (int cut_bytes : {1, 4, 8, 9}) {
    std::vector<uint8_t> cut_trailer(gz.begin(), gz.end() - cut_bytes);
    images("cut_trailer" + std::to_string(cut_bytes) + ".gz", cut_trailer, "truncated gzip");
  }
  std::vector<uint8_t> bad = gz;
  for (size_t i = 20; i < 60 && i < bad.size(); ++i) bad[i] ^= 0x5A;
  {
    std::string path = tmp.File("corrupt.gz");
    WriteFileBytes(path, bad);
    CHECK_THROWS_AS(LoadMNISTImages(path), IOError);
  }
  // A wrong CRC in the trailer.
  std::vector<uint8_t> bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x01;
  images("bad_crc.gz", bad_crc, "corrupt gzip data");
  // Concatenated gzip members are one stream (as gzip -d reads them); junk after the last is not.
  {
    std::string a = tmp.File("part_a.gz"), b = tmp.File("part_b.gz");
    std::vector<uint8_t> half1(good.begin(), good.begin() + 5000), half2(good.begin() + 5000, good.end());
    WriteGzip(a, half1);
    WriteGzip(b, half2);
    std::vector<uint8_t> two = ReadFileBytes(a), tail = ReadFileBytes(b);
    two.insert(two.end(), tail.begin(), tail.end());
    WriteFileBytes(tmp.File("two.gz"), two);
    NDArray got = LoadMNISTImages(tmp.File("two.gz"));
    REQUIRE(got.shape() == TShape({50, 28, 28}));
    CHECK(got.GetFlat(49 * 784 + 783) == static_cast<float>(good.back()) / 255.0f);
    std::vector<uint8_t> junk_tail = gz;
    for (char ch : std::string("junk")) junk_tail.push_back(static_cast<uint8_t>(ch));
    images("junk_tail.gz", junk_tail, "after the end of a gzip member");
  }
  // Random garbage of several lengths, compressed or not, never crashes.
  std::mt19937 rng(99);
  for (int k = 0; k < 40; ++k) {
    std::vector<uint8_t> junk(static_cast<size_t>(rng() % 200));
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    if (k % 2 == 0 && junk.size() >= 4) {
      junk[0] = 0;
      junk[1] = 0;
      junk[2] = 8;
      junk[3] = 3;
    }
    std::string path = tmp.File("junk" + std::to_string(k));
    WriteFileBytes(path, junk);
    CHECK_THROWS_AS(LoadMNISTImages(path), IOError);
    WriteGzip(path + ".gz", junk);
    CHECK_THROWS_AS(LoadMNISTImages(path + ".gz"), IOError);
  }

  // Image and label counts must agree.
  WriteFileBytes(tmp.File("im3"), IdxImages(3, 2, 2, 12));
  WriteFileBytes(tmp.File("lb4"), IdxLabels(4, 4));
  CheckIOErrorMentions([&] { LoadMNIST(tmp.File("im3"), tmp.File("lb4")); }, tmp.File("lb4"),
                       "3 images but");
}

TEST_CASE("DefaultFashionMNISTDir honours SYMBIND_FASHION_MNIST", "[io][mnist]") {
  const char* old = std::getenv("SYMBIND_FASHION_MNIST");
  std::string saved = old ? old : "";
  ::setenv("SYMBIND_FASHION_MNIST", "/some/where", 1);
  CHECK(DefaultFashionMNISTDir() == "/some/where");
  ::unsetenv("SYMBIND_FASHION_MNIST");
  CHECK(DefaultFashionMNISTDir() == "/usr/share/datasets/fashion-mnist");
  if (old) ::setenv("SYMBIND_FASHION_MNIST", saved.c_str(), 1);
}
