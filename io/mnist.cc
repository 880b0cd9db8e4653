#include <symbind/io/mnist.h>

#include <zlib.h>

#include <unistd.h>

#include <symbind/io/ndarray_file.h>
#include <symbind/io/regular_file.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace symbind {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;
// No idx file we read is anywhere near this; it bounds what a hostile header can ask for.
constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 40;

// The bytes of a file, inflated when it is gzip (it starts with 1f 8b), read as they are
// otherwise. Unlike gzread, which hands out a stream whose trailer is missing without a word,
// this insists that every gzip member ends properly, so the CRC and length are always checked.
class ByteSource {
 public:
  explicit ByteSource(const std::string& path) : path_(path), in_(kBufferBytes) {
    const int fd = RegularFile(path).Release();
    file_.reset(::fdopen(fd, "rb"));
    if (!file_) {
      int err = errno;
      ::close(fd);
      throw IOError(StrCat(path, ": cannot open (", std::strerror(err), ")"));
    }
    Fill();
    gzip_ = avail_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
    if (gzip_) {
      zs_.next_in = in_.data();
      zs_.avail_in = static_cast<uInt>(avail_);
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK)
        throw IOError(StrCat(path, ": cannot start zlib"));
    }
  }
  ~ByteSource() {
    if (gzip_) inflateEnd(&zs_);
  }
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to `n` bytes; fewer only at the end of the data.
  size_t Read(void* dst, size_t n) {
    return gzip_ ? ReadGzip(static_cast<unsigned char*>(dst), n)
                 : ReadPlain(static_cast<unsigned char*>(dst), n);
  }

  // True when no byte is left.
  bool AtEnd() {
    unsigned char extra;
    return Read(&extra, 1) == 0;
  }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 16;

  // Refills in_ from the file; false at the end of the file.
  bool Fill() {
    pos_ = 0;
    avail_ = std::fread(in_.data(), 1, in_.size(), file_.get());
    if (avail_ == 0 && std::ferror(file_.get())) {
      int err = errno;
      throw IOError(StrCat(path_, ": cannot read (", std::strerror(err), ")"));
    }
    return avail_ > 0;
  }

  size_t ReadPlain(unsigned char* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      if (pos_ == avail_ && !Fill()) break;
      size_t k = std::min(n - done, avail_ - pos_);
      std::memcpy(dst + done, in_.data() + pos_, k);
      pos_ += k;
      done += k;
    }
    return done;
  }

  size_t ReadGzip(unsigned char* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      if (zs_.avail_in == 0) {
        if (!Fill()) {
          if (member_ended_) break;  // the clean end
          throw IOError(StrCat(path_, ": truncated gzip data (the stream stops before its end)"));
        }
        zs_.next_in = in_.data();
        zs_.avail_in = static_cast<uInt>(avail_);
      }
      if (member_ended_) {  // more bytes after a complete member: another member must follow
        inflateReset(&zs_);
        member_ended_ = false;
        members_ += 1;
      }
      uInt room = static_cast<uInt>(std::min<size_t>(n - done, 1u << 30));
      zs_.next_out = dst + done;
      zs_.avail_out = room;
      int ret = inflate(&zs_, Z_NO_FLUSH);
      done += room - zs_.avail_out;
      if (ret == Z_STREAM_END) {
        member_ended_ = true;
      } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
        throw IOError(StrCat(path_, ": corrupt gzip data",
                             members_ > 0 ? " after the end of a gzip member" : "", " (",
                             zs_.msg ? zs_.msg : "zlib error ", zs_.msg ? "" : std::to_string(ret),
                             ")"));
      }
    }
    return done;
  }

  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  std::vector<unsigned char> in_;
  size_t pos_ = 0, avail_ = 0;  // plain reads: next unread byte and end of in_
  bool gzip_ = false;
  bool member_ended_ = false;
  int members_ = 0;  // complete members before the current one
  z_stream zs_{};
};

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Reads an idx header of `ndims` dimensions with the given magic, then exactly the payload the
// dims declare, into a buffer grown as data actually arrives (so a header claiming terabytes
// costs nothing before the file runs out). Returns the dims and the payload.
std::vector<uint8_t> ReadIdx(const std::string& path, uint32_t magic, const char* kind,
                             int ndims, std::vector<uint32_t>* dims) {
  ByteSource in(path);
  unsigned char header[16];
  size_t got = in.Read(header, 4);
  if (got < 4)
    throw IOError(StrCat(path, ": truncated idx header (", got, " bytes) for an ", kind, " file"));
  uint32_t file_magic = BigEndian32(header);
  if (file_magic != magic) {
    const char* hint = file_magic == kImagesMagic   ? " (that of an image file)"
                       : file_magic == kLabelsMagic ? " (that of a label file)"
                                                    : "";
    throw IOError(StrCat(path, ": bad magic ", Hex(file_magic), hint, ", expected ", Hex(magic),
                         " for an ", kind, " file"));
  }
  size_t header_bytes = 4 * static_cast<size_t>(1 + ndims);
  got = 4 + in.Read(header + 4, header_bytes - 4);
  if (got < header_bytes)
    throw IOError(StrCat(path, ": truncated idx header (", got, " of ", header_bytes,
                         " bytes) for an ", kind, " file"));
  dims->assign(static_cast<size_t>(ndims), 0);
  uint64_t payload = 1;
  for (int i = 0; i < ndims; ++i) {
    uint32_t d = BigEndian32(header + 4 * (i + 1));
    (*dims)[static_cast<size_t>(i)] = d;
    // A data set of zero samples is allowed; an image of zero rows or columns is not.
    if (d == 0 && i > 0)
      throw IOError(StrCat(path, ": dimension ", i, " of the idx header is 0"));
    if (d != 0 && payload > kMaxPayloadBytes / d)
      throw IOError(StrCat(path, ": idx header declares an absurd size (dims ", (*dims)[0],
                           i >= 1 ? StrCat("x", (*dims)[1]) : "",
                           i >= 2 ? StrCat("x", (*dims)[2]) : "", ")"));
    payload *= d;
  }
  std::vector<uint8_t> data;
  size_t want = static_cast<size_t>(payload);
  constexpr size_t kChunk = size_t{1} << 22;
  while (data.size() < want) {
    size_t before = data.size();
    size_t n = std::min(kChunk, want - before);
    data.resize(before + n);
    size_t r = in.Read(data.data() + before, n);
    if (r < n) {
      size_t have = before + r;
      throw IOError(StrCat(path, ": truncated ", kind, " file: the header declares ", want,
                           " bytes of data but the file holds only ", have));
    }
  }
  if (!in.AtEnd())
    throw IOError(StrCat(path, ": ", kind, " file is longer than its header declares (",
                         want, " bytes of data expected)"));
  return data;
}

}  // namespace

