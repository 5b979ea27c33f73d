// Unit tests of the rendezvous store's wire format (store_protocol.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/bytes.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace trainmover::rendezvous {
namespace {

TEST(StoreProtocol, RequestsRoundTrip) {
  StoreRequest set{StoreOp::kSet, "addr/3", std::string("\0binary\xff", 8), 0, 0};
  StoreRequest get{StoreOp::kGet, "addr/4", "", 0, 1234};
  StoreRequest add{StoreOp::kAdd, "counter", "", -17, 0};
  for (const StoreRequest& req : {set, get, add}) {
    auto r = parse_request(encode_request(req));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->op, req.op);
    EXPECT_EQ(r->key, req.key);
    EXPECT_EQ(r->value, req.value);
    EXPECT_EQ(r->delta, req.delta);
    EXPECT_EQ(r->timeout_ms, req.timeout_ms);
  }
}

TEST(StoreProtocol, ResponsesRoundTrip) {
  for (tm_result_t code : {TM_SUCCESS, TM_ERROR_TIMEOUT, TM_ERROR_NOT_FOUND}) {
    auto r = parse_response(encode_response({code, "body"}));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->code, code);
    EXPECT_EQ(r->body, "body");
  }
}

TEST(StoreProtocol, UnknownOperationIsNamed) {
  for (uint8_t op : {0, 5, 255}) {
    auto bytes = encode_request({StoreOp::kGet, "k", "", 0, 5});
    bytes[0] = std::byte{op};
    auto r = parse_request(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), TM_ERROR_PROTOCOL);
    EXPECT_NE(r.status().message().find("operation " + std::to_string(op)), std::string::npos)
        << r.status().message();
  }
}

TEST(StoreProtocol, OversizedKeyAndValueAreRejected) {
  EXPECT_TRUE(
      parse_request(encode_request({StoreOp::kGet, std::string(kMaxKeyBytes, 'k'), "", 0, 0}))
          .ok());
  EXPECT_FALSE(
      parse_request(encode_request({StoreOp::kGet, std::string(kMaxKeyBytes + 1, 'k'), "", 0, 0}))
          .ok());
  EXPECT_TRUE(
      parse_request(encode_request({StoreOp::kSet, "k", std::string(kMaxValueBytes, 'v'), 0, 0}))
          .ok());
  EXPECT_FALSE(parse_request(
                   encode_request({StoreOp::kSet, "k", std::string(kMaxValueBytes + 1, 'v'), 0, 0}))
                   .ok());
  EXPECT_FALSE(
      parse_response(encode_response({TM_SUCCESS, std::string(kMaxReplyBody + 1, 'v')})).ok());
}

TEST(StoreProtocol, EmptyKeyIsRejected) {
  auto r = parse_request(encode_request({StoreOp::kSet, "", "v", 0, 0}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("empty key"), std::string::npos);
}

TEST(StoreProtocol, TrailingBytesAreRejected) {
  for (StoreOp op : {StoreOp::kSet, StoreOp::kGet, StoreOp::kAdd}) {
    auto bytes = encode_request({op, "key", "value", 1, 2});
    bytes.push_back(std::byte{0});
    EXPECT_FALSE(parse_request(bytes).ok()) << static_cast<int>(op);
  }
  auto resp = encode_response({TM_SUCCESS, "x"});
  resp.push_back(std::byte{0});
  EXPECT_FALSE(parse_response(resp).ok());
}

TEST(StoreProtocol, EveryTruncationIsRejected) {
  for (StoreOp op : {StoreOp::kSet, StoreOp::kGet, StoreOp::kAdd}) {
    auto bytes = encode_request({op, "key", "value", 1, 2});
    for (size_t len = 0; len < bytes.size(); ++len) {
      std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
      auto r = parse_request(cut);
      ASSERT_FALSE(r.ok()) << "op " << static_cast<int>(op) << " len " << len;
      EXPECT_EQ(r.status().code(), TM_ERROR_PROTOCOL);
    }
  }
  auto resp = encode_response({TM_SUCCESS, "value"});
  for (size_t len = 0; len < resp.size(); ++len) {
    std::vector<std::byte> cut(resp.begin(), resp.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_FALSE(parse_response(cut).ok()) << len;
  }
}

TEST(StoreProtocol, UnknownResponseCodeIsRejected) {
  auto bytes = encode_response({TM_SUCCESS, ""});
  bytes[0] = std::byte{10};
  auto r = parse_response(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown code 10"), std::string::npos);
}

TEST(StoreProtocol, BlobLengthBeyondPayloadIsRejected) {
  std::vector<std::byte> bytes;
  ByteWriter w(bytes);
  w.u8(static_cast<uint8_t>(StoreOp::kSet));
  w.blob("k");
  w.u32(100);  // value claims 100 bytes, 3 follow
  w.bytes(as_bytes("abc"));
  EXPECT_FALSE(parse_request(bytes).ok());
}

TEST(StoreProtocol, CompareSetRequestsRoundTrip) {
  StoreRequest if_absent{StoreOp::kCompareSet, "view/1", "new", 0, 0, std::nullopt};
  StoreRequest if_equal{StoreOp::kCompareSet, "view/1", "new", 0, 0, std::string("\0old", 4)};
  StoreRequest to_empty{StoreOp::kCompareSet, "view/1", "", 0, 0, std::string()};
  for (const StoreRequest& req : {if_absent, if_equal, to_empty}) {
    auto r = parse_request(encode_request(req));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->op, StoreOp::kCompareSet);
    EXPECT_EQ(r->key, req.key);
    EXPECT_EQ(r->value, req.value);
    EXPECT_EQ(r->expected, req.expected);
  }
}

TEST(StoreProtocol, CompareSetBadFlagAndTruncationsAreRejected) {
  auto bytes = encode_request({StoreOp::kCompareSet, "k", "v", 0, 0, std::string("e")});
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_FALSE(parse_request(cut).ok()) << len;
  }
  auto trailing = bytes;
  trailing.push_back(std::byte{0});
  EXPECT_FALSE(parse_request(trailing).ok());
  auto flag = bytes;
  flag[1 + 4 + 1] = std::byte{2};  // after op and the key blob
  auto r = parse_request(flag);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected-value flag 2"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(
      parse_request(encode_request({StoreOp::kCompareSet, "k", std::string(kMaxValueBytes + 1, 'v'),
                                    0, 0, std::nullopt}))
          .ok());
}

TEST(StoreProtocol, CompareSetRepliesRoundTrip) {
  using Reply = Store::CompareSetResult;
  for (const Reply& reply : {Reply{true, "mine"}, Reply{false, "theirs"}, Reply{false, {}},
                             Reply{true, std::string()}}) {
    auto r = parse_compare_set_reply(encode_compare_set_reply(reply));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->won, reply.won);
    EXPECT_EQ(r->current, reply.current);
  }
  std::string body = encode_compare_set_reply({false, "theirs"});
  for (size_t len = 0; len < body.size(); ++len)
    EXPECT_FALSE(parse_compare_set_reply(body.substr(0, len)).ok()) << len;
  EXPECT_FALSE(parse_compare_set_reply(body + "x").ok());
  EXPECT_FALSE(parse_compare_set_reply(std::string("\1\0", 2)).ok());  // won, but no value
  EXPECT_FALSE(parse_compare_set_reply(std::string("\2\0", 2)).ok());
}

}  // namespace
}  // namespace trainmover::rendezvous
