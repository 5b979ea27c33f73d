// Tests of the communicator configuration: CommConfig::validate() and the
// TRAINMOVER_* environment variables read by init_config().
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "comm/config.h"
#include "config.h"  // HAVE_PMIX

namespace trainmover {
namespace {

CommConfig valid_config() {
  CommConfig c;
  c.slot = 1;
  c.nslots = 4;
  c.job_id = 9;
  c.job_secret = std::string(32, 'c');
  c.store_address = "127.0.0.1:29500";
  return c;
}

struct BadField {
  const char* field;
  const char* variable;
  std::function<void(CommConfig&)> spoil;
};

TEST(CommConfig, DefaultsPlusRequiredFieldsAreValid) {
  Status st = valid_config().validate();
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(CommConfig, EachBadFieldIsNamedWithItsVariable) {
  const BadField cases[] = {
      {"nslots", "TRAINMOVER_NSLOTS", [](CommConfig& c) { c.nslots = 0; }},
      {"slot", "TRAINMOVER_SLOT", [](CommConfig& c) { c.slot = 4; }},
      {"slot", "TRAINMOVER_SLOT", [](CommConfig& c) { c.slot = -1; }},
      {"job_secret", "TRAINMOVER_JOB_SECRET", [](CommConfig& c) { c.job_secret.clear(); }},
      {"job_secret", "TRAINMOVER_JOB_SECRET", [](CommConfig& c) { c.job_secret = "abcd"; }},
      {"job_secret", "TRAINMOVER_JOB_SECRET",
       [](CommConfig& c) { c.job_secret = std::string(32, 'z'); }},
      {"store_address", "TRAINMOVER_STORE", [](CommConfig& c) { c.store_address.clear(); }},
      {"store_address", "TRAINMOVER_STORE",
       [](CommConfig& c) { c.store_address = "redis://10.0.0.1:6379"; }},
      {"store_address", "TRAINMOVER_STORE",
       [](CommConfig& c) { c.store_address = "tcp://nohost"; }},
      {"store_address", "TRAINMOVER_STORE", [](CommConfig& c) { c.store_address = "pmix;tcp"; }},
      {"transport", "TRAINMOVER_TRANSPORT", [](CommConfig& c) { c.transport = "carrier-pigeon"; }},
      {"name", "TRAINMOVER_COMM_NAME", [](CommConfig& c) { c.name.clear(); }},
      {"name", "TRAINMOVER_COMM_NAME", [](CommConfig& c) { c.name = std::string(129, 'n'); }},
      {"timeout_s", "TRAINMOVER_TIMEOUT", [](CommConfig& c) { c.timeout_s = 0; }},
      {"timeout_s", "TRAINMOVER_TIMEOUT", [](CommConfig& c) { c.timeout_s = std::nan(""); }},
      {"connect_timeout_s", "TRAINMOVER_CONNECT_TIMEOUT",
       [](CommConfig& c) { c.connect_timeout_s = -1; }},
      {"heartbeat_interval_s", "TRAINMOVER_HEARTBEAT_INTERVAL",
       [](CommConfig& c) { c.heartbeat_interval_s = 0; }},
      {"heartbeat_interval_s", "TRAINMOVER_HEARTBEAT_INTERVAL",
       [](CommConfig& c) { c.heartbeat_interval_s = 61; }},
      {"segment_bytes", "TRAINMOVER_SEGMENT_BYTES", [](CommConfig& c) { c.segment_bytes = 63; }},
      {"segment_bytes", "TRAINMOVER_SEGMENT_BYTES",
       [](CommConfig& c) { c.segment_bytes = (64 << 20) + 1; }},
      {"socket_buffer_bytes", "TRAINMOVER_SOCKET_BUFFER",
       [](CommConfig& c) { c.socket_buffer_bytes = (1u << 30) + 1; }},
      {"staging_buffers", "TRAINMOVER_STAGING_BUFFERS",
       [](CommConfig& c) { c.staging_buffers = 1; }},
      {"staging_buffers", "TRAINMOVER_STAGING_BUFFERS",
       [](CommConfig& c) { c.staging_buffers = 1025; }},
  };
  for (const BadField& bad : cases) {
    CommConfig c = valid_config();
    bad.spoil(c);
    Status st = c.validate();
    ASSERT_FALSE(st.ok()) << bad.field << " was accepted";
    EXPECT_EQ(st.code(), TM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(st.message().find(bad.field), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(bad.variable), std::string::npos) << st.message();
  }
}

TEST(CommConfig, BoundaryValuesAreAccepted) {
  CommConfig c = valid_config();
  c.segment_bytes = 64;
  c.staging_buffers = 2;
  c.heartbeat_interval_s = 60;
  c.name = std::string(128, 'n');
  c.slot = 3;
  EXPECT_TRUE(c.validate().ok()) << c.validate().message();
}

// Sets variables for one test and removes them afterwards.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (const std::string& name : names_) unsetenv(name.c_str());
  }
  void set(const std::string& name, const std::string& value) {
    setenv(name.c_str(), value.c_str(), 1);
    names_.push_back(name);
  }

 private:
  std::vector<std::string> names_;
};

TEST(InitConfig, DefaultsWithoutEnvironment) {
  const CommConfig defaults;
  tm_config_t c;
  ASSERT_TRUE(init_config(c).ok());
  EXPECT_EQ(c.struct_size, sizeof(tm_config_t));
  EXPECT_STREQ(c.name, "world");
  EXPECT_EQ(c.slot, defaults.slot);
  EXPECT_EQ(c.nslots, defaults.nslots);
  EXPECT_EQ(c.timeout_s, defaults.timeout_s);
  EXPECT_EQ(c.connect_timeout_s, defaults.connect_timeout_s);
  EXPECT_EQ(c.heartbeat_interval_s, defaults.heartbeat_interval_s);
  EXPECT_EQ(c.segment_bytes, defaults.segment_bytes);
  EXPECT_EQ(c.socket_buffer_bytes, defaults.socket_buffer_bytes);
  EXPECT_EQ(c.staging_buffers, defaults.staging_buffers);
  EXPECT_EQ(c.job_secret, nullptr);
  EXPECT_EQ(c.store_address, nullptr);
}

TEST(InitConfig, ReadsEveryVariable) {
  ScopedEnv env;
  env.set("TRAINMOVER_SLOT", "2");
  env.set("TRAINMOVER_NSLOTS", "8");
  env.set("TRAINMOVER_JOB_ID", "123456789012");
  env.set("TRAINMOVER_JOB_SECRET", std::string(32, 'f'));
  env.set("TRAINMOVER_STORE", "10.1.2.3:29500");
  env.set("TRAINMOVER_LISTEN_ADDR", "10.1.2.4");
  env.set("TRAINMOVER_SOCKET_IFNAME", "^docker,lo");
  env.set("TRAINMOVER_TRANSPORT", "tcp");
  env.set("TRAINMOVER_COMM_NAME", "dp");
  env.set("TRAINMOVER_TIMEOUT", "250ms");
  env.set("TRAINMOVER_CONNECT_TIMEOUT", "2m");
  env.set("TRAINMOVER_HEARTBEAT_INTERVAL", "0.25");
  env.set("TRAINMOVER_SEGMENT_BYTES", "1M");
  env.set("TRAINMOVER_SOCKET_BUFFER", "4M");
  env.set("TRAINMOVER_STAGING_BUFFERS", "6");
  env.set("TRAINMOVER_ALGO", "ring");
  env.set("TRAINMOVER_ALGO_THRESHOLDS", "doubling:128K,broadcast:doubling:0");
  tm_config_t c;
  Status st = init_config(c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.slot, 2);
  EXPECT_EQ(c.nslots, 8);
  EXPECT_EQ(c.job_id, 123456789012u);
  EXPECT_EQ(std::string(c.job_secret), std::string(32, 'f'));
  EXPECT_STREQ(c.store_address, "10.1.2.3:29500");
  EXPECT_STREQ(c.listen_address, "10.1.2.4");
  EXPECT_STREQ(c.listen_interface, "^docker,lo");
  EXPECT_STREQ(c.transport, "tcp");
  EXPECT_STREQ(c.name, "dp");
  EXPECT_DOUBLE_EQ(c.timeout_s, 0.25);
  EXPECT_DOUBLE_EQ(c.connect_timeout_s, 120.0);
  EXPECT_DOUBLE_EQ(c.heartbeat_interval_s, 0.25);
  EXPECT_EQ(c.segment_bytes, 1u << 20);
  EXPECT_EQ(c.socket_buffer_bytes, 4u << 20);
  EXPECT_EQ(c.staging_buffers, 6);
  auto cc = CommConfig::from_c(c);
  ASSERT_TRUE(cc.ok()) << cc.status().message();
  EXPECT_EQ(cc->name, "dp");
  EXPECT_EQ(cc->transport, "tcp");
  EXPECT_EQ(cc->algorithms.force, AlgorithmPolicy::Force::kRing);
  EXPECT_EQ(cc->algorithms.doubling_max_bytes,
            (DoublingThresholds{128u << 10, 128u << 10, 128u << 10, 0}));
}

// Unset, the policy is auto with the built-in threshold; a bad value in a
// caller's struct is refused naming the field and its variable.
TEST(CommConfig, AlgorithmPolicy) {
  tm_config_t c = TM_CONFIG_INITIALIZER;
  ASSERT_TRUE(init_config(c).ok());
  auto policy = algorithm_policy(c);
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->force, AlgorithmPolicy::Force::kNone);
  EXPECT_EQ(policy->doubling_max_bytes, AlgorithmPolicy::kDefaultDoublingMaxBytes);
  c.algorithm = "tree";
  EXPECT_NE(algorithm_policy(c).status().message().find("TRAINMOVER_ALGO"), std::string::npos);
  c.algorithm = "doubling";
  c.algorithm_thresholds = "ring:5";
  EXPECT_NE(algorithm_policy(c).status().message().find("TRAINMOVER_ALGO_THRESHOLDS"),
            std::string::npos);
}

// Every form of TRAINMOVER_STORE that the store factory takes is valid.
TEST(CommConfig, StoreForms) {
  for (const char* store :
       {"127.0.0.1:29500", "tcp://127.0.0.1:29500", "tcp://[::1]:29500", "tcp://node7:29500"}) {
    CommConfig c = valid_config();
    c.store_address = store;
    EXPECT_TRUE(c.validate().ok()) << store << ": " << c.validate().message();
  }
}

// Under PMIx the slot and the size may both be left to the PMIx server, but
// not only one of them; over TCP neither may.
TEST(CommConfig, IdentityFromPmixOnlyWhenBothUnset) {
  CommConfig c = valid_config();
  c.slot = -1;
  c.nslots = 0;
  EXPECT_FALSE(c.validate().ok());
#if HAVE_PMIX
  for (const char* store : {"pmix", "pmix,tcp://127.0.0.1:29500"}) {
    c.store_address = store;
    EXPECT_TRUE(c.validate().ok()) << store << ": " << c.validate().message();
  }
  c.nslots = 4;
  EXPECT_NE(c.validate().message().find("TRAINMOVER_SLOT"), std::string::npos);
#else
  c.store_address = "pmix";
  EXPECT_NE(c.validate().message().find("no PMIx"), std::string::npos) << c.validate().message();
#endif
}

TEST(InitConfig, MalformedVariablesAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"TRAINMOVER_TIMEOUT", "soon"},
      {"TRAINMOVER_TIMEOUT", "5h"},
      {"TRAINMOVER_SLOT", "-1"},
      {"TRAINMOVER_SLOT", "two"},
      {"TRAINMOVER_NSLOTS", "0"},
      {"TRAINMOVER_SEGMENT_BYTES", "12X"},
      {"TRAINMOVER_JOB_ID", "12ab"},
      {"TRAINMOVER_STAGING_BUFFERS", "many"},
      {"TRAINMOVER_ALGO", "tree"},
      {"TRAINMOVER_ALGO_THRESHOLDS", "doubling:lots"},
      {"TRAINMOVER_LOG", "verbose"},
      {"TRAINMOVER_HEARTBEAT_INTERVAL", ""},  // empty means unset: accepted
  };
  for (const auto& [name, value] : cases) {
    ScopedEnv env;
    env.set(name, value);
    tm_config_t c;
    Status st = init_config(c);
    if (std::string(value).empty()) {
      EXPECT_TRUE(st.ok()) << name << "='' " << st.message();
      continue;
    }
    ASSERT_FALSE(st.ok()) << name << "=" << value << " was accepted";
    EXPECT_EQ(st.code(), TM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(value), std::string::npos) << st.message();
  }
}

