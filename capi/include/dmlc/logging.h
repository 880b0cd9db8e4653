// The part of dmlc-core's logging.h MXNet programs use: dmlc::Error (a std::runtime_error),
// CHECK / CHECK_EQ ... (throw dmlc::Error when false), LOG(INFO|WARNING|ERROR|FATAL), LG.
// dmlc::Error is symbind::Error itself, so `catch (dmlc::Error&)` catches every error symbind
// raises (its mxnet-cpp layer and library throw symbind::Error and its subclasses), and what
// `CHECK` throws here is caught by `catch (symbind::Error&)`. C++11, header-only. Includes what dmlc's logging.h includes (<cstring>, <vector>, ...), on
// which MXNet programs rely.
#ifndef DMLC_LOGGING_H_
#define DMLC_LOGGING_H_

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/error.h>

namespace dmlc {

using Error = ::symbind::Error;

// Prints "[hh:mm:ss] file:line: message" to stderr when destroyed.
class LogMessage {
 public:
  LogMessage(const char* file, int line) {
    std::time_t t = std::time(nullptr);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&t));
    stream_ << "[" << buf << "] " << file << ":" << line << ": ";
  }
  ~LogMessage() { std::cerr << stream_.str() << std::endl; }
  std::ostringstream& stream() { return stream_; }

 protected:
  std::ostringstream stream_;

 private:
  LogMessage(const LogMessage&);
  LogMessage& operator=(const LogMessage&);
};

// Throws dmlc::Error with the streamed message when destroyed.
class LogMessageFatal {
 public:
  LogMessageFatal(const char* file, int line) { stream_ << file << ":" << line << ": "; }
#if __cplusplus >= 201103L
  ~LogMessageFatal() noexcept(false) { throw Error(stream_.str()); }
#endif
  std::ostringstream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
  LogMessageFatal(const LogMessageFatal&);
  LogMessageFatal& operator=(const LogMessageFatal&);
};

// Lets `CHECK(x) << ...` be an expression of type void in both branches of ?:.
class LogMessageVoidify {
 public:
  void operator&(std::ostream&) {}
};

}  // namespace dmlc

#define LOG_INFO ::dmlc::LogMessage(__FILE__, __LINE__)
#define LOG_WARNING ::dmlc::LogMessage(__FILE__, __LINE__)
#define LOG_ERROR ::dmlc::LogMessage(__FILE__, __LINE__)
#define LOG_FATAL ::dmlc::LogMessageFatal(__FILE__, __LINE__)
#define LOG_QFATAL LOG_FATAL
#define LOG(severity) LOG_##severity.stream()
#define LG LOG_INFO.stream()
#define LOG_IF(severity, condition) \
  !(condition) ? (void)0 : ::dmlc::LogMessageVoidify() & LOG(severity)

// Unless a test framework (Catch2, gtest) already defined CHECK.
#ifndef CHECK
#define CHECK(x)                                                         \
  if (!(x))                                                              \
  ::dmlc::LogMessageFatal(__FILE__, __LINE__).stream() << "Check failed: " #x << ": "
#define DMLC_CHECK_BINARY_OP(name, op, x, y)                                            \
  if (!((x)op(y)))                                                                      \
  ::dmlc::LogMessageFatal(__FILE__, __LINE__).stream()                                  \
      << "Check failed: " << #x " " #op " " #y << " (" << (x) << " vs. " << (y) << ") "
#define CHECK_LT(x, y) DMLC_CHECK_BINARY_OP(_LT, <, x, y)
#define CHECK_GT(x, y) DMLC_CHECK_BINARY_OP(_GT, >, x, y)
#define CHECK_LE(x, y) DMLC_CHECK_BINARY_OP(_LE, <=, x, y)
#define CHECK_GE(x, y) DMLC_CHECK_BINARY_OP(_GE, >=, x, y)
#define CHECK_EQ(x, y) DMLC_CHECK_BINARY_OP(_EQ, ==, x, y)
#define CHECK_NE(x, y) DMLC_CHECK_BINARY_OP(_NE, !=, x, y)
#define CHECK_NOTNULL(x) \
  ((x) == nullptr ? (::dmlc::LogMessageFatal(__FILE__, __LINE__).stream() << "Check notnull: " #x, (x)) : (x))
#define DCHECK(x) CHECK(x)
#define DCHECK_LT(x, y) CHECK_LT(x, y)
#define DCHECK_GT(x, y) CHECK_GT(x, y)
#define DCHECK_LE(x, y) CHECK_LE(x, y)
#define DCHECK_GE(x, y) CHECK_GE(x, y)
#define DCHECK_EQ(x, y) CHECK_EQ(x, y)
#define DCHECK_NE(x, y) CHECK_NE(x, y)
#endif  // CHECK

#endif  // DMLC_LOGGING_H_
