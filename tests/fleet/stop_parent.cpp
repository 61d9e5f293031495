// np-test-stop-parent: stands in for a probe and stops the process that
// started it (SIGSTOP), as a hung kernel call or a stuck driver would leave
// it: the health check's supervisor must still answer within its budget.
#include <signal.h>
#include <unistd.h>

int main() {
  ::kill(::getppid(), SIGSTOP);
  for (;;) ::pause();
}
