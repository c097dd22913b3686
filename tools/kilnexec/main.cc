// kilnexec: the trtexec of Kiln. A thin main over the modules of this folder (see app.h); --help lists the flags.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "app.h"

int main(int argc, char** argv) {
  // The CPU backend's oneDNN kernels run on OpenMP, whose idle workers spin (active wait) by default. On a busy
  // machine a spinning worker uses up its share of the scheduler, is then preempted, and every later parallel
  // region waits a scheduler period for it (measured on 2 shared cores: ResNet-18 400 ms per inference instead of
  // 55 ms). libgomp reads OMP_WAIT_POLICY only when it is loaded, so when the user has not chosen one kilnexec
  // sets passive (sleeping) workers and starts itself again, once; if that fails it runs on as it is.
  if (!std::getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
    execv("/proc/self/exe", argv);
  return kilnexec::kilnexecMain(argc, argv, stdout, stderr, isatty(fileno(stdout)) != 0);
}
