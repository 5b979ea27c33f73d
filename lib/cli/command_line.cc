#include "cli/command_line.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/parse.h"
#include "common/str.h"

namespace po = boost::program_options;

namespace trainmover::cli {
namespace {

// The hidden option that collects the operands.
constexpr const char* kOperandsKey = "operands";
// Where descriptions start in --help, and where lines end.
constexpr size_t kHelpColumn = 28;
constexpr size_t kHelpWidth = 79;

// getopt_long's habits, minus guessing: a long option is spelled in full.
constexpr int kStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

// Operands::kProgram: the first argument that is not an option, or the
// argument after "--", takes itself and every argument after it.
std::vector<po::option> take_program(std::vector<std::string>& args) {
  if (args.empty()) return {};
  const std::string& first = args.front();
  const bool terminator = first == "--";
  if (!terminator && first.size() > 1 && first[0] == '-') return {};
  po::option program;
  program.string_key = kOperandsKey;
  program.value.assign(args.begin() + (terminator ? 1 : 0), args.end());
  program.original_tokens = args;
  args.clear();
  if (program.value.empty()) return {};
  return {program};
}

Result<double> parse_real(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [stop, code] = std::from_chars(text.data(), end, value);
  if (text.empty() || code != std::errc() || stop != end || !std::isfinite(value))
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not a number");
  return value;
}

template <typename T>
Status check_range(std::string_view text, T value, T min, T max, const std::string& shown_min,
                   const std::string& shown_max) {
  if (value < min || value > max) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is out of range [", shown_min, ", ",
                 shown_max, "]");
  }
  return Status::Ok();
}

std::string shown(double v) { return str_cat(v); }

// Boost's exceptions in the wording of every other message here.
std::string describe(const po::error& e) {
  auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
  std::string option = named != nullptr ? named->get_option_name() : "";
  if (named == nullptr || option.empty()) return e.what();
  if (dynamic_cast<const po::unknown_option*>(&e) != nullptr)
    return str_cat("unknown option '", option, "'");
  if (dynamic_cast<const po::multiple_occurrences*>(&e) != nullptr)
    return str_cat(option, " is given more than once");
  if (auto* syntax = dynamic_cast<const po::invalid_command_line_syntax*>(&e)) {
    if (syntax->kind() == po::invalid_syntax::missing_parameter)
      return str_cat(option, " needs a value");
    if (syntax->kind() == po::invalid_syntax::extra_parameter)
      return str_cat(option, " takes no value");
  }
  return e.what();
}

// Appends `words` to `out`, wrapped at kHelpWidth, continuation lines
// indented to kHelpColumn; `column` is where the text starts. A line break
// in `words` is a space: only this function decides where lines end.
void append_wrapped(std::string& out, std::string words, size_t column) {
  std::replace(words.begin(), words.end(), '\n', ' ');
  size_t at = column;
  bool first = true;
  for (std::string_view word : split(words, ' ')) {
    if (word.empty()) continue;
    if (!first && at + 1 + word.size() > kHelpWidth) {
      out += "\n" + std::string(kHelpColumn, ' ');
      at = kHelpColumn;
    } else if (!first) {
      out += ' ';
      ++at;
    }
    out += word;
    at += word.size();
    first = false;
  }
  out += '\n';
}

}  // namespace

int print_usage_error(const std::string& program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program.c_str(), message.c_str(),
               program.c_str());
  return kExitUsage;
}

CommandLine::CommandLine(std::string program, std::string usage, std::string summary)
    : program_(std::move(program)), usage_(std::move(usage)), summary_(std::move(summary)) {
  titles_.emplace_back();
}

CommandLine& CommandLine::section(std::string title) {
  titles_.push_back(std::move(title));
  return *this;
}

CommandLine& CommandLine::add(const char* names, const char* arg, Parser parser, const char* help) {
  Option option;
  std::string_view all = names;
  size_t comma = all.find(',');
  option.long_name = std::string(all.substr(0, comma));
  if (comma != std::string_view::npos) option.short_name = all[comma + 1];
  option.arg = arg != nullptr ? arg : "";
  option.help = help;
  option.parser = std::move(parser);
  option.section = titles_.size() - 1;
  options_.push_back(std::move(option));
  return *this;
}

CommandLine& CommandLine::flag(const char* names, bool& out, const char* help) {
  add(names, nullptr, nullptr, help);
  options_.back().flag = &out;
  return *this;
}

