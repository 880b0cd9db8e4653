#include "mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <symbind/core/error.h>

#include "regular_file.h"

namespace symbind {

MappedFile::MappedFile(const std::string& path) {
  RegularFile file(path);
  size_ = static_cast<size_t>(file.size());
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (p == MAP_FAILED) throw IOError(StrCat("cannot map ", path, ": ", std::strerror(errno)));
  // Page-cache folios of a freshly written file may be 2 MiB, mapped whole on the first touch:
  // reading one small array would then bring back 2 MiB that were released after packing.
  ::madvise(p, size_, MADV_NOHUGEPAGE);
  data_ = p;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

void MappedFile::DropBefore(size_t offset) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = offset / page * page;
  if (!data_ || end <= dropped_) return;
  ::madvise(static_cast<char*>(data_) + dropped_, end - dropped_, MADV_DONTNEED);
  dropped_ = end;
}

}  // namespace symbind