NDArray LoadMNISTImages(const std::string& path) {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> pixels = ReadIdx(path, kImagesMagic, "image", 3, &dims);
  NDArray out(TShape({dims[0], dims[1], dims[2]}), DType::kFloat32);
  std::array<float, 256> scale;
  for (int i = 0; i < 256; ++i) scale[static_cast<size_t>(i)] = static_cast<float>(i) / 255.0f;
  float* dst = out.fdata();
  for (size_t i = 0; i < pixels.size(); ++i) dst[i] = scale[pixels[i]];
  return out;
}

NDArray LoadMNISTLabels(const std::string& path) {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> labels = ReadIdx(path, kLabelsMagic, "label", 1, &dims);
  NDArray out(TShape({dims[0]}), DType::kFloat32);
  float* dst = out.fdata();
  for (size_t i = 0; i < labels.size(); ++i) dst[i] = static_cast<float>(labels[i]);
  return out;
}

MNISTData LoadMNIST(const std::string& images_path, const std::string& labels_path) {
  MNISTData d;
  d.labels = LoadMNISTLabels(labels_path);  // small: fail fast on a bad label file
  d.images = LoadMNISTImages(images_path);
  if (d.images.shape()[0] != d.labels.shape()[0])
    throw IOError(StrCat(images_path, " holds ", d.images.shape()[0], " images but ",
                         labels_path, " holds ", d.labels.shape()[0], " labels"));
  return d;
}

