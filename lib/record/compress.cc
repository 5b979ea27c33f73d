#include "record/compress.h"

#include "config.h"  // HAVE_ZSTD

#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

namespace trainmover::record {

#ifdef HAVE_ZSTD

namespace {
// Level 3 (zstd's default): fast enough to run at the end of a recording.
constexpr int kLevel = 3;
}  // namespace

bool zstd_available() { return true; }

Result<std::vector<std::byte>> zstd_compress(std::span<const std::byte> raw) {
  std::vector<std::byte> out(ZSTD_compressBound(raw.size()));
  size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), kLevel);
  if (ZSTD_isError(n)) return error(TM_ERROR_INTERNAL, "zstd compression: ", ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

Result<std::vector<std::byte>> zstd_decompress(std::span<const std::byte> stored,
                                               size_t raw_bytes) {
  unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN ||
      declared != raw_bytes) {
    return error(TM_ERROR_PROTOCOL, "corrupted: the compressed body does not declare the ",
                 raw_bytes, " bytes the header says");
  }
  std::vector<std::byte> out(raw_bytes);
  size_t n = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw_bytes) {
    return error(TM_ERROR_PROTOCOL, "corrupted: the compressed body does not decompress (",
                 ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short", ")");
  }
  return out;
}

#else

namespace {
Status no_zstd(const char* what) {
  return error(TM_ERROR_UNSUPPORTED, what,
               " needs zstd, and this build has none (install libzstd-dev and re-run configure)");
}
}  // namespace

bool zstd_available() { return false; }

Result<std::vector<std::byte>> zstd_compress(std::span<const std::byte>) {
  return no_zstd("trace compression");
}

Result<std::vector<std::byte>> zstd_decompress(std::span<const std::byte>, size_t) {
  return no_zstd("reading a compressed trace");
}

#endif

}  // namespace trainmover::record
