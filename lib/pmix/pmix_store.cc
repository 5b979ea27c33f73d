#include "pmix/pmix_store.h"

#include <atomic>
#include <cstdint>

namespace trainmover::pmix {
namespace {

void put_u32(std::string& out, size_t n) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

bool take_u32(const std::string& in, size_t& at, size_t& n) {
  if (in.size() - at < 4) return false;
  n = 0;
  for (int i = 0; i < 4; ++i) n |= size_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  at += 4;
  return true;
}

bool take_bytes(const std::string& in, size_t& at, std::string& out) {
  size_t n = 0;
  if (!take_u32(in, at, n) || in.size() - at < n) return false;
  out.assign(in, at, n);
  at += n;
  return true;
}

}  // namespace

std::string encode_records(const std::map<std::string, std::string>& records) {
  std::string out;
  put_u32(out, records.size());  // never empty: PMIx is not asked to carry 0 bytes
  for (const auto& [key, value] : records) {
    put_u32(out, key.size());
    out += key;
    put_u32(out, value.size());
    out += value;
  }
  return out;
}

Result<std::map<std::string, std::string>> decode_records(const std::string& bytes) {
  std::map<std::string, std::string> records;
  size_t at = 0, count = 0;
  if (!take_u32(bytes, at, count)) return error(TM_ERROR_PROTOCOL, "PMIx store: no record count");
  for (size_t i = 0; i < count; ++i) {
    std::string key, value;
    if (!take_bytes(bytes, at, key) || !take_bytes(bytes, at, value))
      return error(TM_ERROR_PROTOCOL, "PMIx store: record ", i, " of ", count, " is truncated");
    records[std::move(key)] = std::move(value);
  }
  if (at != bytes.size()) return error(TM_ERROR_PROTOCOL, "PMIx store: bytes after the records");
  return records;
}

namespace {
std::atomic<bool>& store_claimed() {
  static std::atomic<bool> claimed{false};  // the process's one wire-up round
  return claimed;
}
}  // namespace

bool PmixStore::claimed() { return store_claimed().load(); }

Result<std::unique_ptr<PmixStore>> PmixStore::create(std::unique_ptr<rendezvous::Store> later) {
  if (store_claimed().exchange(true))
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "PMIx store: this process did its PMIx wire-up already (one round per job)");
  auto client = PmixClient::acquire();
  if (!client.ok()) {
    store_claimed() = false;
    return client.status();
  }
  return std::unique_ptr<PmixStore>(new PmixStore(std::move(*client), std::move(later)));
}

Status PmixStore::beyond_first_round(const char* call, const std::string& key) const {
  return error(TM_ERROR_INVALID_ARGUMENT, "PMIx store: ", call, "('", key,
               "'): PMIx serves only the first wire-up (every process sets, one fence, then "
               "every process gets); later joiners, standbys, switches and counters need the "
               "coordinator's store: set TRAINMOVER_STORE=pmix,tcp://HOST:PORT");
}

Status PmixStore::set(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fenced_) {
    if (later_) return later_->set(key, value);
    return beyond_first_round("set", key);
  }
  if (key.empty() || key.size() > rendezvous::kMaxKeyBytes ||
      value.size() > rendezvous::kMaxValueBytes)
    return error(TM_ERROR_INVALID_ARGUMENT, "PMIx store: key '", key, "' or its value is too long");
  own_[key] = value;
  return Status::Ok();
}

Status PmixStore::load_published(Duration timeout) {
  Records all;
  for (uint32_t rank = 0; rank < client_->job_size(); ++rank) {
    TM_ASSIGN_OR_RETURN(std::string bytes, client_->get(rank, kPmixKey, timeout));
    TM_ASSIGN_OR_RETURN(Records records, decode_records(bytes));
    all.merge(records);
  }
  published_ = std::move(all);
  loaded_ = true;
  return Status::Ok();
}

Result<std::string> PmixStore::get(const std::string& key, Duration timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!fenced_)
    return error(TM_ERROR_INVALID_ARGUMENT, "PMIx store: get('", key,
                 "') before the first wire-up's fence (Store::sync)");
  if (!loaded_) TM_RETURN_IF_ERROR(load_published(timeout));
  if (auto it = published_.find(key); it != published_.end()) return it->second;
  if (!later_)
    return error(TM_ERROR_TIMEOUT, "PMIx store: no process of the job published '", key,
                 "' before the fence");
  rendezvous::Store& later = *later_;
  lock.unlock();  // the wait is the TCP store's, and it is thread-safe
  return later.get(key, timeout);
}

// `later_` never changes after create(): no lock is needed to use it.
Result<int64_t> PmixStore::add(const std::string& key, int64_t delta) {
  if (!later_) return beyond_first_round("add", key);
  return later_->add(key, delta);
}

Result<PmixStore::CompareSetResult> PmixStore::compare_set(
    const std::string& key, const std::optional<std::string>& expected, const std::string& value) {
  if (!later_) return beyond_first_round("compare_set", key);
  return later_->compare_set(key, expected, value);
}

Status PmixStore::sync(Duration timeout) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fenced_) return later_ ? Status::Ok() : beyond_first_round("sync", "");
  TM_RETURN_IF_ERROR(client_->put(kPmixKey, encode_records(own_)));
  TM_RETURN_IF_ERROR(client_->commit());
  TM_RETURN_IF_ERROR(client_->fence(timeout).with_context("PMIx store: the first wire-up's fence"));
  fenced_ = true;
  // A joiner that comes later reads the first round (its view of epoch 0)
  // from `later`: PMIx shows it only to the processes of the fence.
  if (later_) {
    for (const auto& [key, value] : own_)
      TM_RETURN_IF_ERROR(later_->set(key, value).with_context("PMIx store: keep the first round"));
  }
  own_.clear();
  return Status::Ok();
}

std::optional<rendezvous::Store::Identity> PmixStore::identity() const {
  return Identity{static_cast<int>(client_->rank()), static_cast<int>(client_->job_size())};
}

}  // namespace trainmover::pmix
