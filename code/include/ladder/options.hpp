// The runner's command line, parsed on the host with no CUDA involved, so
// that bad input is refused before anything touches the GPU (and so that the
// parser is tested on machines without one).
#pragma once

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

/// One problem size: C is M x N, the shared dimension is K.
struct Size {
  int M;
  int N;
  int K;
};

/// What the user asked the runner to do.
struct Options {
  std::vector<Size> sizes{{4096, 4096, 4096}};
  float alpha = 1.0f;
  float beta = 0.0f;
  int trials = 7;               ///< timed trials; the median is reported
  int reps = 5;                 ///< launches per trial
  double warmup_ms = 300.0;     ///< minimum warm-up before timing
  double budget_s = 0.0;        ///< skip timing a size whose timing would take longer (0: never)
  bool check_only = false;      ///< check correctness, do not time
  bool special_values = false;  ///< put NaN and infinities into A and B (checks only)
  std::string json_path;        ///< write results as JSON here when not empty
  int device = 0;
  unsigned seed = 20261130u;  ///< base seed; every check derives a fresh one from it
  std::string variant;        ///< the variant to run (--variant); empty: the chapter's own
  bool describe = false;      ///< print the chapter's description as JSON and run nothing
  bool help = false;
};

/// The result of parsing: the options, or one sentence saying what is wrong.
struct ParseResult {
  Options options;
  std::string error;  ///< empty when parsing succeeded
};

/// Parses a whole decimal integer in [lo, hi] into `out`; false for anything else.
inline bool parse_int(const std::string& text, long lo, long hi, long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi) return false;
  *out = value;
  return true;
}

/// Parses a finite decimal number, within FP32's range, into `out`; false for anything else.
inline bool parse_float(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(value == value) || value > 3.0e38 || value < -3.0e38) {
    return false;
  }
  *out = value;
  return true;
}

namespace detail {

/// True when `text` is a whole number (digits only, no sign) of any length:
/// what a too-large dimension still is.
inline bool is_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

/// The largest side of a matrix the command line accepts.
constexpr long kMaxDimension = 1L << 30;

/// Parses "N" (a square N x N x N problem) or "MxNxK". Returns an empty
/// string, or one sentence that says what is wrong.
inline std::string parse_size(const std::string& text, Size* out) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text) {
    if (c == 'x' || c == 'X') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  const std::string expected = "expected a positive integer N or MxNxK";
  if (parts.size() != 1 && parts.size() != 3) return expected;
  long dims[3];
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parse_int(parts[i], 1, kMaxDimension, &dims[i])) continue;
    if (is_digits(parts[i]) && parts[i].find_first_not_of('0') != std::string::npos) {
      return parts[i] +
             " is too large: each side is at most 2^30 = " + std::to_string(kMaxDimension);
    }
    return expected;
  }
  if (parts.size() == 1) dims[1] = dims[2] = dims[0];
  *out = Size{static_cast<int>(dims[0]), static_cast<int>(dims[1]), static_cast<int>(dims[2])};
  return {};
}

}  // namespace detail

/// The command-line parser every program of the book shares. Each option is
/// declared once, with what it takes; parse() walks argv and returns one
/// sentence that says what is wrong, or an empty string. A flag takes no
/// value, a value option takes the next argument, a list option takes every
/// argument up to the next one that starts with "--".
class ArgParser {
 public:
  /// Takes one value: stores it and returns "", or returns why it is bad.
  using Take = std::function<std::string(const std::string& value)>;

  ArgParser& flag(const std::string& name, bool* target) {
    options_.push_back({name, Kind::kFlag, target, nullptr});
    return *this;
  }
  ArgParser& value(const std::string& name, Take take) {
    options_.push_back({name, Kind::kValue, nullptr, std::move(take)});
    return *this;
  }
  ArgParser& list(const std::string& name, Take take) {
    options_.push_back({name, Kind::kList, nullptr, std::move(take)});
    return *this;
  }

  /// Parses argv[1 ..]. Never exits and never touches the GPU.
  std::string parse(int argc, const char* const* argv) const {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const Option* option = find(arg);
      if (option == nullptr) return "unknown argument '" + arg + "' (try --help)";
      if (option->kind == Kind::kFlag) {
        *option->flag = true;
      } else if (option->kind == Kind::kValue) {
        if (i + 1 >= argc) return arg + " needs a value";
        const std::string why = option->take(argv[++i]);
        if (!why.empty()) return why;
      } else {
        int taken = 0;
        for (; i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0; ++taken) {
          const std::string why = option->take(argv[++i]);
          if (!why.empty()) return why;
        }
        if (taken == 0) return arg + " needs at least one value";
      }
    }
    return {};
  }

 private:
  enum class Kind { kFlag, kValue, kList };
  struct Option {
    std::string name;
    Kind kind;
    bool* flag;
    Take take;
  };
  const Option* find(const std::string& name) const {
    for (const Option& o : options_) {
      if (o.name == name) return &o;
    }
    return nullptr;
  }
  std::vector<Option> options_;
};

