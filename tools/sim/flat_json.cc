#include "flat_json.h"

#include <cctype>
#include <charconv>
#include <stdexcept>

namespace tmsim {
namespace {

class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void Expect(char wanted) {
    SkipSpace();
    if (Peek() != wanted) Fail(std::string("expected '") + wanted + "'");
    ++pos_;
  }

  std::string String() {
    Expect('"');
    std::string out;
    while (!AtEnd() && Peek() != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (AtEnd()) Fail("unterminated escape");
        c = text_[pos_++];
        if (c == 'n') c = '\n';
        if (c == 't') c = '\t';
      }
      out.push_back(c);
    }
    Expect('"');
    return out;
  }

  FlatValue Value() {
    SkipSpace();
    if (Peek() == '"') return String();
    if (Consume("true")) return true;
    if (Consume("false")) return false;
    if (Consume("null")) return std::monostate{};
    return Number();
  }

  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error(what + " at column " + std::to_string(pos_ + 1));
  }

 private:
  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  double Number() {
    double value = 0;
    const char* begin = text_.data() + pos_;
    const auto [end, error] = std::from_chars(begin, text_.data() + text_.size(), value);
    if (error != std::errc() || end == begin) Fail("expected a value");
    pos_ += static_cast<std::size_t>(end - begin);
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

FlatObject ParseFlatJsonObject(std::string_view text) {
  Cursor cursor(text);
  FlatObject object;
  cursor.Expect('{');
  cursor.SkipSpace();
  if (cursor.Peek() == '}') {
    cursor.Expect('}');
  } else {
    for (;;) {
      std::string key = cursor.String();
      cursor.Expect(':');
      object[key] = cursor.Value();
      cursor.SkipSpace();
      if (cursor.Peek() == ',') {
        cursor.Expect(',');
        continue;
      }
      cursor.Expect('}');
      break;
    }
  }
  cursor.SkipSpace();
  if (!cursor.AtEnd()) cursor.Fail("trailing characters");
  return object;
}

}  // namespace tmsim
