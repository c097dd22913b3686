// Tests of the build progress bar: the rendered line and ETA, and silence when stdout is not a terminal.
#include "progress.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace kilnexec {
namespace {

TEST(Progress, RendersBarPercentAndEta) {
  // 5 of 20 steps in 10 s: 2 s per step, 15 steps left -> 30 s.
  EXPECT_EQ(renderProgressLine("Tactic selection", 5, 20, 10.0, 8), "[##......]  25% Tactic selection 5/20, ETA 0:30");
  // 1 of 3 in 61 s: 122 s left.
  EXPECT_EQ(renderProgressLine("p", 1, 3, 61.0, 3), "[#..]  33% p 1/3, ETA 2:02");
  EXPECT_EQ(renderProgressLine("p", 0, 3, 1.0, 3), "[...]   0% p 0/3, ETA --:--");
  EXPECT_EQ(renderProgressLine("p", 3, 3, 9.0, 3), "[###] 100% p 3/3, ETA 0:00");
}

TEST(Progress, QuietWhenNotInteractive) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressBar bar(f, false);
  bar.phaseStart("Tactic selection", nullptr, 3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bar.stepComplete("Tactic selection", i));
  bar.phaseFinish("Tactic selection");
  EXPECT_EQ(std::ftell(f), 0);
  EXPECT_EQ(bar.draws(), 0);
  std::fclose(f);
}

TEST(Progress, DrawsOnATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressBar bar(f, true);
  bar.phaseStart("Tactic selection", nullptr, 2);
  EXPECT_TRUE(bar.stepComplete("Tactic selection", 0));  // the first draw is never throttled
  EXPECT_TRUE(bar.stepComplete("Tactic selection", 1));  // the last step always draws
  bar.phaseFinish("Tactic selection");
  EXPECT_EQ(bar.draws(), 2);
  std::rewind(f);
  char buf[512] = {};
  size_t const n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::string const text(buf, n);
  EXPECT_NE(text.find("Tactic selection 1/2"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");  // the bar is cleared at the end
  std::fclose(f);
}

}  // namespace
}  // namespace kilnexec
