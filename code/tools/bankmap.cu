// bankmap: prints which bank each lane of one warp-wide shared-memory access
// hits, and how many wavefronts the access takes, from the bank model in
// ladder/bank_model.hpp. CPU only: nothing here runs on a GPU.
//
//   bankmap --list                       names of the accesses it knows
//   bankmap NAME [NAME...] [--json]      those accesses
//   bankmap --all [--json]               every access it knows
//   bankmap --stride S [--width W] [--lanes N] [--group G] [--json]
//       a column walk: lane i reads W bytes at the start of row i of a float
//       tile whose rows are S floats long (byte address 4 * S * i)
//
// The accesses of the chapters come from the chapters' own constexpr index
// functions: the kernel file is included here with LADDER_NO_MAIN defined, so
// the table printed is computed from the code that runs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ladder/bank_model.hpp>
#include <ladder/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#define LADDER_NO_MAIN
#include "chapters/04-smem-tiling/kernel.cu"
#undef LADDER_NO_MAIN

namespace {

using ladder::bank::Analysis;

/// One access the tool can print: a name, one line saying what it is, and
/// the byte address of every lane.
struct NamedAccess {
  const char* name;
  const char* what;
  int width_bytes;
  std::vector<std::uint32_t> (*addresses)();
};

constexpr int kWarp = 32;

/// Byte addresses of a warp whose lane l reads float number index_of_lane(l).
template <typename IndexOfLane>
std::vector<std::uint32_t> warp_of_floats(IndexOfLane index_of_lane) {
  std::vector<std::uint32_t> addresses(kWarp);
  for (int lane = 0; lane < kWarp; ++lane) {
    addresses[lane] = static_cast<std::uint32_t>(index_of_lane(lane)) * sizeof(float);
  }
  return addresses;
}

// The transpose exercise: a warp reads one column of a 32-row float tile,
// lane r reading row r. The index arithmetic is the whole lesson, so it is
// spelled out here rather than hidden in a helper.
constexpr int kColumn = 0;

std::vector<std::uint32_t> tile32x32_column_read() {
  return warp_of_floats([](int row) { return row * 32 + kColumn; });
}
std::vector<std::uint32_t> tile32x33_column_read() {
  return warp_of_floats([](int row) { return row * 33 + kColumn; });
}
// Element (row, col) stored at row * 32 + (col ^ row): the column index is
// swizzled by the row, so a column spreads over all 32 banks without padding.
std::vector<std::uint32_t> tile32x32_xor_column_read() {
  return warp_of_floats([](int row) { return row * 32 + (kColumn ^ row); });
}

// Chapter 04, the first warp (threads 0..31) of a block, dot_idx = 0.
std::vector<std::uint32_t> ch04_a_store() { return warp_of_floats(ch04::a_store_index); }
std::vector<std::uint32_t> ch04_a_load() {
  return warp_of_floats([](int tid) { return ch04::a_load_index(tid, 0); });
}
std::vector<std::uint32_t> ch04_b_load() {
  return warp_of_floats([](int tid) { return ch04::b_load_index(tid, 0); });
}

/// Every named access. To add one, write a function that returns the lanes'
/// byte addresses (from a chapter's index functions) and list it here.
const std::vector<NamedAccess>& registry() {
  static const std::vector<NamedAccess> accesses = {
      {"transpose.32x32.column-read", "column of a 32x32 float tile, lane r reads row r", 4,
       tile32x32_column_read},
      {"transpose.32x33.column-read", "column of a 32x32 tile padded to rows of 33 floats", 4,
       tile32x33_column_read},
      {"transpose.32x32-xor.column-read", "column of a 32x32 tile stored at row*32 + (col^row)", 4,
       tile32x32_xor_column_read},
      {"ch04.a-store", "chapter 04: As[a_store_index(tid)] = ..., threads 0..31", 4, ch04_a_store},
      {"ch04.a-load", "chapter 04: As[a_load_index(tid, 0)], threads 0..31", 4, ch04_a_load},
      {"ch04.b-load", "chapter 04: Bs[b_load_index(tid, 0)], threads 0..31", 4, ch04_b_load},
  };
  return accesses;
}

/// What is printed for one access.
struct Report {
  std::string name;
  std::string what;
  std::vector<std::uint32_t> addresses;
  Analysis analysis;
};

std::string bank_range(int first_bank, int width_bytes) {
  const int banks = width_bytes / ladder::bank::kBankBytes;
  if (banks == 1) return std::to_string(first_bank);
  return std::to_string(first_bank) + "-" + std::to_string(first_bank + banks - 1);
}

void print_text(const Report& r) {
  const Analysis& a = r.analysis;
  std::printf("%s: %s\n", r.name.c_str(), r.what.c_str());
  std::printf(
      "  %d lanes, %d-byte access, group %d: %d wavefronts, ideal %d, conflict degree %.2f\n",
      a.lanes, a.width_bytes, a.group_size, a.wavefronts, a.ideal_wavefronts, a.conflict_degree());
  std::printf("  lane   byte address   word     bank(s)\n");
  for (int lane = 0; lane < a.lanes; ++lane) {
    if (a.bank[lane] < 0) {
      std::printf("  %4d   inactive\n", lane);
      continue;
    }
    std::printf("  %4d   %12u   %6u   %s\n", lane, r.addresses[lane],
                r.addresses[lane] / ladder::bank::kBankBytes,
                bank_range(a.bank[lane], a.width_bytes).c_str());
  }
  std::printf("  distinct words per bank, one line per phase:\n");
  std::printf("  lanes    bank:");
  for (int b = 0; b < ladder::bank::kBanks; ++b) std::printf("%3d", b);
  std::printf("   wavefronts\n");
  for (int p = 0; p < a.phase_count; ++p) {
    const ladder::bank::Phase& phase = a.phases[p];
    std::printf("  %2d-%-2d         ", phase.first_lane, phase.first_lane + phase.lanes - 1);
    for (int count : phase.words_per_bank) {
      if (count == 0) {
        std::printf("  .");
      } else {
        std::printf("%3d", count);
      }
    }
    std::printf("   %d\n", phase.wavefronts);
  }
  std::printf("\n");
}

ladder::Json to_json(const Report& r) {
  const Analysis& a = r.analysis;
  ladder::Json lanes = ladder::Json::array();
  for (int lane = 0; lane < a.lanes; ++lane) {
    ladder::Json entry = ladder::Json::object();
    entry.set("lane", lane);
    entry.set("active", a.bank[lane] >= 0);
    entry.set("address", static_cast<double>(r.addresses[lane]));
    entry.set("bank", a.bank[lane]);
    lanes.push(std::move(entry));
  }
  ladder::Json phases = ladder::Json::array();
  for (int p = 0; p < a.phase_count; ++p) {
    const ladder::bank::Phase& phase = a.phases[p];
    ladder::Json words = ladder::Json::array();
    for (int count : phase.words_per_bank) words.push(ladder::Json::number(count));
    ladder::Json entry = ladder::Json::object();
    entry.set("first_lane", phase.first_lane);
    entry.set("lanes", phase.lanes);
    entry.set("active_lanes", phase.active_lanes);
    entry.set("words_per_bank", std::move(words));
    entry.set("wavefronts", phase.wavefronts);
    phases.push(std::move(entry));
  }
  ladder::Json out = ladder::Json::object();
  out.set("name", r.name);
  out.set("what", r.what);
  out.set("width_bytes", a.width_bytes);
  out.set("group_size", a.group_size);
  out.set("wavefronts", a.wavefronts);
  out.set("ideal_wavefronts", a.ideal_wavefronts);
  out.set("conflict_degree", a.conflict_degree());
  out.set("lanes", std::move(lanes));
  out.set("phases", std::move(phases));
  return out;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "bankmap: %s\n", message.c_str());
  std::exit(2);
}

