// The one way symbind opens a file it reads. Models, parameters, images, CSV and MNIST files
// are regular files: a FIFO would block open() or read() forever, a device never ends and a
// directory reads as an error deep inside a parser, so each is refused up front, naming it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace symbind {

class RegularFile {
 public:
  // stat() first, so that open() never blocks on a FIFO; O_NONBLOCK and an fstat() of the open
  // descriptor as well, so that one swapped in between cannot either. Throws IOError naming
  // `path` ("cannot open", or "not a regular file (a FIFO)" and the like).
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // Up to `n` bytes from the start of the file (fewer when it is shorter).
  std::string ReadHead(size_t n) const;
  // Hands the descriptor to the caller, who closes it (fdopen).
  int Release();

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace symbind
