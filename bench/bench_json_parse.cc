// Symbol JSON load time of large and hostile files, to show parsing is linear: a chain of N
// Activation nodes (400k: ~40 MB) and N empty objects under an unused key, each at N/4, N/2
// and N. Before the depth pre-scan (issue 18) both took over 30 s at 400k.
#include <chrono>
#include <cstdio>
#include <string>

#include <symbind/io/symbol_json.h>
#include "bench_util.h"

using namespace symbind;
using Clock = std::chrono::steady_clock;

namespace {
std::string Chain(int n) {
  std::string s = R"({"nodes": [{"op": "null", "name": "data", "inputs": []})";
  for (int i = 1; i <= n; ++i)
    s += ",{\"op\": \"Activation\", \"name\": \"a" + std::to_string(i) +
         "\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": [[" + std::to_string(i - 1) + ",0,0]]}";
  return s + "], \"arg_nodes\": [0], \"heads\": [[" + std::to_string(n) +
         ",0,0]], \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}";
}

std::string EmptyObjects(int n) {
  std::string s = R"({"unused": [)";
  for (int i = 0; i < n; ++i) s += i ? ",{}" : "{}";
  return s + R"(], "nodes": [{"op": "null", "name": "data", "inputs": []}], "arg_nodes": [0], "heads": [[0,0,0]]})";
}

double Seconds(const std::string& text) {
  auto t0 = Clock::now();
  Symbol s = LoadSymbolJSON(text);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

int Main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 400000;
  std::printf("%-16s %10s %12s %10s %14s\n", "file", "nodes", "bytes", "seconds", "us per item");
  for (int k : {n / 4, n / 2, n}) {
    const std::string chain = Chain(k), empty = EmptyObjects(k);
    const double tc = Seconds(chain), te = Seconds(empty);
    std::printf("%-16s %10d %12zu %10.3f %14.3f\n", "chain", k, chain.size(), tc, 1e6 * tc / k);
    std::printf("%-16s %10d %12zu %10.3f %14.3f\n", "empty objects", k, empty.size(), te, 1e6 * te / k);
  }
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_json_parse", [&] { return Main(argc, argv); }); }