/// Takes an integer of at least `lo` (and at most 2^30) into `out`.
template <class Int>
ArgParser::Take integer_into(const std::string& name, long lo, Int* out) {
  return [name, lo, out](const std::string& text) {
    long n = 0;
    if (!parse_int(text, lo, 1L << 30, &n)) {
      return "bad value '" + text + "' for " + name +
             ": expected an integer >= " + std::to_string(lo);
    }
    *out = static_cast<Int>(n);
    return std::string();
  };
}

/// Takes a finite number into `out`; with `non_negative`, not below zero.
template <class Real>
ArgParser::Take number_into(const std::string& name, bool non_negative, Real* out) {
  return [name, non_negative, out](const std::string& text) {
    double x = 0;
    if (!parse_float(text, &x)) {
      return "bad value '" + text + "' for " + name + ": expected a finite number";
    }
    if (non_negative && x < 0) return name + " must not be negative";
    *out = static_cast<Real>(x);
    return std::string();
  };
}

/// Takes any text into `out`.
inline ArgParser::Take text_into(std::string* out) {
  return [out](const std::string& text) {
    *out = text;
    return std::string();
  };
}

/// The program's name as the user typed it, without its folder: what --help
/// and error lines call it.
inline std::string program_name(const char* argv0) {
  const std::string path = argv0 ? argv0 : "";
  const size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The text printed by --help for the program called `program`.
inline std::string usage(const std::string& program) {
  const std::string indent(program.size() + 8, ' ');
  return "usage: " + program +
         " [--sizes S [S ...]] [--alpha A] [--beta B] [--trials T] [--reps R]\n" + indent +
         "[--warmup-ms W] [--budget-s S] [--check-only] [--json FILE]\n" + indent +
         "[--device I] [--seed N] [--special-values] [--variant NAME]\n" + indent +
         "[--describe]\n"
         "  S is N (an N x N x N product) or MxNxK, each from 1 to 2^30; default 4096.\n"
         "  --check-only checks correctness against cuBLAS and does not time.\n"
         "  --special-values puts a NaN and infinities into A and B and checks that the\n"
         "    kernel's output has NaN and Inf exactly where cuBLAS's has (implies\n"
         "    --check-only).\n"
         "  --budget-s skips timing a size whose timing would take longer than S seconds.\n"
         "  --variant runs one of the chapter's variants (listed below) instead of its own.\n"
         "  --describe prints the chapter, its variants, their constants, kernels and the\n"
         "    sizes they accept as JSON, and runs nothing.\n"
         "Exit codes: 0 correct, 1 incorrect or a CUDA error, 2 bad input, 77 no GPU.\n";
}

/// Parses argv. Never exits and never touches the GPU.
inline ParseResult parse_options(int argc, const char* const* argv) {
  ParseResult r;
  Options& o = r.options;
  bool sizes_given = false;
  ArgParser parser;
  parser.flag("--help", &o.help)
      .flag("-h", &o.help)
      .flag("--check-only", &o.check_only)
      .flag("--special-values", &o.special_values)
      .flag("--describe", &o.describe)
      .list("--sizes",
            [&](const std::string& text) {
              if (!sizes_given) o.sizes.clear();  // the first size replaces the default
              sizes_given = true;
              Size s{};
              const std::string why = detail::parse_size(text, &s);
              if (!why.empty()) return "bad size '" + text + "': " + why;
              o.sizes.push_back(s);
              return std::string();
            })
      .value("--alpha", number_into("--alpha", false, &o.alpha))
      .value("--beta", number_into("--beta", false, &o.beta))
      .value("--warmup-ms", number_into("--warmup-ms", true, &o.warmup_ms))
      .value("--budget-s", number_into("--budget-s", true, &o.budget_s))
      .value("--trials", integer_into("--trials", 1, &o.trials))
      .value("--reps", integer_into("--reps", 1, &o.reps))
      .value("--device", integer_into("--device", 0, &o.device))
      .value("--seed", integer_into("--seed", 0, &o.seed))
      .value("--json", text_into(&o.json_path))
      .value("--variant", text_into(&o.variant));
  r.error = parser.parse(argc, argv);
  if (o.special_values) o.check_only = true;
  return r;
}

/// The most elements any matrix may hold: every kernel indexes with 32-bit ints.
constexpr long long kMaxMatrixElements = (1LL << 31) - 1;

/// Refuses sizes no chapter can compute: every kernel indexes with 32-bit
/// ints, so no matrix may hold 2^31 elements or more.
inline std::string check_index_range(const Size& s) {
  const long long mk = 1LL * s.M * s.K, kn = 1LL * s.K * s.N, mn = 1LL * s.M * s.N;
  if (mk > kMaxMatrixElements || kn > kMaxMatrixElements || mn > kMaxMatrixElements) {
    return "a matrix of this size has 2^31 elements or more, past the kernels' 32-bit indexing";
  }
  return {};
}

/// "MxNxK", as sizes are printed and parsed.
inline std::string to_string(const Size& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

}  // namespace ladder
