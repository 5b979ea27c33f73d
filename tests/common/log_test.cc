// The log line format: when (UTC, microseconds), the pid, the slot and the
// epoch before the level and the message, so that the lines of several real
// processes sort, as text, into the order they were written in.
#include "common/log.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace trainmover {
namespace {

// Seconds since the epoch of a line's leading "YYYY-MM-DDTHH:MM:SS.uuuuuuZ".
double line_time(const std::string& line) {
  std::tm parts{};
  int micros = 0;
  if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &parts.tm_year, &parts.tm_mon,
                  &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &micros) != 7)
    return -1;
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<double>(timegm(&parts)) + micros / 1e6;
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(LogLine, CarriesTimePidSlotAndEpoch) {
  log_set_identity(3, 7);
  const double before = wall_now();
  const std::string line = format_log_line(LogLevel::kWarn, "link to slot 4 broke");
  const double after = wall_now();
  const std::regex format(
      R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z trainmover\[(\d+)\] slot=3 epoch=7 warning: link to slot 4 broke$)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(line, m, format)) << line;
  EXPECT_EQ(std::stoi(m[1]), static_cast<int>(getpid()));
  // The time is this moment's, in UTC (truncated to the microsecond).
  EXPECT_GE(line_time(line), before - 1e-6) << line;
  EXPECT_LE(line_time(line), after) << line;
  log_set_identity(-1, -1);
}

TEST(LogLine, UnknownSlotAndEpochAreDashes) {
  log_set_identity(-1, -1);
  const std::string line = format_log_line(LogLevel::kError, "x");
  EXPECT_NE(line.find("] slot=- epoch=- error: x"), std::string::npos) << line;
  log_set_identity(-1, 0);  // a standby: no slot yet
  EXPECT_NE(format_log_line(LogLevel::kInfo, "y").find("] slot=- epoch=0 info: y"),
            std::string::npos);
  log_set_identity(-1, -1);
}

// Three processes, one after the other, each write a line to stderr (a
// shared file); the lines, shuffled and sorted as text, come back in the
// order written, and each names its own process's slot.
TEST(LogLine, LinesOfSeveralProcessesMergeInOrder) {
  char path[] = "/tmp/tm_log_test_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  for (int slot = 0; slot < 3; ++slot) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::dup2(fd, STDERR_FILENO);
      log_set_identity(slot, 1);
      log(LogLevel::kError, "line ", slot);
      std::fflush(stderr);
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // Later than the last line's microsecond, on any machine.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::close(fd);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ::unlink(path);
  ASSERT_EQ(lines.size(), 3u);
  std::vector<std::string> merged(lines.rbegin(), lines.rend());
  std::sort(merged.begin(), merged.end());
  for (int slot = 0; slot < 3; ++slot) {
    const std::string& line = merged[static_cast<size_t>(slot)];
    EXPECT_NE(line.find(str_cat(" slot=", slot, " epoch=1 error: line ", slot)), std::string::npos)
        << line;
  }
}

}  // namespace
}  // namespace trainmover
