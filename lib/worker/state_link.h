// StateLink: the one-shot, authenticated TCP connection over which a donor
// sends its registered state buffers straight into a joiner's.
//
// The joiner listens (StateListener, on the host given: the worker passes the
// address that reaches the store, or TRAINMOVER_SOCKET_IFNAME's) and
// publishes its address; the donor connects, both prove the job secret in the
// link handshake (comm id kStateCommId, so no other channel's proof is worth
// anything here), and the donor writes a header (the buffers' count, sizes
// and the step) and then each buffer with write() from the buffer itself.
// The joiner checks the header against its own buffers and reads each one
// with read() into place. Neither side allocates a buffer for the data: the
// donor's memory use does not grow with the state (measured in
// docs/runtime.md). A final byte from the joiner says it has all of it.
//
// Every wait is bounded by the deadline given. Threading: none (blocking
// calls on the caller's thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/secret.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::worker {

inline constexpr uint64_t kStateCommId = 0x4554415453;  // "STATE"

struct StateBuffer {
  std::string name;
  void* data = nullptr;
  size_t bytes = 0;
};

class StateListener {
 public:
  // Listens on `host` (port chosen by the kernel).
  static Result<StateListener> open(const std::string& host);
  const std::string& address() const { return address_; }
  // Accepts the donor, checks its proof and the header, and reads the state
  // into `buffers`. Returns the bytes received. `step` must match the header's.
  Result<uint64_t> receive(const std::vector<StateBuffer>& buffers, uint64_t step,
                           const JobSecret& secret, uint64_t job_id, Deadline deadline);
  // Ends a receive() waiting on another thread at once, and the listener
  // with it (a donor that died before it connected would hold it to the
  // deadline). Safe from any thread while the listener exists.
  void cancel() const;

 private:
  UniqueFd fd_;
  std::string address_;
};

// Connects to the joiner at `address` and sends `buffers` (of state `step`).
// Returns the bytes sent once the joiner confirmed them.
Result<uint64_t> send_state(const std::string& address, const std::vector<StateBuffer>& buffers,
                            uint64_t step, const JobSecret& secret, uint64_t job_id,
                            Deadline deadline);

}  // namespace trainmover::worker
