// The shared command-line helper (lib/cli): option kinds and ranges, where
// the program's own arguments start, variables as defaults, the one error
// form and exit status 2, and --help generated from the same table.
#include "cli/command_line.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/median.h"

namespace trainmover::cli {
namespace {

// What a parse gave, with what it printed on stderr.
struct Parsed {
  std::optional<int> exit_code;
  std::string stderr_text;
};

// `args` without the program's name.
Parsed parse(CommandLine& command_line, const std::vector<std::string>& args) {
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  Parsed parsed{command_line.parse(args), ""};
  testing::internal::GetCapturedStdout();
  parsed.stderr_text = testing::internal::GetCapturedStderr();
  return parsed;
}

struct Values {
  int count = 4;
  uint64_t bytes = 4096;
  double timeout_s = 60;
  double ratio = 0.5;
  bool json = false;
  std::vector<int64_t> sizes;
  std::vector<std::string> impls = {"a"};
  std::vector<std::string> operands;
};

CommandLine table(Values& v, Operands kind = Operands::kNone) {
  CommandLine command_line("prog", "prog [OPTIONS]", "A test program.\n");
  command_line.integer("count,n", "N", 1, 64, v.count, "how many")
      .size("bytes,b", "SIZE", 4, uint64_t{1} << 30, v.bytes, "how big")
      .duration("timeout", "SEC", 1e-3, 3600, v.timeout_s, "how long")
      .from_env("TM_CLI_TEST_TIMEOUT")
      .number("ratio", "R", 0, 1, v.ratio, "how much")
      .flag("json", v.json, "JSON output,\nfor programs")
      .integer_list("sizes", "LIST", 1, 100, v.sizes, "which")
      .choice_list("impl", "LIST", {"a", "b", "c"}, v.impls, "whose")
      .operands(kind, "PROGRAM", v.operands);
  return command_line;
}

TEST(CommandLine, ParsesEveryKindOfValue) {
  Values v;
  CommandLine cl = table(v, Operands::kAny);
  Parsed p = parse(cl, {"-n", "8", "--bytes=16M", "--timeout", "1.5m", "--ratio", "0.25", "--json",
                        "--sizes", "3,1,3", "--impl", "c,a,c", "file"});
  EXPECT_FALSE(p.exit_code.has_value()) << p.stderr_text;
  EXPECT_EQ(v.count, 8);
  EXPECT_EQ(v.bytes, 16u << 20);
  EXPECT_DOUBLE_EQ(v.timeout_s, 90);
  EXPECT_DOUBLE_EQ(v.ratio, 0.25);
  EXPECT_TRUE(v.json);
  EXPECT_EQ(v.sizes, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(v.impls, (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(v.operands, (std::vector<std::string>{"file"}));
}

TEST(CommandLine, UnsetOptionsKeepTheirDefaults) {
  Values v;
  CommandLine cl = table(v);
  EXPECT_FALSE(parse(cl, {}).exit_code.has_value());
  EXPECT_EQ(v.count, 4);
  EXPECT_EQ(v.bytes, 4096u);
  EXPECT_EQ(v.impls, (std::vector<std::string>{"a"}));
  EXPECT_FALSE(v.json);
}

TEST(CommandLine, BadUsageExits2InOneFormNamingOptionAndValue) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"--count", "65"}, "prog: --count: '65' is out of range [1, 64]"},
      {{"--count", "x"}, "prog: --count: 'x' is not an integer"},
      {{"--bytes", "2G"}, "prog: --bytes: '2G' is out of range [4 B, 1 GiB]"},
      {{"--timeout", "0"}, "prog: --timeout: '0' is out of range"},
      {{"--timeout", "-1"}, "prog: --timeout: '-1' is out of range"},
      {{"--ratio", "1e300"}, "prog: --ratio: '1e300' is out of range [0, 1]"},
      {{"--ratio", "inf"}, "prog: --ratio: 'inf' is not a number"},
      {{"--impl", "d"}, "prog: --impl: 'd' is not one of: a, b, c"},
      {{"--count"}, "prog: --count needs a value"},
      {{"--json=1"}, "prog: --json takes no value"},
      {{"--frobnicate"}, "prog: unknown option '--frobnicate'"},
      {{"--coun", "3"}, "prog: unknown option '--coun'"},  // never abbreviated
      {{"-n", "2", "-n", "3"}, "prog: --count is given more than once"},
      {{"stray"}, "prog: unexpected argument 'stray'"},
  };
  for (const Case& c : cases) {
    Values v;
    CommandLine cl = table(v);
    Parsed p = parse(cl, c.args);
    EXPECT_EQ(p.exit_code, kExitUsage) << c.message;
    EXPECT_EQ(p.stderr_text.rfind(c.message, 0), 0u) << p.stderr_text;
    EXPECT_TRUE(p.stderr_text.ends_with("\nTry 'prog --help'.\n")) << p.stderr_text;
    EXPECT_EQ(v.count, 4) << "a refused value is not stored";
  }
}

TEST(CommandLine, TheProgramsArgumentsStartAtItsNameOrAfterDashes) {
  Values v;
  CommandLine cl = table(v, Operands::kProgram);
  EXPECT_FALSE(parse(cl, {"-n", "2", "sh", "-c", "--count 9", "-n", "5", "--help"}).exit_code);
  EXPECT_EQ(v.count, 2);
  EXPECT_EQ(v.operands, (std::vector<std::string>{"sh", "-c", "--count 9", "-n", "5", "--help"}));
  Values w;
  CommandLine dashes = table(w, Operands::kProgram);
  EXPECT_FALSE(parse(dashes, {"--json", "--", "-n", "7"}).exit_code);
  EXPECT_TRUE(w.json);
  EXPECT_EQ(w.count, 4);
  EXPECT_EQ(w.operands, (std::vector<std::string>{"-n", "7"}));
  Values x;
  CommandLine none = table(x, Operands::kProgram);
  Parsed p = parse(none, {"-n", "2"});
  EXPECT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.stderr_text.find("no PROGRAM given"), std::string::npos) << p.stderr_text;
}

