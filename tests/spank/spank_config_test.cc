// The SPANK plugin's settings parser: options, plugstack.conf arguments,
// bounds, and that a refused value leaves the settings unchanged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spank/spank_config.h"

namespace {

struct Config : ::testing::Test {
  tm_spank_config config{};
  char err[256] = {};
  void SetUp() override { tm_spank_config_defaults(&config, "/opt/tm/bin/trainmover-launch"); }
  int option(const char* name, const char* value) {
    return tm_spank_config_set_option(&config, name, value, err, sizeof err);
  }
  int args(std::vector<std::string> list) {
    std::vector<char*> argv;
    for (auto& a : list) argv.push_back(a.data());
    return tm_spank_config_parse_args(&config, static_cast<int>(argv.size()), argv.data(), err,
                                      sizeof err);
  }
};

TEST_F(Config, DefaultsAreOffWithOneSecondHeartbeat) {
  EXPECT_EQ(config.enabled, 0);
  EXPECT_EQ(config.standby, 0);
  EXPECT_EQ(config.record_steps, 2);
  EXPECT_DOUBLE_EQ(config.heartbeat_s, 1.0);
  EXPECT_STREQ(config.launcher, "/opt/tm/bin/trainmover-launch");
}

TEST_F(Config, SrunSideKeysAreParsedAndBounded) {
  EXPECT_DOUBLE_EQ(config.poll_s, 5.0);
  ASSERT_EQ(args({"srun_lib=/opt/tm/lib/libtrainmover-srun.so", "bind=10.0.0.7", "poll=200ms"}), 0)
      << err;
  EXPECT_STREQ(config.srun_lib, "/opt/tm/lib/libtrainmover-srun.so");
  EXPECT_STREQ(config.bind, "10.0.0.7");
  EXPECT_DOUBLE_EQ(config.poll_s, 0.2);
  EXPECT_EQ(config.enabled, 0);  // site settings alone do not turn the plugin on
  ASSERT_NE(args({"poll=10ms"}), 0);
  EXPECT_STREQ(err, "plugstack.conf poll: 10ms is out of range (0.05 s to 3600 s)");
  EXPECT_DOUBLE_EQ(config.poll_s, 0.2);  // a refused value leaves the setting as it was
  ASSERT_NE(args({"bind="}), 0);
  EXPECT_STREQ(err, "plugstack.conf bind: needs an address");
}

TEST_F(Config, EveryOptionEnablesThePlugin) {
  for (auto [name, value] :
       std::vector<std::pair<const char*, const char*>>{{"", nullptr},
                                                        {"standby", "2"},
                                                        {"record-steps", "3"},
                                                        {"trace-dir", "/shared/t"},
                                                        {"events", "/shared/e.jsonl"},
                                                        {"heartbeat", "250ms"}}) {
    SetUp();
    ASSERT_EQ(option(name, value), 0) << name << ": " << err;
    EXPECT_EQ(config.enabled, 1) << name;
  }
}

TEST_F(Config, ValuesAreParsed) {
  ASSERT_EQ(option("standby", "2"), 0);
  ASSERT_EQ(option("record-steps", "0"), 0);
  ASSERT_EQ(option("heartbeat", "1.5m"), 0) << err;
  ASSERT_EQ(option("trace-dir", "/shared/traces"), 0);
  EXPECT_EQ(config.standby, 2);
  EXPECT_EQ(config.record_steps, 0);
  EXPECT_DOUBLE_EQ(config.heartbeat_s, 90.0);
  EXPECT_STREQ(config.trace_dir, "/shared/traces");
  ASSERT_EQ(option("heartbeat", "250ms"), 0);
  EXPECT_DOUBLE_EQ(config.heartbeat_s, 0.25);
  ASSERT_EQ(option("heartbeat", "2s"), 0);
  EXPECT_DOUBLE_EQ(config.heartbeat_s, 2.0);
}

TEST_F(Config, BadValuesAreRefusedNamingTheOptionAndChangeNothing) {
  struct Bad {
    const char* name;
    const char* value;
    const char* says;
  };
  const std::string long_path(5000, 'x');
  for (const Bad& bad : std::vector<Bad>{
           {"standby", "abc", "--trainmover-standby: 'abc' is not a whole number"},
           {"standby", "-1", "--trainmover-standby: -1 is out of range (0 to 4096)"},
           {"standby", "99999999999999999999", "out of range"},
           {"standby", "", "not a whole number"},
           {"standby", nullptr, "not a whole number"},
           {"record-steps", "10001", "--trainmover-record-steps: 10001 is out of range"},
           {"heartbeat", "0", "--trainmover-heartbeat: 0 is out of range"},
           {"heartbeat", "1e300", "out of range"},
           {"heartbeat", "nan", "out of range"},
           {"heartbeat", "5h", "unknown unit"},
           {"heartbeat", "soon", "is not a duration"},
           {"trace-dir", "", "--trainmover-trace-dir: needs a path"},
           {"events", long_path.c_str(), "path longer than"},
           {"bogus", "1", "--trainmover-bogus: unknown setting"}}) {
    SetUp();
    EXPECT_EQ(option(bad.name, bad.value), -1) << bad.name;
    EXPECT_NE(std::string(err).find(bad.says), std::string::npos) << err;
    EXPECT_EQ(config.enabled, 0) << bad.name;
    EXPECT_EQ(config.standby, 0);
    EXPECT_DOUBLE_EQ(config.heartbeat_s, 1.0);
  }
}

TEST_F(Config, PlugstackArgumentsSetSiteDefaults) {
  ASSERT_EQ(args({"enabled=1", "standby=1", "record_steps=4", "heartbeat=500ms",
                  "trace_dir=/shared/tr", "events=/var/log/tm.jsonl", "launcher=/usr/bin/tml"}),
            0)
      << err;
  EXPECT_EQ(config.enabled, 1);
  EXPECT_EQ(config.standby, 1);
  EXPECT_EQ(config.record_steps, 4);
  EXPECT_DOUBLE_EQ(config.heartbeat_s, 0.5);
  EXPECT_STREQ(config.trace_dir, "/shared/tr");
  EXPECT_STREQ(config.events, "/var/log/tm.jsonl");
  EXPECT_STREQ(config.launcher, "/usr/bin/tml");
}

TEST_F(Config, PlugstackUnknownKeysAndBadValuesAreErrors) {
  EXPECT_EQ(args({"standby=1", "standbys=2"}), -1);
  EXPECT_NE(std::string(err).find("plugstack.conf key 'standbys' is unknown"), std::string::npos)
      << err;
  EXPECT_EQ(args({"record-steps=2"}), -1);
  EXPECT_NE(std::string(err).find("'record-steps' is unknown"), std::string::npos) << err;
  EXPECT_EQ(args({"standby"}), -1);
  EXPECT_NE(std::string(err).find("is not key=value"), std::string::npos) << err;
  EXPECT_EQ(args({"=3"}), -1);
  EXPECT_EQ(args({"enabled=maybe"}), -1);
  EXPECT_NE(std::string(err).find("plugstack.conf enabled: 'maybe' is not 0, 1"), std::string::npos)
      << err;
  EXPECT_EQ(args({"heartbeat=-1"}), -1);
  EXPECT_NE(std::string(err).find("plugstack.conf heartbeat: -1 is out of range"),
            std::string::npos)
      << err;
}

TEST_F(Config, StandbysMustLeaveAnActiveNode) {
  ASSERT_EQ(option("standby", "2"), 0);
  EXPECT_EQ(tm_spank_config_check_nodes(&config, 3, err, sizeof err), 0);
  EXPECT_EQ(tm_spank_config_check_nodes(&config, 2, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("leaves no active node in a step of 2 nodes"), std::string::npos)
      << err;
  config.enabled = 0;
  EXPECT_EQ(tm_spank_config_check_nodes(&config, 1, err, sizeof err), 0);
}

}  // namespace
