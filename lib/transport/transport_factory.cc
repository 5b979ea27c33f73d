#include "transport/transport_factory.h"

#include "transport/tcp/interfaces.h"
#include "transport/tcp/tcp_transport.h"

namespace trainmover::transport {
namespace {

template <tcp::LocalLinks kLocal>
Result<std::unique_ptr<Transport>> create_tcp(EventLoop& loop, const JobSecret& secret,
                                              const TransportOptions& options,
                                              TransportListener* listener,
                                              LinkObserver* link_observer) {
  TM_ASSIGN_OR_RETURN(
      auto t, tcp::TcpTransport::create(loop, secret, options, kLocal, listener, link_observer));
  return std::unique_ptr<Transport>(std::move(t));
}

using Creator = Result<std::unique_ptr<Transport>> (*)(EventLoop&, const JobSecret&,
                                                       const TransportOptions&, TransportListener*,
                                                       LinkObserver*);
struct Kind {
  std::string_view name;
  Creator create;
};

// One row per transport of this build.
constexpr Kind kKinds[] = {
    {"tcp", create_tcp<tcp::LocalLinks::kTcp>},
    // Shared memory between processes of one host (shm/), TCP to the others.
    {"auto", create_tcp<tcp::LocalLinks::kAuto>},
    // Shared memory only: a peer on another host is an error.
    {"shm", create_tcp<tcp::LocalLinks::kShm>},
};

const Kind* find(std::string_view name) {
  for (const Kind& k : kKinds)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace

std::vector<std::string> transport_kinds() {
  std::vector<std::string> names;
  for (const Kind& k : kKinds) names.emplace_back(k.name);
  return names;
}

Status check_transport_kind(std::string_view kind, std::string_view what) {
  if (find(kind) != nullptr) return Status::Ok();
  std::string known;
  for (const Kind& k : kKinds) known += str_cat(known.empty() ? "" : ", ", k.name);
  return error(TM_ERROR_INVALID_ARGUMENT, what, ": '", kind,
               "' is not a transport of this build (there are: ", known, ")");
}

Result<std::string> choose_listen_host(std::string_view address, std::string_view ifname_filter,
                                       std::string_view reach) {
  if (!address.empty()) return std::string(address);
  std::optional<tcp::SocketAddress> peer;
  if (!reach.empty()) {
    TM_ASSIGN_OR_RETURN(peer, tcp::resolve(reach));
  }
  return tcp::select_listen_address(ifname_filter, peer);
}

Result<std::unique_ptr<Transport>> create_transport(std::string_view kind, EventLoop& loop,
                                                    const JobSecret& secret,
                                                    const TransportOptions& options,
                                                    TransportListener* listener,
                                                    LinkObserver* link_observer) {
  TM_RETURN_IF_ERROR(check_transport_kind(kind, "transport"));
  return find(kind)->create(loop, secret, options, listener, link_observer);
}

}  // namespace trainmover::transport