// trainmover-launch --slurm-task --exit-report PID runs no program; the
// table still takes one for its other modes.
TEST(CommandLine, AnOptionalProgramMayBeAbsentAndIsTakenLikeAProgram) {
  Values v;
  CommandLine cl = table(v, Operands::kOptionalProgram);
  EXPECT_FALSE(parse(cl, {"-n", "3"}).exit_code.has_value());
  EXPECT_EQ(v.count, 3);
  EXPECT_TRUE(v.operands.empty());
  Values w;
  CommandLine with = table(w, Operands::kOptionalProgram);
  EXPECT_FALSE(parse(with, {"-n", "2", "sh", "-n", "5"}).exit_code.has_value());
  EXPECT_EQ(w.count, 2);
  EXPECT_EQ(w.operands, (std::vector<std::string>{"sh", "-n", "5"}));
}

TEST(CommandLine, AVariableIsTheDefaultAndIsCheckedLikeTheOption) {
  ASSERT_EQ(setenv("TM_CLI_TEST_TIMEOUT", "250ms", 1), 0);
  Values v;
  CommandLine cl = table(v);
  EXPECT_FALSE(parse(cl, {}).exit_code.has_value());
  EXPECT_DOUBLE_EQ(v.timeout_s, 0.25);
  Values given;
  CommandLine cl2 = table(given);
  EXPECT_FALSE(parse(cl2, {"--timeout", "2"}).exit_code.has_value());
  EXPECT_DOUBLE_EQ(given.timeout_s, 2) << "the command line wins over the variable";
  ASSERT_EQ(setenv("TM_CLI_TEST_TIMEOUT", "soon", 1), 0);
  Values bad;
  CommandLine cl3 = table(bad);
  Parsed p = parse(cl3, {});
  unsetenv("TM_CLI_TEST_TIMEOUT");
  EXPECT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.stderr_text.find("TM_CLI_TEST_TIMEOUT (the default of --timeout)"), std::string::npos)
      << p.stderr_text;
}

TEST(CommandLine, HelpComesFromTheSameTable) {
  Values v;
  CommandLine cl = table(v);
  std::string help = cl.help();
  for (const char* line :
       {"Usage: prog [OPTIONS]\nA test program.\n", "\n  -n, --count N             how many\n",
        "\n      --json                JSON output, for programs\n",
        "$TM_CLI_TEST_TIMEOUT when set", "\n  -h, --help                show this help\n"}) {
    EXPECT_NE(help.find(line), std::string::npos) << line << "\nin\n" << help;
  }
  EXPECT_EQ(parse(cl, {"--help"}).exit_code, 0);
  EXPECT_EQ(parse(cl, {"-h"}).exit_code, 0);
}

TEST(Median, OddEvenAndNone) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7);
  EXPECT_TRUE(std::isnan(median({})));
}

}  // namespace
}  // namespace trainmover::cli
