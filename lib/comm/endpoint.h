// How a process serving a slot is found: its endpoint record in the
// rendezvous store, "host:port instance-hex" under a key naming the
// communicator, the epoch and the slot.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace trainmover {

struct Endpoint {
  std::string address;       // "host:port"
  uint64_t instance_id = 0;  // random per process: which process serves the slot
};

std::string endpoint_key(const std::string& comm_name, uint64_t epoch, int slot);
std::string encode_endpoint(const Endpoint& endpoint);
Result<Endpoint> parse_endpoint(const std::string& record);

// FNV-1a of the communicator name: its id in handshakes.
uint64_t comm_id_of(const std::string& comm_name);

}  // namespace trainmover
