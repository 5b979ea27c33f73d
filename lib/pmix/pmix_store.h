// PmixStore: a Store over PMIx for the first wire-up of a job started by a
// PMIx server (srun --mpi=pmix): set()s are published with PMIx_Put and
// PMIx_Commit, sync() is one PMIx_Fence of every process of the job, and
// get()s after it read what the others published with PMIx_Get. Rank and
// job size come from PMIx (identity()).
//
// What it cannot do: PMIx data become visible only at a fence of every
// process, so this store serves exactly one round: the set()s before the
// first sync() and the get()s after it. A later joiner, a standby taking a
// slot, a switch to a new epoch, add() and compare_set() need a store that
// answers at any time: the coordinator's TCP store, given as `later`
// (TRAINMOVER_STORE=pmix,tcp://HOST:PORT). Without one those calls fail with
// TM_ERROR_INVALID_ARGUMENT saying so. A get() after the fence looks in the
// PMIx data first, then in `later`. After the fence each process also writes
// its first-round set()s to `later` (a few keys, on the connection it holds
// anyway), so that a joiner, which was not in the fence, finds the first
// view there.
//
// One per process, ever: the first wire-up is one round of the whole job,
// and create() fails once a PmixStore was created in this process
// (claimed() says so, and a later communicator wires up through `later`).
// It shares the process's PmixClient. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pmix/pmix_client.h"
#include "rendezvous/store.h"

namespace trainmover::pmix {

class PmixStore final : public rendezvous::Store {
 public:
  // The PMIx key under which each process publishes its set()s, together.
  static constexpr const char* kPmixKey = "trainmover.store";

  static Result<std::unique_ptr<PmixStore>> create(std::unique_ptr<rendezvous::Store> later);
  // Whether this process created a PmixStore already (create() would fail).
  static bool claimed();

  Status set(const std::string& key, const std::string& value) override;
  Result<std::string> get(const std::string& key, Duration timeout) override;
  Result<int64_t> add(const std::string& key, int64_t delta) override;
  Result<CompareSetResult> compare_set(const std::string& key,
                                       const std::optional<std::string>& expected,
                                       const std::string& value) override;
  Status sync(Duration timeout) override;
  std::optional<Identity> identity() const override;

 private:
  using Records = std::map<std::string, std::string>;
  PmixStore(std::shared_ptr<PmixClient> client, std::unique_ptr<rendezvous::Store> later)
      : client_(std::move(client)), later_(std::move(later)) {}
  Status beyond_first_round(const char* call, const std::string& key) const;
  Status load_published(Duration timeout);

  std::mutex mutex_;
  std::shared_ptr<PmixClient> client_;
  std::unique_ptr<rendezvous::Store> later_;
  Records own_;  // this process's set()s before the fence
  bool fenced_ = false;
  bool loaded_ = false;
  Records published_;  // every process's, after the fence
};

// The byte string a process publishes: the number of its records, then each
// key and value preceded by its length (4 bytes each, little-endian).
// Exposed for its test.
std::string encode_records(const std::map<std::string, std::string>& records);
Result<std::map<std::string, std::string>> decode_records(const std::string& bytes);

}  // namespace trainmover::pmix
