#include "gloo_store.h"

#include <stdexcept>

namespace trainmover::bench {

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  Status s = store_.set(key, std::string(data.begin(), data.end()));
  if (!s.ok()) throw std::runtime_error("gloo store set: " + s.message());
}

std::vector<char> GlooStore::get(const std::string& key) {
  auto value = store_.get(key, get_timeout_);
  if (!value.ok()) throw std::runtime_error("gloo store get: " + value.status().message());
  return std::vector<char>(value->begin(), value->end());
}

void GlooStore::wait(const std::vector<std::string>& keys) {
  wait(keys, std::chrono::duration_cast<std::chrono::milliseconds>(get_timeout_));
}

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  // Our get() parks on the server until the key is set: no polling.
  Deadline deadline = Deadline::after(timeout);
  for (const std::string& key : keys) {
    auto value = store_.get(key, deadline.remaining());
    if (!value.ok()) throw std::runtime_error("gloo store wait: " + value.status().message());
  }
}

}  // namespace trainmover::bench
