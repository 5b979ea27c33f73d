#include "corpus.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "record/file_io.h"
#include "rng.h"

namespace trainmover::gpt {
namespace {

constexpr const char* kLicenseDir = "/usr/share/common-licenses";
constexpr size_t kMaxCorpusBytes = size_t{1} << 30;

bool usable(const std::filesystem::path& path, size_t min_bytes) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<size_t>(st.st_size) >= min_bytes && ::access(path.c_str(), R_OK) == 0;
}

}  // namespace

Result<std::string> default_corpus_path(size_t min_bytes) {
  const std::filesystem::path preferred = std::filesystem::path(kLicenseDir) / "GPL-3";
  if (usable(preferred, min_bytes)) return preferred.string();
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kLicenseDir, ec)) {
    if (usable(entry.path(), min_bytes)) candidates.push_back(entry.path());
  }
  if (candidates.empty())
    return error(TM_ERROR_NOT_FOUND, "no readable text of at least ", min_bytes, " bytes in ",
                 kLicenseDir, ec ? " (" + ec.message() + ")" : std::string(),
                 "; name one with --data FILE");
  return std::min_element(candidates.begin(), candidates.end())->string();
}

Result<Corpus> Corpus::load(const std::string& path, int seq_len) {
  auto bytes = record::read_file(path, kMaxCorpusBytes);
  if (!bytes.ok()) return bytes.status().with_context("training text");
  if (bytes->size() < static_cast<size_t>(seq_len) + 1)
    return error(TM_ERROR_INVALID_ARGUMENT, "training text ", path, " has ", bytes->size(),
                 " bytes; a sequence of ", seq_len, " needs at least ", seq_len + 1);
  std::vector<unsigned char> text(bytes->size());
  std::transform(bytes->begin(), bytes->end(), text.begin(),
                 [](std::byte b) { return static_cast<unsigned char>(b); });
  return Corpus(path, std::move(text), seq_len);
}

void Corpus::sample(uint64_t seed, uint64_t step, int dp, int first_row, int rows, int32_t* tokens,
                    int32_t* targets) const {
  const uint64_t windows = bytes_.size() - seq_len_;  // offsets with seq_len+1 bytes
  for (int r = 0; r < rows; ++r) {
    const uint64_t row = static_cast<uint64_t>(first_row + r);
    const uint64_t start =
        mix_key({seed, step, static_cast<uint64_t>(dp), row, 0x64617461ULL}) % windows;
    const size_t at = static_cast<size_t>(r) * seq_len_;
    for (int t = 0; t < seq_len_; ++t) {
      if (tokens != nullptr) tokens[at + t] = bytes_[start + t];
      if (targets != nullptr) targets[at + t] = bytes_[start + t + 1];
    }
  }
}

}  // namespace trainmover::gpt
