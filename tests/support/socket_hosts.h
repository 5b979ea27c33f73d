// The local addresses (getsockname, without the port) of every TCP socket
// this process holds, listening or connected: what a test checks to see
// which interface the store client and the links really use.
#pragma once

#include <set>
#include <string>

namespace trainmover::testing {

std::set<std::string> tcp_socket_hosts();
// The same as text, "a,b" (sorted), for messages and scripts.
std::string tcp_socket_hosts_text();

}  // namespace trainmover::testing
