#include "tool_run.h"

#include <gtest/gtest.h>

#include "launcher/local_job.h"

namespace trainmover::bench {

ToolRun bench(const std::string& args, double timeout_s) {
  return run_program(TM_BENCH_PATH, args, timeout_s);
}

ToolRun run_program(const std::string& path, const std::string& args, double timeout_s) {
  launcher::LocalJobOptions options;
  options.argv = {"/bin/sh", "-c",
                  std::string("err=$(mktemp); \"") + path + "\" " + args +
                      " 2>$err; s=$?; echo '#stderr'; cat $err; rm -f $err; exit $s"};
  options.timeout = seconds(timeout_s);
  options.capture_stdout = true;
  auto result = launcher::run_local_job(options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return {};
  const std::string& text = result->ranks[0].output;
  ToolRun run{result->ranks[0].shell_status(), text.substr(0, text.find("#stderr\n")), text};
  return run;
}

void expect_usage_errors(const std::vector<UsageCase>& cases) {
  for (const UsageCase& c : cases) {
    ToolRun run = bench(c.args);
    EXPECT_EQ(run.status, 2) << c.args << "\n" << run.all;
    EXPECT_NE(run.all.find(c.named), std::string::npos) << c.args << "\n" << run.all;
    EXPECT_TRUE(run.out.empty()) << c.args << ": errors go to stderr";
  }
}

void expect_help_mentions(const std::string& args, const std::vector<std::string>& words) {
  ToolRun run = bench(args + " --help");
  EXPECT_EQ(run.status, 0) << run.all;
  for (const std::string& word : words) {
    EXPECT_NE(run.out.find(word), std::string::npos) << args << " --help: " << word;
  }
}

std::vector<Json> json_lines(const std::string& out) {
  std::vector<Json> objects;
  for (std::string_view line : split(out, '\n')) {
    if (line.empty()) continue;
    auto object = parse_json_object(line);
    EXPECT_TRUE(object.ok()) << object.status().message();
    if (object.ok()) objects.push_back(object.value());
  }
  return objects;
}

}  // namespace trainmover::bench