int parse_int(const std::string& flag, const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > (1 << 20)) {
    fail(flag + " wants a non-negative integer, got '" + text + "'");
  }
  return static_cast<int>(value);
}

Report named_report(const std::string& name) {
  for (const NamedAccess& access : registry()) {
    if (name == access.name) {
      std::vector<std::uint32_t> addresses = access.addresses();
      const Analysis analysis = ladder::bank::analyze(addresses, access.width_bytes);
      return {access.name, access.what, std::move(addresses), analysis};
    }
  }
  fail("no access named '" + name + "' (bankmap --list shows the names)");
}

Report column_walk_report(int stride, int width_bytes, int lanes, int group_size) {
  std::vector<std::uint32_t> addresses(lanes);
  for (int lane = 0; lane < lanes; ++lane) {
    addresses[lane] = static_cast<std::uint32_t>(lane) * stride * sizeof(float);
  }
  const std::string name =
      "column-walk.stride" + std::to_string(stride) + ".width" + std::to_string(width_bytes);
  const std::string what = "lane i reads " + std::to_string(width_bytes) +
                           " bytes at the start of row i, rows of " + std::to_string(stride) +
                           " floats";
  return {name, what, addresses, ladder::bank::analyze(addresses, width_bytes, group_size)};
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool list = false;
  bool all = false;
  int stride = -1;
  int width_bytes = 4;
  int lanes = kWarp;
  int group_size = kWarp;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) fail(arg + " wants a value");
      return argv[++i];
    };
    if (arg == "--json") {
      json = true;
    } else if (arg == "--list") {
      list = true;
    } else if (arg == "--all") {
      all = true;
    } else if (arg == "--stride") {
      stride = parse_int(arg, value());
    } else if (arg == "--width") {
      width_bytes = parse_int(arg, value());
    } else if (arg == "--lanes") {
      lanes = parse_int(arg, value());
    } else if (arg == "--group") {
      group_size = parse_int(arg, value());
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: bankmap --list | --all | NAME... | --stride S [--width 4|8|16] [--lanes N]"
          " [--group 32|64]  [--json]\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      fail("unknown option " + arg + " (try --help)");
    } else {
      names.push_back(arg);
    }
  }

  if (list) {
    for (const NamedAccess& access : registry())
      std::printf("%-34s %s\n", access.name, access.what);
    return 0;
  }
  if (all) {
    for (const NamedAccess& access : registry()) names.emplace_back(access.name);
  }
  if (names.empty() && stride < 0) fail("nothing to show (try --help)");

  std::vector<Report> reports;
  try {
    for (const std::string& name : names) reports.push_back(named_report(name));
    if (stride >= 0) reports.push_back(column_walk_report(stride, width_bytes, lanes, group_size));
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }

  if (json) {
    ladder::Json out = ladder::Json::array();
    for (const Report& r : reports) out.push(to_json(r));
    std::printf("%s\n", out.dump().c_str());
  } else {
    for (const Report& r : reports) print_text(r);
  }
  return 0;
}