std::string DefaultFashionMNISTDir() {
  const char* env = std::getenv("SYMBIND_FASHION_MNIST");
  if (env && *env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

MNISTData LoadFashionMNIST(bool train, const std::string& dir) {
  std::string prefix = dir + "/" + (train ? "train" : "t10k");
  return LoadMNIST(prefix + "-images-idx3-ubyte.gz", prefix + "-labels-idx1-ubyte.gz");
}

std::pair<int64_t, int64_t> PartBounds(int64_t n, int part_index, int num_parts) {
  if (num_parts < 1 || part_index < 0 || part_index >= num_parts)
    throw Error(StrCat("data part: part_index must be in [0, num_parts), got part_index ", part_index,
                       " and num_parts ", num_parts));
  if (num_parts > n)
    throw Error(StrCat("data part: cannot split ", n, " samples into ", num_parts, " parts"));
  return {n * part_index / num_parts, n * (part_index + 1) / num_parts};
}

MNISTData MNISTPart(const MNISTData& data, int part_index, int num_parts) {
  auto [begin, end] = PartBounds(data.labels.Size(), part_index, num_parts);
  return {data.images.Slice(begin, end), data.labels.Slice(begin, end)};
}

// ---------------------------------------------------------------------------------------------

MNISTIter::MNISTIter(const MNISTData& data, int batch_size, bool shuffle, uint64_t seed,
                     bool flat)
    : data_(data), batch_size_(batch_size), shuffle_(shuffle), flat_(flat), rng_(seed) {
  if (batch_size <= 0) throw Error(StrCat("MNISTIter: batch_size must be > 0, got ", batch_size));
  const NDArray& im = data_.images;
  const NDArray& lb = data_.labels;
  if (im.is_none() || im.dtype() != DType::kFloat32 || im.shape().ndim() != 3)
    throw Error(StrCat("MNISTIter: images must be float32 (N,rows,cols), got ",
                       im.is_none() ? std::string("none") : im.shape().ToString()));
  if (lb.is_none() || lb.dtype() != DType::kFloat32 || lb.shape().ndim() != 1)
    throw Error(StrCat("MNISTIter: labels must be float32 (N,), got ",
                       lb.is_none() ? std::string("none") : lb.shape().ToString()));
  num_samples_ = im.shape()[0];
  rows_ = im.shape()[1];
  cols_ = im.shape()[2];
  if (lb.shape()[0] != num_samples_)
    throw Error(StrCat("MNISTIter: ", num_samples_, " images but ", lb.shape()[0], " labels"));
  if (num_samples_ == 0) throw Error("MNISTIter: the data set is empty");
  order_.resize(static_cast<size_t>(num_samples_));
  for (int64_t i = 0; i < num_samples_; ++i) order_[static_cast<size_t>(i)] = i;
  if (shuffle_) Shuffle();
}

std::vector<int64_t> ShuffledOrder(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t j = rng() % static_cast<uint64_t>(i + 1);  // modulo bias < N / 2^64
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

void MNISTIter::Shuffle() { order_ = ShuffledOrder(num_samples_, rng_); }

void MNISTIter::Reset() {
  cursor_ = 0;
  have_batch_ = false;
  pad_ = 0;
  batch_index_.clear();
  batch_data_ = NDArray();
  batch_label_ = NDArray();
  if (shuffle_) Shuffle();
}

int MNISTIter::num_batches() const {
  return static_cast<int>((num_samples_ + batch_size_ - 1) / batch_size_);
}

bool MNISTIter::Next() {
  if (cursor_ >= num_samples_) {
    have_batch_ = false;
    return false;
  }
  const int64_t b = batch_size_;
  const int64_t pixels = rows_ * cols_;
  batch_index_.resize(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i)
    batch_index_[static_cast<size_t>(i)] = order_[static_cast<size_t>((cursor_ + i) % num_samples_)];
  int64_t real = std::min(b, num_samples_ - cursor_);
  pad_ = static_cast<int>(b - real);
  cursor_ += b;

  TShape shape = flat_ ? TShape({b, pixels}) : TShape({b, 1, rows_, cols_});
  batch_data_ = NDArray(shape, DType::kFloat32);
  batch_label_ = NDArray(TShape({b}), DType::kFloat32);
  const float* src = data_.images.fdata();
  const float* src_label = data_.labels.fdata();
  float* dst = batch_data_.fdata();
  float* dst_label = batch_label_.fdata();
  const size_t row_bytes = static_cast<size_t>(pixels) * sizeof(float);
  for (int64_t i = 0; i < b; ++i) {
    int64_t s = batch_index_[static_cast<size_t>(i)];
    std::memcpy(dst + i * pixels, src + s * pixels, row_bytes);
    dst_label[i] = src_label[s];
  }
  have_batch_ = true;
  return true;
}

void MNISTIter::CheckHaveBatch(const char* what) const {
  if (!have_batch_)
    throw Error(StrCat("MNISTIter::", what, "() called with no current batch (call Next() first)"));
}

NDArray MNISTIter::data() const {
  CheckHaveBatch("data");
  return batch_data_;
}

NDArray MNISTIter::label() const {
  CheckHaveBatch("label");
  return batch_label_;
}

int MNISTIter::pad() const {
  CheckHaveBatch("pad");
  return pad_;
}

}  // namespace symbind
