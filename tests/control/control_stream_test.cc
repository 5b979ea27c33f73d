// ControlStream's reader: one recv takes every frame that has arrived, so
// frames arrive split anywhere, several in one read, or larger than its
// read chunk; each must come out whole, once, in order, and a bad payload
// must cost only its own frame.
#include "control/control_stream.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace trainmover::control {
namespace {

struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    reader = UniqueFd(fds[0]);
    writer = UniqueFd(fds[1]);
  }
  void write(const std::vector<std::byte>& bytes) {
    ASSERT_EQ(::send(writer.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  UniqueFd reader, writer;
};

std::vector<std::byte> frame_of(const std::string& error_text) {
  return encode_frame(Reply{false, error_text});
}

// The frame header of control_protocol.h around `payload`.
std::vector<std::byte> raw_frame(const std::string& payload) {
  std::vector<std::byte> frame = frame_of("");
  frame.resize(kControlHeaderSize);
  const auto length = static_cast<uint32_t>(payload.size());
  for (size_t i = 0; i < 4; ++i) frame[4 + i] = std::byte((length >> (8 * i)) & 0xff);
  for (char c : payload) frame.push_back(std::byte(c));
  return frame;
}

// What one read_available() delivered: each reply's error text, or
// "!" and the parse error.
struct Delivered {
  Status status;
  std::vector<std::string> texts;
};

Delivered read_all(ControlStream& stream) {
  Delivered d;
  d.status = stream.read_available([&](Result<Message> m) {
    if (!m.ok()) return d.texts.push_back("!" + m.status().message());
    const auto* reply = std::get_if<Reply>(&m.value());
    d.texts.push_back(reply != nullptr ? reply->error : "?");
  });
  return d;
}

TEST(ControlStream, SeveralFramesInOneReadComeOutInOrder) {
  Pair p;
  std::vector<std::byte> burst;
  for (const char* text : {"one", "two", "three"}) {
    auto f = frame_of(text);
    burst.insert(burst.end(), f.begin(), f.end());
  }
  p.write(burst);
  ControlStream stream(p.reader.get());
  Delivered d = read_all(stream);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.texts, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(ControlStream, AFrameSplitAnywhereComesOutOnceWhenComplete) {
  Pair p;
  ControlStream stream(p.reader.get());
  std::vector<std::byte> two = frame_of("first");
  auto second = frame_of("second");
  two.insert(two.end(), second.begin(), second.end());
  std::vector<std::string> got;
  for (std::byte b : two) {  // one byte at a time: inside headers and payloads
    p.write({b});
    Delivered d = read_all(stream);
    ASSERT_TRUE(d.status.ok()) << d.status.message();
    got.insert(got.end(), d.texts.begin(), d.texts.end());
  }
  EXPECT_EQ(got, (std::vector<std::string>{"first", "second"}));
}

TEST(ControlStream, AFrameLargerThanTheReadChunkComesOutWhole) {
  Pair p;
  ControlStream stream(p.reader.get());
  // 200 KiB, over the 64 KiB chunk and the socket's buffer: a reply padded
  // with JSON whitespace (its error field is capped).
  const std::string padded =
      R"({"type":"reply","ok":false,)" + std::string(200 << 10, ' ') + R"("error":"big"})";
  std::vector<std::byte> bytes = frame_of("before");
  auto f = raw_frame(padded);
  bytes.insert(bytes.end(), f.begin(), f.end());
  auto after = frame_of("after");
  bytes.insert(bytes.end(), after.begin(), after.end());
  std::vector<std::string> got;
  for (size_t sent = 0; sent < bytes.size();) {
    ssize_t n = ::send(p.writer.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    Delivered d = read_all(stream);
    ASSERT_TRUE(d.status.ok()) << d.status.message();
    got.insert(got.end(), d.texts.begin(), d.texts.end());
  }
  Delivered rest = read_all(stream);
  got.insert(got.end(), rest.texts.begin(), rest.texts.end());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "before");
  EXPECT_EQ(got[1], "big");
  EXPECT_EQ(got[2], "after");
}

TEST(ControlStream, ABadPayloadCostsOnlyItsFrame) {
  Pair p;
  std::vector<std::byte> bytes = frame_of("ok 1");
  auto bad = raw_frame("{not json");
  bytes.insert(bytes.end(), bad.begin(), bad.end());
  auto ok = frame_of("ok 2");
  bytes.insert(bytes.end(), ok.begin(), ok.end());
  p.write(bytes);
  ControlStream stream(p.reader.get());
  Delivered d = read_all(stream);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  ASSERT_EQ(d.texts.size(), 3u);
  EXPECT_EQ(d.texts[0], "ok 1");
  EXPECT_NE(d.texts[1].find("not valid JSON"), std::string::npos) << d.texts[1];
  EXPECT_EQ(d.texts[2], "ok 2");
}

TEST(ControlStream, ABadHeaderOrAnOversizedLengthEndsTheStream) {
  std::vector<std::byte> oversized = raw_frame("");
  for (size_t i = 4; i < 8; ++i) oversized[i] = std::byte{0x7f};  // far over kMaxControlFrame
  std::vector<std::byte> garbage;
  for (char c : std::string("GARBAGE!")) garbage.push_back(std::byte(c));
  for (const auto& header : {garbage, oversized}) {
    Pair p;
    std::vector<std::byte> bytes = frame_of("kept");
    bytes.insert(bytes.end(), header.begin(), header.end());
    p.write(bytes);
    ControlStream stream(p.reader.get());
    Delivered d = read_all(stream);
    EXPECT_FALSE(d.status.ok());
    EXPECT_EQ(d.texts, (std::vector<std::string>{"kept"}));
  }
}

TEST(ControlStream, TheLastFrameBeforeThePeerClosesIsDelivered) {
  Pair p;
  p.write(frame_of("last words"));
  p.writer.reset();
  ControlStream stream(p.reader.get());
  Delivered d = read_all(stream);
  EXPECT_EQ(d.status.code(), TM_ERROR_PEER_FAILED) << d.status.message();
  EXPECT_EQ(d.texts, (std::vector<std::string>{"last words"}));
}

}  // namespace
}  // namespace trainmover::control
