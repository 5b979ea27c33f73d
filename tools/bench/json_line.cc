#include "json_line.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace trainmover::bench {
namespace {

int hex_digit(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A small cursor over one line; each method consumes what it recognises.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  Result<std::string> string() {
    if (!consume('"')) return fail("expected '\"'");
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        TM_ASSIGN_OR_RETURN(c, escaped());
      }
      out += c;
    }
    if (pos_ >= text_.size()) return fail("unterminated string");
    ++pos_;
    return out;
  }
  // The character an escape after '\\' stands for; \uXXXX only for ASCII,
  // which is all that JsonLine writes that way.
  Result<char> escaped() {
    if (pos_ >= text_.size()) return fail("unterminated escape");
    char e = text_[pos_++];
    switch (e) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'u': {
        if (pos_ + 4 > text_.size()) return fail("short \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text_[pos_++];
          int digit = hex_digit(h);
          if (digit < 0) return fail("bad \\u escape");
          code = code * 16 + static_cast<unsigned>(digit);
        }
        if (code >= 0x80) return fail("non-ASCII \\u escape");
        return static_cast<char>(code);
      }
      default:
        return e;  // '"', '\\', '/'
    }
  }
  // A string's contents, or a bare value (number, true, false, null) as text.
  Result<std::string> value() {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '"') return string();
    return bare();
  }
  // A bare value up to ',' or '}'.
  Result<std::string> bare() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != ' ')
      ++pos_;
    if (pos_ == start) return fail("expected a value");
    return std::string(text_.substr(start, pos_ - start));
  }
  Status fail(const std::string& what) const {
    return error(TM_ERROR_INVALID_ARGUMENT, "bad JSON line at column ", pos_ + 1, ": ", what,
                 " in: ", text_);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

JsonLine& JsonLine::add(const std::string& key, const std::string& value) {
  fields_.emplace_back(key, quote(value));
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, double value) {
  if (!std::isfinite(value)) {
    fields_.emplace_back(key, "null");
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  fields_.emplace_back(key, buf);
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, long long value) {
  fields_.emplace_back(key, std::to_string(value));
  return *this;
}

std::string JsonLine::str() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0) out += ",";
    out += quote(fields_[i].first) + ":" + fields_[i].second;
  }
  return out + "}";
}

Result<JsonObject> JsonObject::parse(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  Reader in(line);
  JsonObject object;
  if (!in.consume('{')) return in.fail("expected '{'");
  if (in.consume('}')) return in.at_end() ? Result<JsonObject>(object) : in.fail("text after '}'");
  for (;;) {
    TM_ASSIGN_OR_RETURN(std::string key, in.string());
    if (!in.consume(':')) return in.fail("expected ':'");
    TM_ASSIGN_OR_RETURN(std::string value, in.value());
    object.values_[key] = std::move(value);
    if (in.consume(',')) continue;
    if (!in.consume('}')) return in.fail("expected ',' or '}'");
    if (!in.at_end()) return in.fail("text after '}'");
    return object;
  }
}

std::optional<std::string> JsonObject::string(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<double> JsonObject::number(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return error(TM_ERROR_INVALID_ARGUMENT, "JSON key '", key, "' missing");
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0') {
    return error(TM_ERROR_INVALID_ARGUMENT, "JSON key '", key, "' is not a number: ", it->second);
  }
  return v;
}

}  // namespace trainmover::bench
