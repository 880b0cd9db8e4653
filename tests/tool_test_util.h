// Running the built `symbind` command-line tool from tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

namespace symbind_test {

// A program of this build, by its path under the build directory ("tools/symbind",
// "apps/mtcnn-detect"), found from the test binary: <build>/tests/symbind_tests.
inline std::string BuiltProgramPath(const std::string& relative) {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  std::string dir = exe.substr(0, exe.rfind('/'));
  return dir.substr(0, dir.rfind('/')) + "/" + relative;
}

// The built tool next to the test binary: <build>/tests/symbind_tests -> <build>/tools/symbind.
inline std::string ToolPath() { return BuiltProgramPath("tools/symbind"); }

// False (with a warning) when the program was not built, e.g. SYMBIND_BUILD_APPS=OFF.
inline bool ProgramBuilt(const std::string& path) {
  std::ifstream is(path);
  if (!is) WARN("not built: " << path << "; skipping");
  return static_cast<bool>(is);
}
inline bool ToolBuilt() { return ProgramBuilt(ToolPath()); }

struct RunResult {
  int status = -1;  // exit code; -1 when killed by a signal
  std::string output;  // standard output and error
};

// Runs a /bin/sh command line; output is its standard output (add 2>&1 for errors).
inline RunResult RunShell(const std::string& command) {
  RunResult r;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int st = ::pclose(p);
  if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  return r;
}

// Runs the tool with `args`, after environment assignments `env` ("NAME=value ..." or "").
inline RunResult RunTool(const std::string& args, const std::string& env = "") {
  return RunShell(env + (env.empty() ? "" : " ") + ToolPath() + " " + args + " 2>&1");
}

}  // namespace symbind_test
