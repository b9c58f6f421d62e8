// The command line of the book's CPU tools (bankmap, warpmap, fragmap,
// tailplan, lastround, archs): the parser every program of the book shares
// (ladder/options.hpp's ArgParser), and one way to refuse. A bad command line
// prints "<tool>: <one sentence>" and exits with 2, as the chapters' binaries
// do.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ladder/options.hpp>
#include <string>
#include <vector>

namespace tools {

/// Prints "<tool>: <message>" on stderr and exits with 2.
[[noreturn]] inline void fail(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", tool, message.c_str());
  std::exit(2);
}

/// Parses argv with `parser`; prints `usage` and exits with 0 for --help,
/// fails for anything the parser refuses.
inline void parse_or_fail(const char* tool, ladder::ArgParser& parser, const char* usage, int argc,
                          char** argv) {
  bool help = false;
  parser.flag("--help", &help).flag("-h", &help);
  const std::string why = parser.parse(argc, argv);
  if (!why.empty()) fail(tool, why);
  if (help) {
    std::printf("%s", usage);
    std::exit(0);
  }
}

/// Takes a whole number from `lo` to `hi` into `out`.
inline ladder::ArgParser::Take integer_into(const std::string& name, long lo, long hi, int* out) {
  return [name, lo, hi, out](const std::string& text) {
    long n = 0;
    if (!ladder::parse_int(text, lo, hi, &n)) {
      return "bad value '" + text + "' for " + name + ": expected a whole number from " +
             std::to_string(lo) + " to " + std::to_string(hi);
    }
    *out = static_cast<int>(n);
    return std::string();
  };
}

/// Takes one size, N (an N x N x N product) or MxNxK, as the chapters'
/// --sizes reads it, onto `out`.
inline ladder::ArgParser::Take size_into(const std::string& name, std::vector<ladder::Size>* out) {
  return [name, out](const std::string& text) {
    ladder::Size size{};
    const std::string why = ladder::detail::parse_size(text, &size);
    if (!why.empty()) return "bad value '" + text + "' for " + name + ": " + why;
    out->push_back(size);
    return std::string();
  };
}

/// Takes one name onto `out`.
inline ladder::ArgParser::Take name_into(std::vector<std::string>* out) {
  return [out](const std::string& text) {
    out->push_back(text);
    return std::string();
  };
}

}  // namespace tools
