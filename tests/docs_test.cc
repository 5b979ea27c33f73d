// The documentation cannot drift from the code: every environment variable
// the configuration table reads is documented in trainmover(7), and every
// function of the C API in trainmover(3).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace
}  // namespace trainmover
