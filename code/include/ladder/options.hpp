// The runner's command line, parsed on the host with no CUDA involved, so
// that bad input is refused before anything touches the GPU (and so that the
// parser is tested on machines without one).
#pragma once

#include <cerrno>
#include <cstdlib>
#include <string>
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
  int trials = 7;            ///< timed trials; the median is reported
  int reps = 5;              ///< launches per trial
  double warmup_ms = 300.0;  ///< minimum warm-up before timing
  double budget_s = 0.0;     ///< skip timing a size whose timing would take longer (0: never)
  bool check_only = false;   ///< check correctness, do not time
  bool special_values = false;  ///< put NaN and infinities into A and B (checks only)
  std::string json_path;     ///< write results as JSON here when not empty
  int device = 0;
  unsigned seed = 20261130u;  ///< base seed; every check derives a fresh one from it
  bool help = false;
};

/// The result of parsing: the options, or one sentence saying what is wrong.
struct ParseResult {
  Options options;
  std::string error;  ///< empty when parsing succeeded
};

namespace detail {

inline bool parse_int(const std::string& text, long lo, long hi, long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi) return false;
  *out = value;
  return true;
}

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
      return parts[i] + " is too large: each side is at most 2^30 = " +
             std::to_string(kMaxDimension);
    }
    return expected;
  }
  if (parts.size() == 1) dims[1] = dims[2] = dims[0];
  *out = Size{static_cast<int>(dims[0]), static_cast<int>(dims[1]), static_cast<int>(dims[2])};
  return {};
}

}  // namespace detail

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
         "[--device I] [--seed N] [--special-values]\n"
         "  S is N (an N x N x N product) or MxNxK, each from 1 to 2^30; default 4096.\n"
         "  --check-only checks correctness against cuBLAS and does not time.\n"
         "  --special-values puts a NaN and infinities into A and B and checks that the\n"
         "    kernel's output has NaN and Inf exactly where cuBLAS's has (implies\n"
         "    --check-only).\n"
         "  --budget-s skips timing a size whose timing would take longer than S seconds.\n"
         "Exit codes: 0 correct, 1 incorrect or a CUDA error, 2 bad input, 77 no GPU.\n";
}

/// Parses argv. Never exits and never touches the GPU.
inline ParseResult parse_options(int argc, const char* const* argv) {
  ParseResult r;
  Options& o = r.options;
  bool sizes_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    // Every option but the flags takes one value; --sizes takes one or more.
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        r.error = arg + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    long n = 0;
    double x = 0;
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--check-only") {
      o.check_only = true;
    } else if (arg == "--special-values") {
      o.special_values = true;
    } else if (arg == "--sizes") {
      if (!sizes_given) o.sizes.clear();
      sizes_given = true;
      const size_t before = o.sizes.size();
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        Size s{};
        const std::string text = argv[++i];
        const std::string why = detail::parse_size(text, &s);
        if (!why.empty()) {
          r.error = "bad size '" + text + "': " + why;
          return r;
        }
        o.sizes.push_back(s);
      }
      if (o.sizes.size() == before) {
        r.error = "--sizes needs at least one size";
        return r;
      }
    } else if (arg == "--alpha" || arg == "--beta" || arg == "--warmup-ms" ||
               arg == "--budget-s") {
      if (!value(&v)) return r;
      if (!detail::parse_float(v, &x)) {
        r.error = "bad value '" + v + "' for " + arg + ": expected a finite number";
        return r;
      }
      if ((arg == "--warmup-ms" || arg == "--budget-s") && x < 0) {
        r.error = arg + " must not be negative";
        return r;
      }
      if (arg == "--alpha") o.alpha = static_cast<float>(x);
      if (arg == "--beta") o.beta = static_cast<float>(x);
      if (arg == "--warmup-ms") o.warmup_ms = x;
      if (arg == "--budget-s") o.budget_s = x;
    } else if (arg == "--trials" || arg == "--reps" || arg == "--device" || arg == "--seed") {
      if (!value(&v)) return r;
      const long lo = (arg == "--device" || arg == "--seed") ? 0 : 1;
      if (!detail::parse_int(v, lo, 1L << 30, &n)) {
        r.error = "bad value '" + v + "' for " + arg + ": expected an integer >= " +
                  std::to_string(lo);
        return r;
      }
      if (arg == "--trials") o.trials = static_cast<int>(n);
      if (arg == "--reps") o.reps = static_cast<int>(n);
      if (arg == "--device") o.device = static_cast<int>(n);
      if (arg == "--seed") o.seed = static_cast<unsigned>(n);
    } else if (arg == "--json") {
      if (!value(&v)) return r;
      o.json_path = v;
    } else {
      r.error = "unknown argument '" + arg + "' (try --help)";
      return r;
    }
  }
  if (o.special_values) o.check_only = true;
  return r;
}

/// Refuses sizes no chapter can compute: every kernel indexes with 32-bit
/// ints, so no matrix may hold 2^31 elements or more.
inline std::string check_index_range(const Size& s) {
  const long long limit = (1LL << 31) - 1;
  const long long mk = 1LL * s.M * s.K, kn = 1LL * s.K * s.N, mn = 1LL * s.M * s.N;
  if (mk > limit || kn > limit || mn > limit) {
    return "a matrix of this size has 2^31 elements or more, past the kernels' 32-bit indexing";
  }
  return {};
}

/// "MxNxK", as sizes are printed and parsed.
inline std::string to_string(const Size& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

}  // namespace ladder
