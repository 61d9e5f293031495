// Test helper: a probe that writes malformed JSON where its report should be.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      if (FILE* f = std::fopen(argv[i + 1], "w")) {
        std::fputs("{\"schema\": \"nodeprobe.report/1\", \"probes\": [", f);
        std::fclose(f);
      }
    }
  }
  return 0;
}
