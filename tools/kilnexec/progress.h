// A build progress bar with ETA, fed by the builder through IProgressMonitor; it draws only on a terminal.
#pragma once

#include <kiln/kiln_base.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace kilnexec {

/// One line of the bar: "[#####.....]  50% Tactic selection 5/10, ETA 0:03" (`width` cells of bar). The ETA
/// is extrapolated from the elapsed time and the steps done; "ETA --:--" before the first step.
std::string renderProgressLine(std::string const& phase, int32_t done, int32_t total, double elapsedS, int width = 30);

/// IProgressMonitor that redraws one line on `out` (with '\r') as steps complete, at most every 100 ms, and
/// clears it when the phase ends. With `interactive` false (stdout is not a terminal) it writes nothing.
class ProgressBar : public kiln::IProgressMonitor {
 public:
  ProgressBar(std::FILE* out, bool interactive) : out_(out), interactive_(interactive) {}
  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override;
  bool stepComplete(char const* phaseName, int32_t step) noexcept override;
  void phaseFinish(char const* phaseName) noexcept override;
  /// Number of lines drawn so far (for tests).
  int32_t draws() const { return draws_; }

 private:
  struct Phase {
    std::string name;
    int32_t steps = 0;
    std::chrono::steady_clock::time_point start;
  };
  void draw(Phase const& p, int32_t done);

  std::FILE* out_;
  bool interactive_;
  std::mutex mutex_;
  std::vector<Phase> phases_;
  std::chrono::steady_clock::time_point lastDraw_{};
  int32_t draws_ = 0;
};

}  // namespace kilnexec
