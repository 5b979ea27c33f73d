// Little-endian encoding into and bounded decoding out of byte buffers.
// Every wire format in TrainMover is built with these, so no parser reads
// past the bytes it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trainmover {

// Appends little-endian fields to a growable buffer.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) : out_(out) {}

  void u8(uint8_t v) { put(&v, 1); }
  void u16(uint16_t v) { put_le(v); }
  void u32(uint32_t v) { put_le(v); }
  void u64(uint64_t v) { put_le(v); }
  void i32(int32_t v) { put_le(static_cast<uint32_t>(v)); }
  void bytes(std::span<const std::byte> b) { put(b.data(), b.size()); }
  // A u32 length followed by the bytes.
  void blob(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    put(s.data(), s.size());
  }

 private:
  template <typename T>
  void put_le(T v) {
    unsigned char b[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    put(b, sizeof(T));
  }
  void put(const void* p, size_t n) {
    const auto* bp = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), bp, bp + n);
  }
  std::vector<std::byte>& out_;
};

// Writes little-endian fields into a fixed buffer (the caller sized it).
class FixedWriter {
 public:
  explicit FixedWriter(std::span<std::byte> out) : out_(out) {}
  void u8(uint8_t v) { put_le(v); }
  void u16(uint16_t v) { put_le(v); }
  void u32(uint32_t v) { put_le(v); }
  void u64(uint64_t v) { put_le(v); }
  void i32(int32_t v) { put_le(static_cast<uint32_t>(v)); }
  void bytes(std::span<const std::byte> b) {
    if (pos_ + b.size() > out_.size()) return;
    std::memcpy(out_.data() + pos_, b.data(), b.size());
    pos_ += b.size();
  }
  size_t size() const { return pos_; }

 private:
  template <typename T>
  void put_le(T v) {
    if (pos_ + sizeof(T) > out_.size()) return;
    for (size_t i = 0; i < sizeof(T); ++i) out_[pos_ + i] = static_cast<std::byte>(v >> (8 * i));
    pos_ += sizeof(T);
  }
  std::span<std::byte> out_;
  size_t pos_ = 0;
};

// Reads little-endian fields; once a read runs past the end, ok() is false
// and every further read returns zero. Check ok() after the last read.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}

  uint8_t u8() { return get_le<uint8_t>(); }
  uint16_t u16() { return get_le<uint16_t>(); }
  uint32_t u32() { return get_le<uint32_t>(); }
  uint64_t u64() { return get_le<uint64_t>(); }
  int32_t i32() { return static_cast<int32_t>(get_le<uint32_t>()); }
  std::span<const std::byte> bytes(size_t n) {
    if (!take(n)) return {};
    return in_.subspan(pos_ - n, n);
  }
  // A u32 length then that many bytes; fails when the length exceeds max_len.
  std::string blob(size_t max_len) {
    uint32_t n = u32();
    if (n > max_len) {
      ok_ = false;
      return {};
    }
    auto b = bytes(n);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }

  bool ok() const { return ok_; }
  size_t remaining() const { return ok_ ? in_.size() - pos_ : 0; }

 private:
  bool take(size_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  template <typename T>
  T get_le() {
    if (!take(sizeof(T))) return 0;
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<T>(static_cast<T>(in_[pos_ - sizeof(T) + i]) << (8 * i));
    return v;
  }
  std::span<const std::byte> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

inline std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace trainmover
