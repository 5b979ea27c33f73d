#include "checkpoint.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <vector>

#include "common/crc32c.h"
#include "record/file_io.h"

namespace trainmover::gpt {
namespace {

constexpr char kMagic[8] = {'T', 'M', 'G', 'P', 'T', 'C', 'K', '\0'};
constexpr uint32_t kVersion = 1;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  int32_t shape[6];  // vocab, d_model, n_layers, n_heads, seq_len, ffn_mult
  int32_t span[4];   // stage, stages, first_layer, end_layer
  uint64_t param_count;
  Counters counters;
  uint32_t payload_crc;
  uint32_t header_crc;
};
static_assert(sizeof(Header) == 96, "the checkpoint header is 96 packed bytes");

std::array<int32_t, 6> shape_words(const ModelShape& s) {
  return {s.vocab, s.d_model, s.n_layers, s.n_heads, s.seq_len, s.ffn_mult};
}
std::array<int32_t, 4> span_words(const StageSpan& s) {
  return {s.stage, s.stages, s.first_layer, s.end_layer};
}

template <size_t N>
std::string describe(const int32_t (&words)[N], const char* const (&names)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += str_cat(i ? ", " : "", names[i], " ", words[i]);
  return out;
}

std::span<const std::byte> bytes_of(const std::vector<float>& v) {
  return std::as_bytes(std::span(v));
}

uint32_t header_crc(const Header& h) {
  return crc32c(std::as_bytes(std::span(&h, 1)).first(offsetof(Header, header_crc)));
}

Header make_header(const ModelShape& shape, const StageSpan& span, const TrainState& state) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.header_bytes = sizeof(Header);
  std::ranges::copy(shape_words(shape), h.shape);
  std::ranges::copy(span_words(span), h.span);
  h.param_count = state.params.size();
  h.counters = state.counters;
  uint32_t crc = 0;
  for (const auto* v : {&state.params, &state.adam_m, &state.adam_v})
    crc = crc32c(bytes_of(*v), crc);
  h.payload_crc = crc;
  h.header_crc = header_crc(h);
  return h;
}

// Checks the header against this run; `file` names it in errors.
Status check_header(const Header& h, const std::string& file, const ModelShape& shape,
                    const StageSpan& span, size_t param_count) {
  auto bad = [&](const std::string& why) {
    return error(TM_ERROR_INVALID_ARGUMENT, file, ": ", why);
  };
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
    return bad("not a trainmover-gpt checkpoint");
  if (h.header_crc != header_crc(h)) return bad("damaged header (checksum mismatch)");
  if (h.version != kVersion || h.header_bytes != sizeof(Header))
    return bad(str_cat("format version ", h.version, ", this program reads ", kVersion));
  static const char* const kShapeNames[6] = {"vocab", "d_model", "layers",
                                             "heads", "seq_len", "ffn_mult"};
  static const char* const kSpanNames[4] = {"stage", "stages", "first_layer", "end_layer"};
  Header want = h;
  std::ranges::copy(shape_words(shape), want.shape);
  std::ranges::copy(span_words(span), want.span);
  if (!std::ranges::equal(h.shape, want.shape))
    return bad("written for " + describe(h.shape, kShapeNames) + "; this run has " +
               describe(want.shape, kShapeNames));
  if (!std::ranges::equal(h.span, want.span))
    return bad("written for " + describe(h.span, kSpanNames) + "; this run has " +
               describe(want.span, kSpanNames));
  if (h.param_count != param_count)
    return bad(str_cat(h.param_count, " parameters, this stage has ", param_count));
  return Status::Ok();
}

}  // namespace

std::string checkpoint_path(const std::string& dir, int stage, uint64_t step) {
  char name[64];
  std::snprintf(name, sizeof(name), "stage%d-step%010llu.ckpt", stage,
                static_cast<unsigned long long>(step));
  return (std::filesystem::path(dir) / name).string();
}

