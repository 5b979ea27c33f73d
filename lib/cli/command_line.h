// CommandLine: how every TrainMover program reads its command line
// (trainmover-launch and the tools), on Boost.Program_options.
//
// One table per command describes each option once. The same table parses,
// checks each value with lib/common's parsers (sizes like 4K/16M, durations
// like 1.5m or 250ms, comma lists) against a range, fills options left unset
// from the TRAINMOVER_* variable the table names, and prints --help.
//
// Errors have one form on stderr, "PROGRAM: WHAT\nTry 'PROGRAM --help'.",
// where WHAT names the option (or the variable) and the value, and give exit
// status 2 (kExitUsage). An option given twice is an error; long options are
// never abbreviated.
//
// Contract: a destination (`out`) is written only when its option is given
// or its variable is set, and only with a value that passed its checks; so
// the caller's initial value is the default. The destinations must outlive
// parse(). Not thread-safe: build and use it in one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace boost::program_options {
class options_description;
class variable_value;
}  // namespace boost::program_options

namespace trainmover::cli {

inline constexpr int kExitUsage = 2;

// What the arguments that are not options are.
enum class Operands {
  kNone,             // there must be none
  kAny,              // operands (file names), anywhere on the line
  kProgram,          // the first one, or whatever follows "--", starts a program's
                     // argv: it and everything after belong to that program
  kOptionalProgram,  // as kProgram, but the line may have none: a mode that
                     // runs no program (the caller checks which mode needs one)
};

class CommandLine {
 public:
  // Turns an option's text into its destination, or says what is wrong with
  // it (without naming the option: the caller's context does).
  using Parser = std::function<Status(std::string_view text)>;

  // `program` as in messages ("trainmover-bench switch"); `usage` the
  // synopsis after "Usage: "; `summary` the lines that follow it in --help.
  CommandLine(std::string program, std::string usage, std::string summary);

  // Starts a titled group of options in --help.
  CommandLine& section(std::string title);

  // `names` are Boost's: "nprocs,n" for --nprocs and -n, "json" for --json
  // only. `arg` names the value in --help ("N", "SIZE").
  CommandLine& flag(const char* names, bool& out, const char* help);
  CommandLine& integer(const char* names, const char* arg, int64_t min, int64_t max, int64_t& out,
                       const char* help);
  CommandLine& integer(const char* names, const char* arg, int64_t min, int64_t max, int& out,
                       const char* help);
  // A real number in [min, max]; infinities and NaN are refused.
  CommandLine& number(const char* names, const char* arg, double min, double max, double& out,
                      const char* help);
  // A size ("4096", "4K", "16M") in [min, max].
  CommandLine& size(const char* names, const char* arg, uint64_t min, uint64_t max, uint64_t& out,
                    const char* help);
  // A duration in seconds ("90", "0.5", "250ms", "1.5m") in [min, max].
  CommandLine& duration(const char* names, const char* arg, double min, double max, double& out,
                        const char* help);
  CommandLine& text(const char* names, const char* arg, std::string& out, const char* help);
  // A comma list of integers, each in [min, max]; duplicates dropped.
  CommandLine& integer_list(const char* names, const char* arg, int64_t min, int64_t max,
                            std::vector<int64_t>& out, const char* help);
  // A comma list of names among `known`; duplicates dropped, none empty.
  CommandLine& choice_list(const char* names, const char* arg, std::vector<std::string> known,
                           std::vector<std::string>& out, const char* help);
  // Any other value, parsed by `parser`.
  CommandLine& custom(const char* names, const char* arg, Parser parser, const char* help);

  // The option added last must be given.
  CommandLine& required();
  // The option added last takes its value from `variable` when not given
  // (a flag: "1" sets it, "0" clears it). --help says so.
  CommandLine& from_env(const char* variable);

  // What the operands are, and where they go (see Operands).
  CommandLine& operands(Operands kind, const char* name, std::vector<std::string>& out);
  // Text printed after the options in --help.
  CommandLine& epilog(std::string text);

  // Parses argv[1..argc): --help prints help() on stdout and gives 0; a bad
  // command line prints the error and gives kExitUsage; nullopt: go on.
  std::optional<int> parse(int argc, const char* const* argv);
  std::optional<int> parse(const std::vector<std::string>& args);

  // Prints `message` in the one error form and returns kExitUsage, for
  // checks that involve several options.
  int usage_error(const std::string& message) const;

  std::string help() const;

 private:
  struct Option {
    std::string long_name;
    char short_name = 0;
    std::string arg;  // empty for a flag
    std::string help;
    bool* flag = nullptr;  // set for a flag
    Parser parser;         // set for an option with a value
    bool required = false;
    std::string env;  // the variable giving its default, or empty
    size_t section = 0;
  };
  Status parse_tokens(const std::vector<std::string>& args, bool& help_asked);
  boost::program_options::options_description boost_options() const;
  Status apply_option(const Option& option,
                      const boost::program_options::variable_value& value) const;
  Status apply_operands(std::vector<std::string> operands) const;
  Status apply(const Option& option, const std::string& text, const std::string& context) const;
  CommandLine& add(const char* names, const char* arg, Parser parser, const char* help);

  std::string program_, usage_, summary_, epilog_;
  std::vector<Option> options_;
  std::vector<std::string> titles_;  // by section index
  Operands operand_kind_ = Operands::kNone;
  std::string operand_name_;
  std::vector<std::string>* operands_ = nullptr;
};

// Prints "PROGRAM: MESSAGE\nTry 'PROGRAM --help'." on stderr; returns kExitUsage.
int print_usage_error(const std::string& program, const std::string& message);

}  // namespace trainmover::cli
