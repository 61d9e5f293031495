// Test helper: a probe that dies of a real segmentation fault.
#include <cstdio>

int main() {
  std::fprintf(stderr, "crash_probe: about to dereference null\n");
  std::fflush(stderr);
  volatile int* p = nullptr;
  *p = 42;
  return 0;
}