namespace {

// This stage's checkpoint steps in `dir`, ascending; none when there is no `dir`.
Result<std::vector<uint64_t>> checkpoint_steps(const std::string& dir, int stage) {
  std::vector<uint64_t> steps;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return steps;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    int s = -1;
    unsigned long long step = 0;
    const std::string name = entry.path().filename().string();
    // Only the exact names checkpoint_path() makes: no temporary files.
    if (std::sscanf(name.c_str(), "stage%d-step%llu", &s, &step) == 2 && s == stage &&
        checkpoint_path(dir, stage, step) == entry.path().string())
      steps.push_back(step);
  }
  if (ec) return error(TM_ERROR_SYSTEM, "list checkpoint directory ", dir, ": ", ec.message());
  std::ranges::sort(steps);
  return steps;
}

}  // namespace

Result<uint64_t> latest_checkpoint_step(const std::string& dir, int stage, uint64_t at_most) {
  TM_ASSIGN_OR_RETURN(auto steps, checkpoint_steps(dir, stage));
  uint64_t latest = 0;
  for (uint64_t s : steps) {
    if (s <= at_most) latest = s;  // ascending
  }
  return latest;
}

Status save_checkpoint(const std::string& dir, const ModelShape& shape, const StageSpan& span,
                       const TrainState& state, int keep) {
  TM_RETURN_IF_ERROR(record::make_directories(dir));
  const Header h = make_header(shape, span, state);
  const std::array<std::span<const std::byte>, 4> parts = {
      std::as_bytes(std::span(&h, 1)), bytes_of(state.params), bytes_of(state.adam_m),
      bytes_of(state.adam_v)};
  const std::string path = checkpoint_path(dir, span.stage, state.counters.step);
  auto written = record::write_file_atomic(path, parts, record::Replace::kYes);
  if (!written.ok()) return written.status().with_context("checkpoint");
  // Keep the `keep` latest: the stages of a pipeline may be one checkpoint apart.
  TM_ASSIGN_OR_RETURN(auto steps, checkpoint_steps(dir, span.stage));
  for (size_t i = 0; i + keep < steps.size(); ++i) {
    std::error_code ec;
    std::filesystem::remove(checkpoint_path(dir, span.stage, steps[i]), ec);
  }
  return Status::Ok();
}

Status load_checkpoint(const std::string& path, const ModelShape& shape, const StageSpan& span,
                       int batch, TrainState& state) {
  const size_t n = state.params.size(), payload = 3 * n * sizeof(float);
  // Read a file of another size too, to say what it was written for.
  constexpr size_t kMaxCheckpointBytes = size_t{1} << 34;
  auto file = record::read_file(path, std::max(sizeof(Header) + payload, kMaxCheckpointBytes));
  if (!file.ok()) return file.status().with_context("checkpoint");
  Header h{};
  if (file->size() < sizeof(Header))
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": truncated (", file->size(), " bytes)");
  std::memcpy(&h, file->data(), sizeof(Header));
  TM_RETURN_IF_ERROR(check_header(h, path, shape, span, n));
  if (h.counters.seed != state.counters.seed)
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": written by a run of seed ", h.counters.seed,
                 ", this run has seed ", state.counters.seed);
  if (h.counters.data_position != h.counters.step * static_cast<uint64_t>(batch))
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": data position ", h.counters.data_position,
                 " at step ", h.counters.step, " is not that of --batch ", batch);
  if (file->size() != sizeof(Header) + payload)
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": truncated (", file->size(), " bytes, ",
                 sizeof(Header) + payload, " expected)");
  const auto body = std::span(*file).subspan(sizeof(Header));
  if (crc32c(body) != h.payload_crc)
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": damaged payload (checksum mismatch)");
  std::vector<float>* parts[3] = {&state.params, &state.adam_m, &state.adam_v};
  for (size_t i = 0; i < 3; ++i)
    std::memcpy(parts[i]->data(), body.data() + i * n * sizeof(float), n * sizeof(float));
  state.counters = h.counters;
  return Status::Ok();
}

}  // namespace trainmover::gpt