// A negative duration is a number out of range, and the error says the range.
TEST(InitConfig, NegativeSecondsAreOutOfRangeNotNaN) {
  for (const char* name :
       {"TRAINMOVER_TIMEOUT", "TRAINMOVER_CONNECT_TIMEOUT", "TRAINMOVER_HEARTBEAT_INTERVAL"}) {
    ScopedEnv env;
    env.set(name, "-1");
    tm_config_t c;
    Status st = init_config(c);
    ASSERT_FALSE(st.ok()) << name;
    EXPECT_EQ(st.message().find("not a number"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("out of range (0, "), std::string::npos) << st.message();
  }
}

TEST(InitConfig, EveryLogLevelIsAccepted) {
  for (const char* level : {"error", "warn", "info", "debug"}) {
    ScopedEnv env;
    env.set("TRAINMOVER_LOG", level);
    tm_config_t c;
    EXPECT_TRUE(init_config(c).ok()) << level;
  }
}

TEST(CommConfig, FromCRejectsWrongStructSize) {
  tm_config_t c;
  ASSERT_TRUE(init_config(c).ok());
  c.struct_size = 8;
  auto r = CommConfig::from_c(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("struct_size"), std::string::npos);
}

TEST(EnvironmentHelp, ListsEveryVariable) {
  std::string help = environment_help();
  for (const char* name : {"TRAINMOVER_SLOT", "TRAINMOVER_TIMEOUT", "TRAINMOVER_SEGMENT_BYTES",
                           "TRAINMOVER_STAGING_BUFFERS", "TRAINMOVER_LOG"}) {
    EXPECT_NE(help.find(name), std::string::npos) << name;
  }
}

// Allgather and broadcast over TCP cut calls into 4 x segment_bytes, within
// a link's frame limit (max(segment_bytes, 4 MiB)); over any other
// transport into segment_bytes, which shared memory runs faster with.
TEST(Config, CopySegmentIsFourSegmentsOverTcpWithinTheFrameLimit) {
  CommConfig c;
  EXPECT_EQ(copy_segment_bytes(c), 512u << 10);  // auto: may be shared memory
  c.transport = "shm";
  EXPECT_EQ(copy_segment_bytes(c), 512u << 10);
  c.transport = "tcp";
  EXPECT_EQ(copy_segment_bytes(c), 2u << 20);
  c.segment_bytes = 64;
  EXPECT_EQ(copy_segment_bytes(c), 256u);  // still many segments: the tests' pipelining
  c.segment_bytes = 2u << 20;
  EXPECT_EQ(copy_segment_bytes(c), kMaxP2PFrameBytes);
  c.segment_bytes = 8u << 20;
  EXPECT_EQ(copy_segment_bytes(c), 8u << 20);  // the frame limit is the segment itself
}

// A broadcast keeps 8 segments a call where it can, between segment_bytes
// and copy_segment_bytes.
TEST(Config, BroadcastSegmentKeepsEightSegmentsACall) {
  CommConfig c;
  c.transport = "tcp";
  EXPECT_EQ(broadcast_segment_bytes(c, 1u << 20), 512u << 10);
  EXPECT_EQ(broadcast_segment_bytes(c, 4u << 20), 512u << 10);
  EXPECT_EQ(broadcast_segment_bytes(c, 8u << 20), 1u << 20);
  EXPECT_EQ(broadcast_segment_bytes(c, 16u << 20), 2u << 20);
  EXPECT_EQ(broadcast_segment_bytes(c, 64u << 20), 2u << 20);
  c.transport = "auto";
  EXPECT_EQ(broadcast_segment_bytes(c, 64u << 20), 512u << 10);
}

}  // namespace
}  // namespace trainmover
