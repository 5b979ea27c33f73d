// The training text, byte-level, and each step's batch drawn from it.
//
// A batch row is a window of seq_len+1 bytes at an offset drawn from
// (seed, step, DP index, row): tokens are its first seq_len bytes, targets
// the last seq_len. So a step's data is a pure function of those four and
// of the text, whatever ran before, on every process that asks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainmover::gpt {

// The text every Debian system ships: /usr/share/common-licenses/GPL-3, or
// else the first (by name) readable regular file of that folder of at least
// `min_bytes`. Fails naming the folder when there is none.
Result<std::string> default_corpus_path(size_t min_bytes);

class Corpus {
 public:
  // Fails naming the file when it cannot be read or is shorter than
  // seq_len + 1 bytes.
  static Result<Corpus> load(const std::string& path, int seq_len);

  const std::string& path() const { return path_; }
  size_t size() const { return bytes_.size(); }

  // Rows [first_row, first_row + rows) of the batch of (seed, step, dp),
  // each seq_len values into tokens and targets (either may be null).
  void sample(uint64_t seed, uint64_t step, int dp, int first_row, int rows, int32_t* tokens,
              int32_t* targets) const;

 private:
  Corpus(std::string path, std::vector<unsigned char> bytes, int seq_len)
      : path_(std::move(path)), bytes_(std::move(bytes)), seq_len_(seq_len) {}

  std::string path_;
  std::vector<unsigned char> bytes_;
  int seq_len_;
};

}  // namespace trainmover::gpt
