// GlooStore: gloo's rendezvous::Store interface on top of our Store, so the
// gloo baseline rendezvouses through the job's own TcpStoreServer, exactly
// like trainmover does. gloo reports failures by exception, so this does.
#pragma once

#include <gloo/rendezvous/store.h>

#include <string>
#include <vector>

#include "rendezvous/store.h"

namespace trainmover::bench {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(rendezvous::Store& store, Duration get_timeout)
      : store_(store), get_timeout_(get_timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  rendezvous::Store& store_;
  Duration get_timeout_;
};

}  // namespace trainmover::bench
