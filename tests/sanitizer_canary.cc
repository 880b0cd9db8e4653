// Deliberate bugs, one per sanitizer, for the sanitizer build only: tests/sanitizer_canary.sh
// checks that each one produces its report AND a failing exit status, so that a real report
// anywhere in the test suite cannot pass unnoticed (UBSan must not just print and continue).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitizer_canary heap-overflow|signed-overflow|leak\n");
    return 2;
  }
  volatile int index = 4;  // volatile: the compiler cannot prove the bugs away
  if (std::strcmp(argv[1], "heap-overflow") == 0) {
    // Through memset: a plain a[4] store would be caught first by UBSan's object-size check.
    int* a = new int[4];
    std::memset(a, 0, sizeof(int) * (index + 1));
    int v = a[0];
    delete[] a;
    return v == 12345;
  }
  if (std::strcmp(argv[1], "signed-overflow") == 0) {
    volatile int big = std::numeric_limits<int>::max();
    int sum = big + index;
    std::printf("%d\n", sum);
    return 0;
  }
  if (std::strcmp(argv[1], "leak") == 0) {
    void* volatile p = std::malloc(1000);
    p = nullptr;
    return p != nullptr;
  }
  return 2;
}
