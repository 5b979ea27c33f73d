// ByteStream: the ordered, reliable byte stream a StreamLink frames its
// messages on: a connected socket (tcp/socket_stream.h) or a pair of
// shared-memory rings with a Unix socket beside them (shm/ring_stream.h).
//
// Contract
//  - Non-blocking, and used from one thread (the link's owner).
//  - read() and write() answer as recv(2) and sendmsg(2) do: bytes moved;
//    0 from read() at the end of the stream; -1 with errno set otherwise
//    (EAGAIN: nothing can move now, and an event on fd() will say when).
//  - A stream that fails a call stays failed; the link then drops it.
#pragma once

#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace trainmover::transport {

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // The descriptor the link registers with its (edge-triggered) event loop.
  virtual int fd() const = 0;
  // Called first on every event of fd() with its epoll bits, before the
  // link reads and writes: a stream that signals on fd() out of band (the
  // rings' doorbells) takes the signals here, so that none is consumed
  // without both directions being looked at again; a stream that answers
  // EAGAIN from what it knows (a socket found drained) asks again.
  virtual void on_wakeup(uint32_t events) = 0;
  // The next read() asks the system even if the stream was found drained
  // and no event has come since: for a link reading what a failed peer sent
  // last, before it stops listening for events.
  virtual void look_again() {}
  virtual ssize_t read(std::byte* dst, size_t length) = 0;
  virtual ssize_t write(const iovec* iov, size_t count) = 0;
  // No more writes; the peer reads the end of the stream after what was sent.
  virtual void shutdown_write() = 0;
  // The events to watch; `waiting_to_write`: a write returned EAGAIN.
  virtual uint32_t interest(bool waiting_to_write) const = 0;
  // True when room to write is announced by input events (the rings), not by
  // EPOLLOUT (a socket).
  virtual bool writable_on_input() const = 0;
  // True when the stream can say without a system call whether it has input
  // (has_input); the link then asks its loop to poll it.
  virtual bool pollable() const { return false; }
  // The peer moved since the last look: new bytes to read, or room for a
  // writer that slept on a full ring. Each move is reported once.
  virtual bool has_input() { return false; }
  // Before the loop sleeps: ask the peer for a signal on fd() when it
  // writes; true when input came meanwhile (do not sleep). disarm() when
  // awake again: a peer writing to an awake reader makes no system call.
  virtual bool arm() { return false; }
  virtual void disarm() {}
  // For messages: "TCP", "shared memory".
  virtual const char* kind() const = 0;
};

}  // namespace trainmover::transport
