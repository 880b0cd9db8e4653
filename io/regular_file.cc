#include "regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <symbind/core/error.h>

namespace symbind {

namespace {

void CheckRegular(const std::string& path, const struct stat& st) {
  if (S_ISREG(st.st_mode)) return;
  throw IOError(StrCat("cannot read ", path, ": not a regular file (",
                       S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a special file",
                       "); models, parameters and inputs are read from regular files only"));
}

}  // namespace

RegularFile::RegularFile(const std::string& path) : path_(path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw IOError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  CheckRegular(path, st);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IOError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw IOError(StrCat("cannot read ", path, ": ", std::strerror(err)));
  }
  try {
    CheckRegular(path, st);
  } catch (...) {
    ::close(fd_);
    throw;
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::ReadHead(size_t n) const {
  std::string head(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, &head[got], n - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw IOError(StrCat("cannot read ", path_, ": ", std::strerror(errno)));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  head.resize(got);
  return head;
}

int RegularFile::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

}  // namespace symbind
