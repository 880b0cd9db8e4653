#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <symbind/core/error.h>
#include <symbind/io/ndarray_file.h>

namespace symbind {

MappedFile::MappedFile(const std::string& path) {
  RegularFileSize(path);  // refuses FIFOs and devices before open() could block on them
  // O_NONBLOCK as well: a FIFO swapped in after the check still cannot block the open.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IOError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw IOError(StrCat("cannot read ", path, ": not a regular file"));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (p == MAP_FAILED) {
    ::close(fd_);
    throw IOError(StrCat("cannot map ", path, ": ", std::strerror(errno)));
  }
  data_ = p;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::DropBefore(size_t offset) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = offset / page * page;
  if (!data_ || end <= dropped_) return;
  ::madvise(static_cast<char*>(data_) + dropped_, end - dropped_, MADV_DONTNEED);
  dropped_ = end;
}

}  // namespace symbind
