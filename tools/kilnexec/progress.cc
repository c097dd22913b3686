// Build progress bar for kilnexec.
#include "progress.h"

#include <algorithm>
#include <cmath>

namespace kilnexec {

std::string renderProgressLine(std::string const& phase, int32_t done, int32_t total, double elapsedS, int width) {
  double const frac = total > 0 ? std::clamp(static_cast<double>(done) / total, 0.0, 1.0) : 1.0;
  int const filled = static_cast<int>(std::floor(frac * width));
  std::string bar =
      "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.') + "]";
  char buf[64];
  std::snprintf(buf, sizeof(buf), " %3d%% ", static_cast<int>(std::floor(frac * 100.0)));
  std::string line = bar + buf + phase + " " + std::to_string(done) + "/" + std::to_string(total);
  if (done <= 0 || total <= 0) return line + ", ETA --:--";
  double const eta = elapsedS / done * std::max(0, total - done);
  long const s = std::lround(eta);
  std::snprintf(buf, sizeof(buf), ", ETA %ld:%02ld", s / 60, s % 60);
  return line + buf;
}

void ProgressBar::phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  phases_.push_back({phaseName ? phaseName : "", nbSteps, std::chrono::steady_clock::now()});
}

bool ProgressBar::stepComplete(char const* phaseName, int32_t step) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string const name = phaseName ? phaseName : "";
  for (auto it = phases_.rbegin(); it != phases_.rend(); ++it)
    if (it->name == name) {
      auto const now = std::chrono::steady_clock::now();
      // step is 0-based and reported as it starts being worked on in Kiln's builder; count it done when the
      // next one arrives, and redraw at most every 100 ms (and always for the last step).
      bool const last = step + 1 >= it->steps;
      if (last || now - lastDraw_ >= std::chrono::milliseconds(100)) {
        lastDraw_ = now;
        draw(*it, step);
      }
      break;
    }
  return true;
}

void ProgressBar::phaseFinish(char const* phaseName) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string const name = phaseName ? phaseName : "";
  for (auto it = phases_.rbegin(); it != phases_.rend(); ++it)
    if (it->name == name) {
      if (interactive_ && draws_ > 0) {
        std::fprintf(out_, "\r\033[K");  // clear the bar's line
        std::fflush(out_);
      }
      phases_.erase(std::next(it).base());
      break;
    }
}

void ProgressBar::draw(Phase const& p, int32_t done) {
  if (!interactive_) return;
  double const elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
  std::fprintf(out_, "\r%s\033[K", renderProgressLine(p.name, done, p.steps, elapsed).c_str());
  std::fflush(out_);
  ++draws_;
}

}  // namespace kilnexec
