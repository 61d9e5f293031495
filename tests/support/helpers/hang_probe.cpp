// Test helper: a probe that hangs. It ignores SIGTERM (so the runner has to
// escalate to SIGKILL) and leaves a grandchild in its process group, whose
// pid goes to $NP_TEST_PIDFILE, so tests can prove nothing survives.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main() {
  ::signal(SIGTERM, SIG_IGN);
  const pid_t child = ::fork();
  if (child == 0) {
    for (;;) ::pause();
  }
  if (const char* f = std::getenv("NP_TEST_PIDFILE")) {
    if (FILE* out = std::fopen(f, "w")) {
      std::fprintf(out, "%d %d\n", static_cast<int>(::getpid()), static_cast<int>(child));
      std::fclose(out);
    }
  }
  std::fprintf(stderr, "hang_probe: hanging on purpose\n");
  for (;;) ::pause();
}
