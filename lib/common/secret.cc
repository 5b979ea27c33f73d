#include "common/secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>

#include "common/bytes.h"

namespace trainmover {

Result<JobSecret> JobSecret::from_hex(std::string_view hex) {
  if (hex.size() < 2 * kMinBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "job secret has ", hex.size(), " hex digits; at least ",
                 2 * kMinBytes, " are required");
  }
  auto key = trainmover::from_hex(hex);
  if (!key.ok()) return key.status().with_context("job secret");
  return JobSecret(std::move(key).value());
}

Result<JobSecret> JobSecret::generate() {
  std::array<std::byte, 32> key;
  TM_RETURN_IF_ERROR(random_bytes(key));
  return JobSecret(std::string(reinterpret_cast<const char*>(key.data()), key.size()));
}

std::string JobSecret::to_hex() const { return trainmover::to_hex(as_bytes(key_)); }

Mac JobSecret::mac(std::span<const std::byte> message) const {
  Mac out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       reinterpret_cast<unsigned char*>(out.data()), &len);
  return out;
}

bool mac_equal(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status random_bytes(std::span<std::byte> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = getrandom(out.data() + done, out.size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("getrandom", errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<uint64_t> random_u64() {
  std::array<std::byte, 8> b;
  TM_RETURN_IF_ERROR(random_bytes(b));
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(b) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(b) & 15]);
  }
  return out;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

Result<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return error(TM_ERROR_INVALID_ARGUMENT, "odd number of hex digits");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = hex_value(hex[2 * i]);
    int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return error(TM_ERROR_INVALID_ARGUMENT, "not a hex digit at position ",
                   (hi < 0 ? 2 * i : 2 * i + 1));
    }
    out[i] = static_cast<char>(hi << 4 | lo);
  }
  return out;
}

}  // namespace trainmover
