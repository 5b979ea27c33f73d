// libFuzzer target: the input is what the peer writes into a StreamLink. The
// link has one (or two) posted receives whose buffers are exactly as long as
// posted, so ASan flags any write past them; the event loop runs until the
// link fails (the stream always ends with EOF) or a bounded number of passes.
#include <sys/socket.h>
#include <algorithm>

#include <memory>
#include <vector>

#include "common/event_loop.h"
#include "fuzz_common.h"
#include "transport/stream_link.h"
#include "transport/tcp/socket_stream.h"

using namespace trainmover;  // NOLINT: fuzz target
using transport::StreamLink;

namespace {

class CountingObserver final : public transport::LinkObserver {
 public:
  void on_control(transport::Link&, const transport::ControlMessage& m) override {
    if (m.kind == transport::FrameKind::kAbort && m.reason.size() > transport::kMaxAbortReason)
      __builtin_trap();
    ++controls;
  }
  void on_link_failed(transport::Link& link) override {
    if (link.status().ok()) __builtin_trap();
    ++failures;
  }
  int controls = 0;
  int failures = 0;
};

StreamLink::Options link_options() {
  StreamLink::Options o;
  o.job_id = fuzz::kJob;
  o.epoch = fuzz::kEpoch;
  o.local_slot = fuzz::kLocalSlot;
  o.peer_slot = fuzz::kPeerSlot;
  o.max_frame_bytes = fuzz::kMaxData;
  o.peer_name = "fuzzer";
  return o;
}

void drive(EventLoop& loop, const StreamLink& link) {
  for (int pass = 0; pass < 64 && !link.failed(); ++pass) {
    if (!loop.run_once(Duration::zero()).ok()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < fuzz::kLinkPrologue) return 0;
  static std::unique_ptr<EventLoop> loop = std::move(EventLoop::create()).value();
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
    __builtin_trap();
  UniqueFd peer(fds[0]);
  CountingObserver observer;
  auto created = StreamLink::create(*loop, transport::tcp::socket_stream(UniqueFd(fds[1])),
                                    link_options(), &observer);
  if (!created.ok()) __builtin_trap();
  std::unique_ptr<StreamLink> link = std::move(created).value();

  const size_t recv_len = static_cast<size_t>(data[0]) * 4;
  const uint64_t tag = data[1];
  const uint8_t flags = data[2];
  std::vector<std::unique_ptr<std::byte[]>> buffers;  // exact-size heap blocks
  std::vector<transport::RequestHandle> recvs;
  for (int i = 0; i < ((flags & fuzz::kFlagSecondRecv) ? 2 : 1); ++i) {
    buffers.push_back(std::make_unique<std::byte[]>(recv_len));
    recvs.push_back(link->post_recv(tag, std::span<std::byte>(buffers.back().get(), recv_len)));
  }
  std::vector<uint8_t> input(data + fuzz::kLinkPrologue, data + size);
  if (flags & fuzz::kFlagReseal) fuzz::reseal_stream(input, 0);
  // The whole input fits in the socket buffer (libFuzzer's -max_len is small).
  const uint8_t* stream = input.data();
  size_t left = input.size();
  size_t half = left / 2;
  if (half > 0 && ::send(peer.get(), stream, half, MSG_NOSIGNAL) != static_cast<ssize_t>(half))
    return 0;
  drive(*loop, *link);
  if (flags & fuzz::kFlagCancel) {
    link->cancel_pending();
    buffers.clear();  // the link must not touch them any more (ASan: use after free)
  }
  if (left > half && ::send(peer.get(), stream + half, left - half, MSG_NOSIGNAL) !=
                         static_cast<ssize_t>(left - half)) {
    return 0;
  }
  peer.reset();
  drive(*loop, *link);
  // A frame of a later epoch waits in the socket for the link to get there
  // (and holds up what follows it); moving on to that epoch releases it.
  bool pending = std::any_of(recvs.begin(), recvs.end(), [&](const auto& r) {
    return link->test(r) == transport::RequestState::kPending;
  });
  if (pending && !link->failed()) {
    link->advance_epoch(UINT64_MAX);
    link->resume();
    drive(*loop, *link);
  }
  // The stream has ended: every receive is settled, either because the link
  // failed or because it completed (a frame left without a receive just waits).
  if (observer.failures != (link->failed() ? 1 : 0)) __builtin_trap();
  for (const auto& r : recvs) {
    if (link->test(r) == transport::RequestState::kPending) __builtin_trap();
  }
  return 0;
}
