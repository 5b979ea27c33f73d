// How many links a communicator opened and closed, counted where it happens
// (PeerTable), so that what a switch changed is observed, not inferred from
// the kind of switch.
//
// A link is opened when it comes into use: up, for the current epoch or for
// the prepared one. It is closed when it leaves use: retired at a switch
// (alive or dead), dropped with an earlier prepared epoch, or released at
// shutdown (a leaver's links, a destroyed communicator's). A connection that
// never becomes a link (a refused handshake, the loser of a simultaneous
// connect, a link of another epoch) counts neither way. Each end counts a
// link once: summed over the processes, a link between two of them counts
// twice.
//
// Threading: written by the communicator's engine thread (and by its
// owner's thread during shutdown), read from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace trainmover {

struct LinkCounts {
  uint64_t opened = 0;
  uint64_t closed = 0;
};

class LinkCounters {
 public:
  void count_opened() { opened_.fetch_add(1, std::memory_order_relaxed); }
  void count_closed() { closed_.fetch_add(1, std::memory_order_relaxed); }
  LinkCounts read() const {
    return {opened_.load(std::memory_order_relaxed), closed_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<uint64_t> opened_{0};
  std::atomic<uint64_t> closed_{0};
};

}  // namespace trainmover
