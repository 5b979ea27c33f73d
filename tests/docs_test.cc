// The documentation cannot drift from the code: every environment variable
// the configuration table reads is documented in trainmover(7), every
// function of the C API in trainmover(3), and every option a program's --help
// prints (generated from the table that parses them) in its man page's
// option lists, and nothing else there.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "comm/config.h"

namespace trainmover {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Docs, EveryEnvironmentVariableIsInTheManPage) {
  std::string page = read_file(std::string(TM_SRCDIR) + "/man/trainmover.7");
  ASSERT_FALSE(page.empty()) << "cannot read man/trainmover.7";
  for (const std::string& name : environment_variables()) {
    EXPECT_NE(page.find(".B " + name), std::string::npos)
        << name << " is not documented in trainmover(7)";
  }
}

TEST(Docs, EveryApiFunctionIsInTheManPage) {
  std::string header = read_file(std::string(TM_SRCDIR) + "/include/trainmover/trainmover.h");
  std::string page = read_file(std::string(TM_SRCDIR) + "/man/trainmover.3");
  ASSERT_FALSE(header.empty());
  ASSERT_FALSE(page.empty());
  // Every "tm_xxx(" in the header is a function declaration.
  int found = 0;
  for (size_t at = header.find("tm_"); at != std::string::npos; at = header.find("tm_", at + 1)) {
    size_t end = header.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", at + 3);
    if (end == std::string::npos || header[end] != '(') continue;
    ++found;
    std::string name = header.substr(at, end - at);
    EXPECT_NE(page.find(name), std::string::npos) << name << " is not documented in trainmover(3)";
  }
  EXPECT_GT(found, 15);
}

// What `command` prints on stdout; fails the test unless it exits 0.
std::string output_of(const std::string& command) {
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return {};
  }
  std::string out;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  return out;
}

// The long options of a --help text: "  -n, --nprocs N ..." or "      --json ...".
std::set<std::string> help_options(const std::string& help) {
  static const std::regex option_line(R"(^  (?:-[a-zA-Z], |    )--([a-z0-9][a-z0-9-]*))");
  std::set<std::string> options;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, option_line)) options.insert(m[1]);
  }
  return options;
}

// The long options a man page describes: those on the tag line of each .TP
// entry, such as .BI \-n ", " \-\-nranks " N" or .B \-\-json.
std::set<std::string> man_options(const std::string& page) {
  static const std::regex long_option(R"(--([a-z0-9][a-z0-9-]*))");
  std::set<std::string> options;
  std::istringstream in(page);
  bool tag = false;
  for (std::string line; std::getline(in, line);) {
    if (tag && line.rfind(".B", 0) == 0) {
      line = std::regex_replace(line, std::regex(R"(\\-)"), "-");
      for (std::sregex_iterator it(line.begin(), line.end(), long_option), end; it != end; ++it)
        options.insert((*it)[1]);
    }
    tag = line == ".TP";
  }
  return options;
}

struct ManPageCase {
  const char* page;                   // under man/
  std::vector<const char*> commands;  // under the build tree, each with --help
};

class OptionsInManPage : public ::testing::TestWithParam<ManPageCase> {};

TEST_P(OptionsInManPage, HelpAndManPageListTheSameOptions) {
  const ManPageCase& c = GetParam();
  std::set<std::string> documented =
      man_options(read_file(std::string(TM_SRCDIR) + "/man/" + c.page));
  ASSERT_FALSE(documented.empty()) << "no option list in man/" << c.page;
  std::set<std::string> offered;
  for (const char* command : c.commands) {
    std::set<std::string> options =
        help_options(output_of(std::string(TM_BUILDDIR) + "/" + command + " --help"));
    EXPECT_FALSE(options.empty()) << command << " --help lists no option";
    for (const std::string& option : options) {
      EXPECT_TRUE(documented.count(option) != 0)
          << "--" << option << " of '" << command << "' is not in man/" << c.page;
    }
    offered.insert(options.begin(), options.end());
  }
  for (const std::string& option : documented) {
    EXPECT_TRUE(offered.count(option) != 0)
        << "man/" << c.page << " describes --" << option << ", which no --help lists";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Docs, OptionsInManPage,
    ::testing::Values(
        ManPageCase{"trainmover-launch.1",
                    {"launcher/trainmover-launch", "launcher/trainmover-launch --slurm-task"}},
        ManPageCase{
            "trainmover-bench.1",
            {"tools/bench/trainmover-bench allreduce", "tools/bench/trainmover-bench switch",
             "tools/bench/trainmover-bench record", "tools/bench/trainmover-bench recovery",
             "tools/bench/trainmover-bench slurm-recovery"}},
        ManPageCase{"trainmover-sim.1", {"tools/sim/trainmover-sim"}},
        ManPageCase{"trainmover-gpt.1", {"examples/gpt/trainmover-gpt"}},
        ManPageCase{"trainmover-ctl.1", {"tools/ctl/trainmover-ctl"}},
        ManPageCase{"trainmover-trace.1",
                    {"tools/trace/trainmover-trace show", "tools/trace/trainmover-trace check",
                     "tools/trace/trainmover-trace diff"}}),
    [](const ::testing::TestParamInfo<ManPageCase>& param) {
      std::string name = param.param.page;
      return name.substr(std::string("trainmover-").size(), name.find('.') - 11);
    });

}  // namespace
}  // namespace trainmover