CommandLine& CommandLine::integer(const char* names, const char* arg, int64_t min, int64_t max,
                                  int64_t& out, const char* help) {
  return add(
      names, arg,
      [&out, min, max](std::string_view text) -> Status {
        TM_ASSIGN_OR_RETURN(out, parse_int(text, min, max));
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::integer(const char* names, const char* arg, int64_t min, int64_t max,
                                  int& out, const char* help) {
  return add(
      names, arg,
      [&out, min, max](std::string_view text) -> Status {
        TM_ASSIGN_OR_RETURN(int64_t value, parse_int(text, min, max));
        out = static_cast<int>(value);
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::number(const char* names, const char* arg, double min, double max,
                                 double& out, const char* help) {
  return add(
      names, arg,
      [&out, min, max](std::string_view text) -> Status {
        TM_ASSIGN_OR_RETURN(double value, parse_real(text));
        TM_RETURN_IF_ERROR(check_range(text, value, min, max, shown(min), shown(max)));
        out = value;
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::size(const char* names, const char* arg, uint64_t min, uint64_t max,
                               uint64_t& out, const char* help) {
  return add(
      names, arg,
      [&out, min, max](std::string_view text) -> Status {
        TM_ASSIGN_OR_RETURN(uint64_t value, parse_size(text));
        TM_RETURN_IF_ERROR(check_range(text, value, min, max,
                                       format_bytes(static_cast<double>(min)),
                                       format_bytes(static_cast<double>(max))));
        out = value;
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::duration(const char* names, const char* arg, double min, double max,
                                   double& out, const char* help) {
  return add(
      names, arg,
      [&out, min, max](std::string_view text) -> Status {
        auto range = [&] {
          return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is out of range [", min, " s, ",
                       max, " s]");
        };
        if (text.starts_with('-')) return range();  // a number, but negative
        TM_ASSIGN_OR_RETURN(double value, parse_seconds(text));
        if (!std::isfinite(value) || value < min || value > max) return range();
        out = value;
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::text(const char* names, const char* arg, std::string& out,
                               const char* help) {
  return add(
      names, arg,
      [&out](std::string_view text) -> Status {
        if (text.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "empty value");
        out = std::string(text);
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::integer_list(const char* names, const char* arg, int64_t min, int64_t max,
                                       std::vector<int64_t>& out, const char* help) {
  return add(
      names, arg,
      [&out, min, max](std::string_view text) -> Status {
        TM_ASSIGN_OR_RETURN(std::vector<int64_t> values, parse_int_list(text, min, max));
        out.clear();
        for (int64_t v : values) {
          if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        }
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::choice_list(const char* names, const char* arg,
                                      std::vector<std::string> known, std::vector<std::string>& out,
                                      const char* help) {
  return add(
      names, arg,
      [&out, known = std::move(known)](std::string_view text) -> Status {
        std::vector<std::string> chosen;
        for (std::string_view name : split(text, ',')) {
          if (std::find(known.begin(), known.end(), name) == known.end()) {
            std::string all;
            for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
            return error(TM_ERROR_INVALID_ARGUMENT, "'", name, "' is not one of: ", all);
          }
          if (std::find(chosen.begin(), chosen.end(), name) == chosen.end())
            chosen.emplace_back(name);
        }
        out = std::move(chosen);
        return Status::Ok();
      },
      help);
}

CommandLine& CommandLine::custom(const char* names, const char* arg, Parser parser,
                                 const char* help) {
  return add(names, arg, std::move(parser), help);
}

CommandLine& CommandLine::required() {
  options_.back().required = true;
  return *this;
}

CommandLine& CommandLine::from_env(const char* variable) {
  options_.back().env = variable;
  return *this;
}

CommandLine& CommandLine::operands(Operands kind, const char* name, std::vector<std::string>& out) {
  operand_kind_ = kind;
  operand_name_ = name;
  operands_ = &out;
  return *this;
}

CommandLine& CommandLine::epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

Status CommandLine::apply(const Option& option, const std::string& text,
                          const std::string& context) const {
  if (option.flag == nullptr) return option.parser(text).with_context(context);
  if (text != "0" && text != "1")
    return error(TM_ERROR_INVALID_ARGUMENT, context, ": '", text, "' is neither 1 nor 0");
  *option.flag = text == "1";
  return Status::Ok();
}

// What Boost needs to split the line: every option by name, each value kept
// as text for our own parsers, the operands under kOperandsKey.
po::options_description CommandLine::boost_options() const {
  po::options_description described;
  described.add_options()("help,h", po::bool_switch(), "");
  for (const Option& o : options_) {
    std::string names = o.long_name;
    if (o.short_name != 0) names += std::string(",") + o.short_name;
    if (o.flag != nullptr) {
      described.add_options()(names.c_str(), po::bool_switch(), "");
    } else {
      described.add_options()(names.c_str(), po::value<std::string>(), "");
    }
  }
  described.add_options()(kOperandsKey, po::value<std::vector<std::string>>()->multitoken(), "");
  return described;
}

Status CommandLine::apply_option(const Option& o, const po::variable_value& value) const {
  if (!value.empty() && !value.defaulted()) {
    if (o.flag != nullptr) {
      *o.flag = true;
      return Status::Ok();
    }
    return apply(o, value.as<std::string>(), "--" + o.long_name);
  }
  if (auto text = o.env.empty() ? std::nullopt : get_env(o.env.c_str()))
    return apply(o, *text, str_cat(o.env, " (the default of --", o.long_name, ")"));
  if (o.required) return error(TM_ERROR_INVALID_ARGUMENT, "--", o.long_name, " is required");
  return Status::Ok();
}

Status CommandLine::apply_operands(std::vector<std::string> operands) const {
  if (operand_kind_ == Operands::kNone && !operands.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "unexpected argument '", operands.front(), "'");
  if (operand_kind_ == Operands::kProgram && operands.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "no ", operand_name_, " given");
  if (operands_ != nullptr) *operands_ = std::move(operands);
  return Status::Ok();
}

Status CommandLine::parse_tokens(const std::vector<std::string>& args, bool& help_asked) {
  po::positional_options_description positional;
  positional.add(kOperandsKey, -1);
  const po::options_description described = boost_options();  // the parser keeps a pointer
  po::variables_map given;
  try {  // Boost reports by exception; nothing beyond this block does
    po::command_line_parser parser(args);
    parser.options(described).positional(positional).style(kStyle);
    if (operand_kind_ == Operands::kProgram || operand_kind_ == Operands::kOptionalProgram)
      parser.extra_style_parser(take_program);
    po::store(parser.run(), given);
  } catch (const po::error& e) {
    return error(TM_ERROR_INVALID_ARGUMENT, describe(e));
  }
  if (given["help"].as<bool>()) {
    help_asked = true;
    return Status::Ok();
  }
  std::vector<std::string> operands;
  if (given.count(kOperandsKey) != 0) operands = given[kOperandsKey].as<std::vector<std::string>>();
  for (const Option& o : options_) TM_RETURN_IF_ERROR(apply_option(o, given[o.long_name]));
  return apply_operands(std::move(operands));
}

std::optional<int> CommandLine::parse(const std::vector<std::string>& args) {
  bool help_asked = false;
  Status status = parse_tokens(args, help_asked);
  if (!status.ok()) return usage_error(status.message());
  if (help_asked) {
    std::fputs(help().c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

std::optional<int> CommandLine::parse(int argc, const char* const* argv) {
  return parse(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
}

int CommandLine::usage_error(const std::string& message) const {
  return print_usage_error(program_, message);
}

std::string CommandLine::help() const {
  std::string out = str_cat("Usage: ", usage_, "\n", summary_);
  if (!summary_.empty() && summary_.back() != '\n') out += '\n';
  auto describe = [&out](const Option& o) {
    std::string left = o.short_name != 0 ? str_cat("  -", o.short_name, ", --") : "      --";
    left += o.long_name;
    if (!o.arg.empty()) left += " " + o.arg;
    out += left;
    if (left.size() + 1 >= kHelpColumn) {
      out += "\n" + std::string(kHelpColumn, ' ');
    } else {
      out += std::string(kHelpColumn - left.size(), ' ');
    }
    std::string words = o.help;
    if (!o.env.empty()) words += str_cat(" [default: $", o.env, " when set]");
    if (o.required) words += " (required)";
    append_wrapped(out, words, kHelpColumn);
  };
  for (size_t section = 0; section < titles_.size(); ++section) {
    const bool has_options = std::any_of(options_.begin(), options_.end(),
                                         [&](const Option& o) { return o.section == section; });
    if (has_options || section == titles_.size() - 1) out += "\n";
    if (!titles_[section].empty()) out += titles_[section] + ":\n";
    for (const Option& o : options_) {
      if (o.section == section) describe(o);
    }
  }
  Option help_option;
  help_option.long_name = "help";
  help_option.short_name = 'h';
  help_option.help = "show this help";
  describe(help_option);
  if (!epilog_.empty()) out += "\n" + epilog_ + (epilog_.back() == '\n' ? "" : "\n");
  return out;
}

}  // namespace trainmover::cli
