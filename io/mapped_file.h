// A whole file mapped read-only into memory (PROT_READ: a stray write faults instead of
// changing the file or the pages other processes share).
#pragma once
#include <cstddef>
#include <string>

namespace symbind {

class MappedFile {
 public:
  // Throws IOError naming `path` when it cannot be opened, is not a regular file (RegularFile)
  // or cannot be mapped. An empty file maps to data() == nullptr, size() == 0.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  // Gives the pages wholly before `offset` back to the kernel (they are re-read if touched).
  void DropBefore(size_t offset);

 private:
  size_t dropped_ = 0;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace symbind
