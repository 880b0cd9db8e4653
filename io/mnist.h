// MNIST / Fashion-MNIST: a reader for the idx file format and a batch iterator.
//
// idx files are read gzip-compressed (".gz") or plain; the reader does not look at the name.
// Layout (all integers big-endian):
//   images: uint32 magic 0x00000803, uint32 count, uint32 rows, uint32 cols, then
//           count*rows*cols uint8 pixels, row-major.
//   labels: uint32 magic 0x00000801, uint32 count, then count uint8 labels.
// Anything else -- wrong magic, zero or absurd dims, fewer or more bytes than the header
// declares, a corrupt gzip stream -- throws symbind::IOError naming the file and the fault.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/ndarray.h>

namespace symbind {

struct MNISTData {
  NDArray images;  // (N, rows, cols) float32, pixel / 255, so in [0, 1]
  NDArray labels;  // (N,) float32, the class numbers as stored (0..9 for (Fashion-)MNIST)
};

// Reads an idx3 image file into (N, rows, cols) float32 scaled to [0, 1].
NDArray LoadMNISTImages(const std::string& path);
// Reads an idx1 label file into (N,) float32.
NDArray LoadMNISTLabels(const std::string& path);
// Both, checking that the two files hold the same number of samples.
MNISTData LoadMNIST(const std::string& images_path, const std::string& labels_path);

// Where Debian's dataset-fashion-mnist package puts the files
// ("/usr/share/datasets/fashion-mnist"), unless the environment variable
// SYMBIND_FASHION_MNIST names another directory.
std::string DefaultFashionMNISTDir();
// Loads "<dir>/train-*-ubyte.gz" (train = true) or "<dir>/t10k-*-ubyte.gz".
MNISTData LoadFashionMNIST(bool train, const std::string& dir = DefaultFashionMNISTDir());

// Data sharding for data-parallel training, as MXNet's iterators' part_index / num_parts: part
// `part_index` of `num_parts` is the contiguous rows [n * part_index / num_parts,
// n * (part_index + 1) / num_parts). Throws Error unless 0 <= part_index < num_parts <= n.
std::pair<int64_t, int64_t> PartBounds(int64_t n, int part_index, int num_parts);
// That part of a data set (views sharing the arrays of `data`).
MNISTData MNISTPart(const MNISTData& data, int part_index, int num_parts);

// A permutation of 0..n-1 drawn from `rng`: Fisher-Yates written out (rather than std::shuffle,
// whose result differs between standard libraries) so a seed gives the same order everywhere.
std::vector<int64_t> ShuffledOrder(int64_t n, std::mt19937_64& rng);

// Iterates over a data set in batches of `batch_size` samples.
//
// data() is (B, rows*cols) when `flat`, else (B, 1, rows, cols); label() is (B,). Every batch
// is full: the last one, when N is not a multiple of B, is completed by wrapping around to the
// start of the (current) sample order, and pad() tells how many of its rows are such padding
// (MXNet's last_batch_handle="pad"). So num_batches() == ceil(N / B).
//
// With `shuffle`, the sample order is a permutation drawn from std::mt19937_64(seed): once at
// construction and again at every Reset(), from the same generator, so the whole sequence of
// epochs is reproducible from the seed. Without it the order is 0..N-1.
//
// Each Next() fills freshly allocated arrays: batches already handed out are never
// overwritten. The iterator shares (does not copy) the arrays of `data`.
class MNISTIter {
 public:
  MNISTIter(const MNISTData& data, int batch_size, bool shuffle = false, uint64_t seed = 0,
            bool flat = false);

  // Rewinds to the first batch (reshuffling when shuffling).
  void Reset();
  // Advances to the next batch; false when the epoch is over.
  bool Next();

  // The current batch. Throws symbind::Error before the first Next() of an epoch.
  NDArray data() const;
  NDArray label() const;
  // Rows at the end of the current batch that repeat samples from the start of the order.
  int pad() const;
  // The sample indices (rows of the data set) in the current batch, padding included.
  const std::vector<int64_t>& index() const { return batch_index_; }

  int num_batches() const;
  int batch_size() const { return batch_size_; }
  int64_t num_samples() const { return num_samples_; }
  // The current epoch's sample order.
  const std::vector<int64_t>& order() const { return order_; }

 private:
  void Shuffle();
  void CheckHaveBatch(const char* what) const;

  MNISTData data_;
  int batch_size_;
  bool shuffle_;
  bool flat_;
  std::mt19937_64 rng_;
  int64_t num_samples_ = 0;
  int64_t rows_ = 0, cols_ = 0;
  std::vector<int64_t> order_;
  std::vector<int64_t> batch_index_;
  int64_t cursor_ = 0;  // position in order_ of the next batch's first sample
  int pad_ = 0;
  bool have_batch_ = false;
  NDArray batch_data_, batch_label_;
};

}  // namespace symbind
