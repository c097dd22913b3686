// kilnexec: the trtexec of Kiln. A thin main over the modules of this folder (see app.h); --help lists the flags.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "app.h"

namespace {

// Other runnable threads now, from /proc/loadavg's "running/total" field (which counts this process too): the
// fewest of five samples 2 ms apart, so that a passing burst does not count. -1 when it cannot be read.
long otherRunnable() {
  long fewest = -1;
  for (int i = 0; i < 5; ++i) {
    if (i) usleep(2000);
    FILE* f = std::fopen("/proc/loadavg", "r");
    if (!f) return -1;
    double l1 = 0, l5 = 0, l15 = 0;
    long running = 0, total = 0;
    int got = std::fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &total);
    std::fclose(f);
    if (got != 5) return -1;
    if (fewest < 0 || running - 1 < fewest) fewest = running - 1;
  }
  return fewest;
}

}  // namespace

int main(int argc, char** argv) {
  // The CPU backend's oneDNN kernels run on OpenMP. libgomp's idle workers spin a while before they sleep; on a
  // quiet machine that is what makes back-to-back parallel regions cheap (MobileNetV2 batch 1 on 2 cores: 4.5 ms,
  // against 9.6 ms with sleeping workers). On a busy machine a spinning worker uses up its share of the scheduler,
  // is preempted, and every later parallel region waits a scheduler period for it (ResNet-18 on 2 cores shared
  // with compilers: 400 ms per inference instead of 55 ms). So when the user has chosen neither OMP_WAIT_POLICY
  // nor GOMP_SPINCOUNT and at least as many other threads as CPUs are runnable right now, kilnexec asks for
  // passive (sleeping) workers; libgomp reads the variable only when it loads, so kilnexec starts itself again,
  // once (if that fails it runs on as it is). KILN_EXEC_REEXEC marks the second start.
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT") && !std::getenv("KILN_EXEC_REEXEC")) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long others = otherRunnable();
    if (cpus > 0 && others >= cpus && setenv("OMP_WAIT_POLICY", "passive", 1) == 0 &&
        setenv("KILN_EXEC_REEXEC", "1", 1) == 0)
      execv("/proc/self/exe", argv);
  }
  return kilnexec::kilnexecMain(argc, argv, stdout, stderr, isatty(fileno(stdout)) != 0);
}
