// kilnexec: the trtexec of Kiln. A thin main over the modules of this folder (see app.h); --help lists the flags.
#include <unistd.h>

#include <cstdio>

#include "app.h"

int main(int argc, char** argv) {
  return kilnexec::kilnexecMain(argc, argv, stdout, stderr, isatty(fileno(stdout)) != 0);
}
