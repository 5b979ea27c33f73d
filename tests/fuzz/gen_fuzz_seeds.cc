// Writes the seed corpora of the fuzz targets: valid encodings of every
// message, under <outdir>/<target>/seed-N.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "control_protocol_seeds.h"
#include "fuzz_common.h"
#include "rendezvous/store_protocol.h"
#include "trace_seeds.h"
#include "transport/control.h"
#include "transport/frame.h"
#include "transport/handshake.h"

using namespace trainmover;  // NOLINT: generator
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::byte>;

class SeedWriter {
 public:
  SeedWriter(fs::path root, std::string target) : dir_(std::move(root) / target) {
    fs::create_directories(dir_);
  }
  bool write(const Bytes& bytes) {
    std::ofstream out(dir_ / ("seed-" + std::to_string(next_++)), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
  }

 private:
  fs::path dir_;
  int next_ = 0;
};

Bytes cat(std::initializer_list<std::span<const std::byte>> parts) {
  Bytes out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes prefixed(uint8_t first, std::span<const std::byte> rest) {
  std::byte b{first};
  return cat({std::span<const std::byte>(&b, 1), rest});
}

transport::FrameHeader header(transport::FrameKind kind, uint64_t tag, uint64_t length) {
  transport::FrameHeader h;
  h.kind = kind;
  h.job_id = fuzz::kJob;
  h.epoch = fuzz::kEpoch;
  h.tag = tag;
  h.length = length;
  h.src_slot = fuzz::kPeerSlot;
  return h;
}

std::vector<transport::ControlMessage> control_messages() {
  transport::ControlMessage hb;
  hb.kind = transport::FrameKind::kHeartbeat;
  hb.ops_entered = 41;
  hb.waiting_on = 2;
  transport::ControlMessage abort;
  abort.kind = transport::FrameKind::kAbort;
  abort.failed_slot = 3;
  abort.code = TM_ERROR_PEER_FAILED;
  abort.reason = "slot 3 exited";
  transport::ControlMessage bye;
  bye.kind = transport::FrameKind::kGoodbye;
  return {hb, abort, bye};
}

Bytes control_frame(const transport::ControlMessage& m) {
  transport::ControlPayload payload{};
  size_t len = transport::encode_control_payload(m, payload);
  return cat(
      {transport::encode_frame_header(header(m.kind, 0, len)), std::span(payload).first(len)});
}

bool write_frames(const fs::path& root) {
  SeedWriter w(root, "fuzz_frame_header");
  bool ok = true;
  for (auto kind : {transport::FrameKind::kData, transport::FrameKind::kHeartbeat,
                    transport::FrameKind::kAbort, transport::FrameKind::kGoodbye,
                    transport::FrameKind::kStoreRequest, transport::FrameKind::kStoreResponse}) {
    auto h = transport::encode_frame_header(header(kind, 7, 16));
    ok = ok && w.write(prefixed(0, h)) && w.write(prefixed(1, h));
  }
  return ok;
}

bool write_controls(const fs::path& root) {
  SeedWriter w(root, "fuzz_control");
  bool ok = true;
  uint8_t selector[] = {0, 1, 2};  // heartbeat, abort, goodbye (see fuzz_control.cc)
  auto msgs = control_messages();
  for (size_t i = 0; i < msgs.size(); ++i) {
    transport::ControlPayload payload{};
    size_t len = transport::encode_control_payload(msgs[i], payload);
    ok = ok && w.write(prefixed(selector[i], std::span(payload).first(len)));
  }
  return ok;
}

bool write_handshakes(const fs::path& root) {
  SeedWriter w(root, "fuzz_handshake");
  transport::Hello hello;
  hello.job_id = fuzz::kJob;
  hello.comm_id = 5;
  hello.epoch = fuzz::kEpoch;
  hello.slot = 1;
  hello.target_slot = 2;
  hello.instance_id = 99;
  bool ok = w.write(prefixed(0, transport::encode_hello(hello)));
  hello.role = transport::Role::kAcceptor;
  ok = ok && w.write(prefixed(0, transport::encode_hello(hello)));
  ok = ok && w.write(prefixed(1, transport::encode_verdict(transport::Verdict::kAccepted)));
  ok = ok && w.write(prefixed(1, transport::encode_verdict(transport::Verdict::kDuplicate)));
  return ok;
}

bool write_store(const fs::path& root) {
  SeedWriter w(root, "fuzz_store");
  using rendezvous::StoreOp;
  bool ok = w.write(
      prefixed(0, rendezvous::encode_request({StoreOp::kSet, "addr/1", "10.0.0.1:4000", 0, 0})));
  ok = ok &&
       w.write(prefixed(0, rendezvous::encode_request({StoreOp::kGet, "addr/1", "", 0, 5000})));
  ok =
      ok && w.write(prefixed(0, rendezvous::encode_request({StoreOp::kAdd, "barrier", "", -1, 0})));
  ok = ok && w.write(prefixed(0, rendezvous::encode_request({StoreOp::kCompareSet, "tm/c/view/1",
                                                             "epoch 1", 0, 0, std::nullopt})));
  ok = ok && w.write(prefixed(0, rendezvous::encode_request({StoreOp::kCompareSet, "tm/c/view/1",
                                                             "epoch 1", 0, 0, "epoch 0"})));
  ok = ok && w.write(prefixed(1, rendezvous::encode_response(
                                     {TM_SUCCESS, rendezvous::encode_compare_set_reply(
                                                      {false, std::string("epoch 1")})})));
  ok = ok && w.write(prefixed(1, rendezvous::encode_response({TM_SUCCESS, "10.0.0.1:4000"})));
  ok = ok &&
       w.write(prefixed(1, rendezvous::encode_response({TM_ERROR_TIMEOUT, "key 'x' was not set"})));
  return ok;
}

bool write_link_streams(const fs::path& root) {
  SeedWriter w(root, "fuzz_link_stream");
  const uint8_t tag = 9;
  const size_t len = 16 * 4;
  Bytes payload(len, std::byte{0x42});
  Bytes data =
      cat({transport::encode_frame_header(header(transport::FrameKind::kData, tag, len)), payload});
  Bytes controls;
  for (const auto& m : control_messages()) {
    auto f = control_frame(m);
    controls.insert(controls.end(), f.begin(), f.end());
  }
  auto stream = [&](uint8_t flags, std::initializer_list<std::span<const std::byte>> parts) {
    Bytes prologue = {std::byte{len / 4}, std::byte{tag}, std::byte{flags}};
    Bytes body = cat(parts);
    return cat({prologue, body});
  };
  bool ok = w.write(stream(0, {data}));
  ok = ok && w.write(stream(0, {data, controls}));
  ok = ok && w.write(stream(fuzz::kFlagSecondRecv, {data, data}));
  ok = ok && w.write(stream(fuzz::kFlagCancel, {data, data}));
  ok = ok && w.write(stream(fuzz::kFlagCancel | fuzz::kFlagSecondRecv, {controls, data, data}));
  ok = ok && w.write(stream(fuzz::kFlagReseal, {data, controls, data}));
  ok = ok && w.write(stream(0, {std::span(data).first(30)}));
  return ok;
}

bool write_traces(const fs::path& root) {
  SeedWriter w(root, "fuzz_trace");
  bool ok = true;
  for (auto c : {record::Compression::kNone, record::Compression::kZstd}) {
    auto file = fuzz::sample_trace(c);
    if (file.empty()) continue;  // no zstd in this build
    for (uint8_t flags = 0; flags < 4; ++flags) ok = ok && w.write(prefixed(flags, file));
  }
  return ok;
}

bool write_control_protocol(const fs::path& root) {
  SeedWriter w(root, "fuzz_control_protocol");
  bool ok = true;
  for (const auto& m : fuzz::sample_control_messages()) {
    Bytes frame = control::encode_frame(m);
    Bytes payload(frame.begin() + control::kControlHeaderSize, frame.end());
    ok = ok && w.write(prefixed(0, frame)) && w.write(prefixed(1, payload));
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  fs::path root(argv[1]);
  bool ok = write_frames(root) && write_controls(root) && write_handshakes(root) &&
            write_store(root) && write_link_streams(root) && write_traces(root) &&
            write_control_protocol(root);
  if (!ok) std::fprintf(stderr, "%s: cannot write seeds under %s\n", argv[0], argv[1]);
  return ok ? 0 : 1;
}
