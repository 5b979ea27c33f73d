#include "support/switching.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "comm/endpoint.h"
#include "support/reference.h"

namespace trainmover::testing {

std::unique_ptr<rendezvous::TcpStore> connect_store(const TestJob& job) {
  auto s = rendezvous::TcpStore::connect(job.store_address(), job.secret(), job.job_id(),
                                         std::chrono::seconds(10));
  return s.ok() ? std::move(s).value() : nullptr;
}

Result<View> initial_view(rendezvous::Store& store, const std::string& name, int nslots) {
  View v;
  for (int s = 0; s < nslots; ++s) {
    TM_ASSIGN_OR_RETURN(std::string record,
                        store.get(endpoint_key(name, 0, s), std::chrono::seconds(20)));
    TM_ASSIGN_OR_RETURN(Endpoint e, parse_endpoint(record));
    v.slots.push_back(std::move(e));
  }
  return v;
}

View replace_slot(View view, uint64_t epoch, int slot, const Endpoint& joiner) {
  view.epoch = epoch;
  view.slots[static_cast<size_t>(slot)] = joiner;
  return view;
}

Status publish_endpoint(rendezvous::Store& store, const std::string& key, const Endpoint& e) {
  return store.set(key, encode_endpoint(e));
}

Result<Endpoint> fetch_endpoint(rendezvous::Store& store, const std::string& key) {
  TM_ASSIGN_OR_RETURN(std::string record, store.get(key, std::chrono::seconds(20)));
  return parse_endpoint(record);
}

Result<uint64_t> run_iteration(Communicator& comm, int iteration, size_t count) {
  Bytes input =
      make_input(TM_FLOAT32, TM_SUM, comm.slot(), count, static_cast<uint64_t>(iteration));
  Bytes output(input.size());
  TM_RETURN_IF_ERROR(comm.allreduce(input.data(), output.data(), count, TM_FLOAT32, TM_SUM));
  Bytes expected = reference_allreduce(TM_FLOAT32, TM_SUM, comm.nslots(), count,
                                       static_cast<uint64_t>(iteration));
  if (std::memcmp(output.data(), expected.data(), output.size()) != 0) {
    return error(TM_ERROR_INTERNAL, "slot ", comm.slot(), ": iteration ", iteration,
                 " differs from the serial reference");
  }
  return fnv1a(output.data(), output.size());
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int complain(int slot, const std::string& what) {
  std::fprintf(stderr, "slot %d: %s\n", slot, what.c_str());
  return 3;
}

}  // namespace trainmover::testing
