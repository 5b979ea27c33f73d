#include "rendezvous/store_factory.h"

#include "common/parse.h"
#include "config.h"  // HAVE_PMIX
#include "rendezvous/tcp_store.h"
#include "rendezvous/tcp_store_server.h"
#include "transport/tcp/interfaces.h"
#include "transport/tcp/socket.h"
#if HAVE_PMIX
#include "pmix/pmix_store.h"
#endif

namespace trainmover::rendezvous {
namespace {

constexpr std::string_view kTcpScheme = "tcp://";
constexpr std::string_view kPmix = "pmix";

Status bad_spec(std::string_view text, std::string_view why) {
  return error(TM_ERROR_INVALID_ARGUMENT, kStoreVariable, ": '", text, "' ", why,
               " (tcp://HOST:PORT, HOST:PORT, pmix or pmix,tcp://HOST:PORT)");
}

std::string_view without_scheme(std::string_view text) {
  if (text.substr(0, kTcpScheme.size()) == kTcpScheme) text.remove_prefix(kTcpScheme.size());
  return text;
}

// "tcp://HOST:PORT" or "HOST:PORT" to "HOST:PORT".
Result<std::string> tcp_address_of(std::string_view text, std::string_view whole) {
  text = without_scheme(text);
  if (text.find("://") != std::string_view::npos) return bad_spec(whole, "has an unknown scheme");
  auto hp = transport::tcp::split_host_port(text);
  if (!hp.ok()) return bad_spec(whole, hp.status().message());
  return std::string(text);
}

// ":PORT" to the address that reaches the other nodes, with that port.
Result<std::string> chosen_host_with(std::string_view port_text) {
  TM_ASSIGN_OR_RETURN(int64_t port, parse_int(port_text, 0, 65535));
  TM_ASSIGN_OR_RETURN(std::string host,
                      transport::tcp::listen_address_from_environment(std::nullopt));
  TM_ASSIGN_OR_RETURN(auto address, transport::tcp::resolve(host, static_cast<uint16_t>(port)));
  return address.to_string();
}

}  // namespace

Result<StoreSpec> StoreSpec::parse(std::string_view text) {
  if (text.empty()) return bad_spec(text, "is empty");
  StoreSpec spec;
  if (text.substr(0, kPmix.size()) != kPmix) {
    TM_ASSIGN_OR_RETURN(spec.tcp_address, tcp_address_of(text, text));
    return spec;
  }
#if !HAVE_PMIX
  return bad_spec(text, "needs PMIx, and this build has none (configure found no pmix)");
#endif
  spec.kind = Kind::kPmix;
  std::string_view rest = text.substr(kPmix.size());
  if (rest.empty()) return spec;
  if (rest.front() != ',') return bad_spec(text, "is not a store");
  TM_ASSIGN_OR_RETURN(spec.tcp_address, tcp_address_of(rest.substr(1), text));
  return spec;
}

Result<std::unique_ptr<Store>> open_store(const StoreSpec& spec, const JobSecret& secret,
                                          uint64_t job_id, Duration connect_timeout) {
  std::unique_ptr<Store> tcp;
  if (!spec.tcp_address.empty()) {
    TM_ASSIGN_OR_RETURN(tcp, TcpStore::connect(spec.tcp_address, secret, job_id, connect_timeout));
  }
  if (spec.kind == StoreSpec::Kind::kTcp) return tcp;
#if HAVE_PMIX
  // The PMIx wire-up is one round of the whole job, done by the process's
  // first communicator: a later one (a group created on its own) wires up
  // through the TCP store, as every process of it does the same.
  if (tcp && pmix::PmixStore::claimed()) return tcp;
  TM_ASSIGN_OR_RETURN(auto pmix, pmix::PmixStore::create(std::move(tcp)));
  return std::unique_ptr<Store>(std::move(pmix));
#else
  return error(TM_ERROR_INVALID_ARGUMENT, kStoreVariable, ": pmix: this build has no PMIx");
#endif
}

Result<std::unique_ptr<Store>> open_any_time_store(const StoreSpec& spec, const JobSecret& secret,
                                                   uint64_t job_id, Duration connect_timeout) {
  if (spec.tcp_address.empty()) {
    return error(TM_ERROR_INVALID_ARGUMENT, kStoreVariable,
                 ": pmix serves only the first wire-up; what follows it (joiners, standbys, "
                 "state transfer) needs the coordinator's store: pmix,tcp://HOST:PORT");
  }
  TM_ASSIGN_OR_RETURN(auto tcp,
                      TcpStore::connect(spec.tcp_address, secret, job_id, connect_timeout));
  return std::unique_ptr<Store>(std::move(tcp));
}

Result<std::unique_ptr<StoreServer>> start_store_server(std::string_view address,
                                                        const JobSecret& secret, uint64_t job_id) {
  std::string_view text = without_scheme(address);
  std::string host_port(text);
  if (!text.empty() && text.front() == ':') {
    auto chosen = chosen_host_with(text.substr(1));
    if (!chosen.ok()) return chosen.status().with_context(str_cat("store server '", address, "'"));
    host_port = chosen.value();
  }
  TM_ASSIGN_OR_RETURN(auto server, TcpStoreServer::start(host_port, secret, job_id));
  return std::unique_ptr<StoreServer>(std::move(server));
}

}  // namespace trainmover::rendezvous
