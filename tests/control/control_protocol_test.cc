#include "control/control_protocol.h"

#include <gtest/gtest.h>

namespace trainmover::control {
namespace {

std::string error_of(std::string_view payload) {
  auto m = parse_payload(payload);
  EXPECT_FALSE(m.ok()) << payload;
  EXPECT_EQ(m.status().code(), TM_ERROR_PROTOCOL);
  return m.status().message();
}

TEST(ControlProtocol, EveryMessageRoundTrips) {
  Order order;
  order.order_id = 7;
  order.kind = OrderKind::kPrepare;
  order.epoch = 4;
  order.slot = 3;
  order.role = StageRole::kMiddle;
  order.view = {{"epoch", 4}, {"slots", nlohmann::json::array({{{"slot", 0}}})}};
  WarmupProgress warm;
  warm.state = WarmupState::kReady;
  warm.ready_roles = {StageRole::kFirst, StageRole::kLast};
  warm.warm_roles = {StageRole::kLast};
  warm.error = "first: cold (no trace)";
  std::vector<Message> all = {
      Register{PeerKind::kStandby, -1, {99, 1234, "node-1"}, 7},
      Welcome{3, 2, 0.2, 1.0},
      Heartbeat{41},
      FailureReport{5, "peer closed the link"},
      ExitReport{4321, -1, 9, "n2"},
      warm,
      StatusRequest{},
      StatusReply{{{"epoch", 1}}},
      MigrateRequest{5},
      Subscribe{true, true},
      EventMessage{{{"event", "slot_failed"}, {"slot", 5}}},
      EventsEnd{},
      Reply{false, "no such slot"},
      order,
      Ack{7, true, "", 40, 12345},
      Goodbye{"done"},
      FirstStep{20, 0.05, 0.04, 123, true},
      TaskLost{3, "PROC-ABORTED"},
  };
  ASSERT_EQ(all.size(), std::variant_size_v<Message>);
  for (const Message& m : all) {
    std::string payload = encode_payload(m);
    auto parsed = parse_payload(payload);
    ASSERT_TRUE(parsed.ok()) << payload << ": " << parsed.status().message();
    EXPECT_EQ(parsed->index(), m.index());
    EXPECT_EQ(encode_payload(parsed.value()), payload);
  }
  // The begun flag (a lifeline's report) survives the trip too.
  auto begun = parse_payload(encode_payload(ExitReport{4322, -1, 0, "n3", true}));
  ASSERT_TRUE(begun.ok());
  EXPECT_TRUE(std::get<ExitReport>(begun.value()).begun);
  auto ended = parse_payload(encode_payload(ExitReport{1, 0, 0}));
  ASSERT_TRUE(ended.ok());
  EXPECT_FALSE(std::get<ExitReport>(ended.value()).begun);
}

TEST(ControlProtocol, FramesCarryMagicAndLength) {
  auto frame = encode_frame(Heartbeat{1});
  auto length = parse_frame_header(std::span(frame).first(kControlHeaderSize));
  ASSERT_TRUE(length.ok());
  EXPECT_EQ(length.value() + kControlHeaderSize, frame.size());
  frame[0] = std::byte{'X'};
  EXPECT_FALSE(parse_frame_header(std::span(frame).first(kControlHeaderSize)).ok());
  std::vector<std::byte> huge = {std::byte{'T'}, std::byte{'M'}, std::byte{'C'},  std::byte{'1'},
                                 std::byte{0},   std::byte{0},   std::byte{0x20}, std::byte{0}};
  EXPECT_NE(parse_frame_header(huge).status().message().find("exceeds"), std::string::npos);
}

TEST(ControlProtocol, ErrorsNameWhatWasWrong) {
  EXPECT_NE(error_of("not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"slot":1})").find("'type'"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"teleport"})").find("unknown message type 'teleport'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"migrate"})").find("'migrate' lacks field 'slot'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"migrate","slot":"five"})").find("field 'slot'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"migrate","slot":-4})").find("[0, 65536]"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"migrate","slot":1,"force":true})").find("unknown field 'force'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"heartbeat","step":-1})").find("unsigned"), std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"type":"warmup","state":"cooking","warming":"none","ready_roles":[],"error":""})")
          .find("one of starting, warming, ready, failed"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"type":"register","kind":"active","slot":1,"process":{"pid":1}})")
                .find("field 'process'"),
            std::string::npos);
  const std::string process = R"("process":{"pid":1,"host":"h","instance":5})";
  EXPECT_NE(error_of(R"({"type":"register","kind":"active","slot":1,"task":-3,)" + process + "}")
                .find("field 'task'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"task_lost","task":"one","detail":""})").find("field 'task'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"task_lost","task":1})").find("lacks field 'detail'"),
            std::string::npos);
}

TEST(ControlProtocol, DeepNestingIsRefusedBeforeParsing) {
  std::string deep = R"({"type":"status_reply","status":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  EXPECT_NE(error_of(deep).find("nests deeper"), std::string::npos);
  // Brackets inside strings do not count.
  std::string quoted = R"({"type":"reply","ok":false,"error":")" + std::string(100, '[') + R"("})";
  EXPECT_TRUE(parse_payload(quoted).ok());
}

}  // namespace
}  // namespace trainmover::control
