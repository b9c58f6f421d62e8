// bankmap: prints which bank each lane of one warp-wide shared-memory access
// hits, and how many wavefronts the access takes, from the bank model in
// ladder/bank_model.hpp. CPU only: nothing here runs on a GPU.
//
//   bankmap --list                       names of the accesses it knows
//   bankmap --access NAME... [--json]    those accesses
//   bankmap --all [--json]               every access it knows
//   bankmap --stride S [--width W] [--lanes N] [--group G] [--json]
//       a column walk: lane i reads W bytes at the start of row i of a float
//       tile whose rows are S floats long (byte address 4 * S * i)
//
// Every named access comes from the code that runs: each chapter's kernel
// header (and the transpose exercise's) is included here, and an access's lanes are computed by the
// very `__host__ __device__ constexpr` index functions that its kernel calls. Each chapter lives in
// its own namespace (ch04::, ch07::, ...), so the files share this one TU.
// Chapter 16's index functions (b_tile_index, and c_col for the columns of
// B each consumer warp loads) are in its tiling.cuh, apart from its wgmma
// code, which this tool's target could not compile.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ladder/bank_model.hpp>
#include <ladder/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bank_json.hpp"
#include "chapters/04-smem-tiling/kernel.cuh"
#include "chapters/07-vectorized/kernel.cuh"
#include "chapters/08-warp-tiling/kernel.cuh"
#include "chapters/09-autotuning/kernel.cuh"
#include "chapters/10-padding/exercise/transpose.cuh"
#include "chapters/10-padding/kernel.cuh"
#include "chapters/12-final/kernel.cuh"
#include "chapters/16-wgmma/tiling.cuh"
#include "cli.hpp"

namespace {

using ladder::bank::Analysis;

/// One access the tool can print: its name, the bytes each lane moves, one
/// line saying what it is, and the byte address of lane `lane` of the warp.
struct NamedAccess {
  const char* name;
  int width_bytes;
  const char* what;
  std::uint32_t (*address)(int lane);
};

constexpr int kWarp = 32;

/// Byte offset of float number `index` of a shared array.
constexpr std::uint32_t float_at(int index) {
  return static_cast<std::uint32_t>(index) * sizeof(float);
}

// The configurations the chapters run (their chapter() descriptions launch these).
using Ch08 = ch08::DefaultTiling;
using Ch09 = ch09::Chosen;
using Ch10 = ch10::Chosen;
using Ch10Swizzled = ch10::WithALayout<ch10::Chosen, ch10::ALayout::kSwizzled>;
using Ch12 = ch12::Chosen;

// The width of the A operand loads, as the compiler emits them (cuobjdump
// -sass of bin/10-padding and bin/12-final). load_a_operands() reads four
// floats of As with one 16-byte load when A_STRIDE % 4 == 0, else with two
// 8-byte loads. Chapter 10 pads rows of As to 130 floats, so it reads
// LDS.64. Chapter 12 pads the same way, but its dot_idx loop is unrolled and
// the stages of smem are 16-byte multiples, so the compiler knows which rows
// are aligned: an even row (dot_idx 0) is read with LDS.128, an odd row with
// LDS.64, LDS.128, LDS.64 (floats 0-1, 2-5, 6-7 of the thread's eight).
static_assert(Ch10::A_STRIDE % 4 == 2, "chapter 10's rows of As are 8-byte aligned: LDS.64");
static_assert(Ch10Swizzled::A_STRIDE % 4 == 0, "swizzled rows of As are 16-byte aligned");
static_assert(Ch12::A_STRIDE % 4 == 2 && Ch12::STAGE_FLOATS % 4 == 0,
              "chapter 12: odd rows of As are 8-byte aligned, even rows 16-byte aligned");

/// Chapter 16's first load of B^T's fragment, as load_bt_fragment() makes
/// it: lane (g, t) = (lane / 4, lane % 4) of consumer warp 0 reads register
/// b[0] at step 0, row k = 8 * step + t of B's tile at column
/// n0 = c_col(0, lane, 0, spread): in order (the kernel's default) or spread
/// (the variant wide-spread). With the swizzle, the float is
/// b_tile_index(k, n0); without it, a tile copied as it lies in B: row k of
/// box n0 / BOX_COLUMNS holds its BOX_COLUMNS columns in order.
std::uint32_t ch16_bt_load(int lane, bool spread, bool swizzled) {
  constexpr int kConsumerWarp = 0, kStep = 0, kRegister = 0;
  const int k = 8 * kStep + lane % 4;
  const int n0 = ch16::c_col(kConsumerWarp, lane, kRegister, spread);
  if (swizzled) return float_at(ch16::b_tile_index(k, n0));
  const int box = n0 / ch16::BOX_COLUMNS;
  return float_at(box * ch16::BK * ch16::BOX_COLUMNS + k * ch16::BOX_COLUMNS +
                  n0 % ch16::BOX_COLUMNS);
}

/// Every named access: lanes 0..31 of warp 0 (tid = lane), with every loop
/// index at 0 unless the line says otherwise. To add one, add a line that
/// calls the chapter's index function. Addresses are byte offsets into the
/// shared array (chapter 12: into its one dynamic array, stage 0).
const std::vector<NamedAccess>& registry() {
  using namespace transpose;
  static const std::vector<NamedAccess> accesses = {
      // The transpose exercise, transpose_tiled<Layout>: warp 5, step 0 (warp
      // 0 reads column 0, where the padded and swizzled maps coincide). The
      // write stores along a row of the tile, the read loads down a column.
      {"transpose.32x32.tile-write", 4, "transpose: tile[write_slot(tx, ty, 0)], rows of 32 floats",
       [](int lane) { return warp_addresses<Layout32x32>(5, 0).write[lane]; }},
      {"transpose.32x32.tile-read", 4, "transpose: tile[read_slot(tx, ty, 0)], rows of 32 floats",
       [](int lane) { return warp_addresses<Layout32x32>(5, 0).read[lane]; }},
      {"transpose.32x33.tile-write", 4, "transpose: tile[write_slot(tx, ty, 0)], rows of 33 floats",
       [](int lane) { return warp_addresses<Layout32x33>(5, 0).write[lane]; }},
      {"transpose.32x33.tile-read", 4, "transpose: tile[read_slot(tx, ty, 0)], rows of 33 floats",
       [](int lane) { return warp_addresses<Layout32x33>(5, 0).read[lane]; }},
      {"transpose.swizzled.tile-write", 4, "transpose: tile[write_slot(tx, ty, 0)], col ^ row",
       [](int lane) { return warp_addresses<LayoutSwizzled>(5, 0).write[lane]; }},
      {"transpose.swizzled.tile-read", 4, "transpose: tile[read_slot(tx, ty, 0)], col ^ row",
       [](int lane) { return warp_addresses<LayoutSwizzled>(5, 0).read[lane]; }},

      // Chapter 04: one float per thread each way (threads 0..31, dot_idx 0).
      {"ch04.a-store", 4, "chapter 04: As[a_store_index(tid)] = ... (STS)",
       [](int tid) { return float_at(ch04::a_store_index(tid)); }},
      {"ch04.a-load", 4, "chapter 04: As[a_load_index(tid, 0)] (LDS)",
       [](int tid) { return float_at(ch04::a_load_index(tid, 0)); }},
      {"ch04.b-load", 4, "chapter 04: Bs[b_load_index(tid, 0)] (LDS)",
       [](int tid) { return float_at(ch04::b_load_index(tid, 0)); }},

      // Chapter 07: A stored transposed, one float at a time; all else float4.
      {"ch07.a-store", 4, "chapter 07: As[a_store_index(tid, 0, 0)] = a.x (STS)",
       [](int tid) { return float_at(ch07::a_store_index(tid, 0, 0)); }},
      {"ch07.a-load", 16, "chapter 07: load_float4(&As[a_load_index(tid, 0, 0)]) (LDS.128)",
       [](int tid) { return float_at(ch07::a_load_index(tid, 0, 0)); }},
      {"ch07.b-load", 16, "chapter 07: load_float4(&Bs[b_load_index(tid, 0, 0)]) (LDS.128)",
       [](int tid) { return float_at(ch07::b_load_index(tid, 0, 0)); }},
      {"ch07.b-store", 16, "chapter 07: store_float4(&Bs[b_store_index(tid, 0)], ...) (STS.128)",
       [](int tid) { return float_at(ch07::b_store_index(tid, 0)); }},

      // Chapter 08, DefaultTiling (BK = 16).
      {"ch08.a-store", 4, "chapter 08: As[a_store_index(tid, 0, 0)] = a.x (STS)",
       [](int tid) { return float_at(ch08::a_store_index<Ch08>(tid, 0, 0)); }},
      {"ch08.a-load", 16, "chapter 08: load_float4(&As[a_load_index(tid, 0, 0, 0)]) (LDS.128)",
       [](int tid) { return float_at(ch08::a_load_index<Ch08>(tid, 0, 0, 0)); }},
      {"ch08.b-load", 16, "chapter 08: load_float4(&Bs[b_load_index(tid, 0, 0, 0)]) (LDS.128)",
       [](int tid) { return float_at(ch08::b_load_index<Ch08>(tid, 0, 0, 0)); }},
      {"ch08.b-store", 16, "chapter 08: store_float4(&Bs[b_store_index(tid, 0)], ...) (STS.128)",
       [](int tid) { return float_at(ch08::b_store_index<Ch08>(tid, 0)); }},

      // Chapter 09, Chosen (BK = 16).
      {"ch09.a-store", 4, "chapter 09: As[a_store_index(tid, 0, 0)] = a.x (STS)",
       [](int tid) { return float_at(ch09::a_store_index<Ch09>(tid, 0, 0)); }},
      {"ch09.a-load", 16, "chapter 09: load_float4(&As[a_load_index(tid, 0, 0, 0)]) (LDS.128)",
       [](int tid) { return float_at(ch09::a_load_index<Ch09>(tid, 0, 0, 0)); }},
      {"ch09.b-load", 16, "chapter 09: load_float4(&Bs[b_load_index(tid, 0, 0, 0)]) (LDS.128)",
       [](int tid) { return float_at(ch09::b_load_index<Ch09>(tid, 0, 0, 0)); }},
      {"ch09.b-store", 16, "chapter 09: store_float4(&Bs[b_store_index(tid, 0)], ...) (STS.128)",
       [](int tid) { return float_at(ch09::b_store_index<Ch09>(tid, 0)); }},

      // Chapter 10, Chosen: As padded to rows of BM + 2 floats; and swizzled.
      {"ch10.a-store", 4, "chapter 10: As[a_store_index(tid, 0, 0)] = a.x, padded (STS)",
       [](int tid) { return float_at(ch10::a_store_index<Ch10>(tid, 0, 0)); }},
      {"ch10.a-load", 8, "chapter 10: the first float2 of load_a_operands, padded (LDS.64)",
       [](int tid) { return float_at(ch10::a_load_index<Ch10>(tid, 0, 0, 0)); }},
      {"ch10-swizzled.a-store", 4, "chapter 10: As[a_store_index(tid, 0, 0)] = a.x, swizzled (STS)",
       [](int tid) { return float_at(ch10::a_store_index<Ch10Swizzled>(tid, 0, 0)); }},
      {"ch10-swizzled.a-load", 16, "chapter 10: load_a_operands, swizzled (LDS.128)",
       [](int tid) { return float_at(ch10::a_load_index<Ch10Swizzled>(tid, 0, 0, 0)); }},

      // Chapter 12, Chosen (BK = 16, As padded), stage 0: As, then Bs.
      {"ch12.a-store", 4, "chapter 12: As[a_store_index(tid, 0, 0)] = a[0].x (STS)",
       [](int tid) { return float_at(ch12::a_store_index<Ch12>(tid, 0, 0)); }},
      {"ch12.a-load", 16, "chapter 12: load_a_operands, dot_idx 0: an even row (LDS.128)",
       [](int tid) { return float_at(ch12::a_load_index<Ch12>(tid, 0, 0, 0)); }},
      {"ch12.a-load.k1", 8, "chapter 12: load_a_operands, dot_idx 1: an odd row (LDS.64)",
       [](int tid) { return float_at(ch12::a_load_index<Ch12>(tid, 1, 0, 0)); }},
      {"ch12.b-load", 16, "chapter 12: load_float4(&Bs[b_load_index(tid, 0, 0, 0)]) (LDS.128)",
       [](int tid) {
         return float_at(Ch12::A_STAGE_FLOATS + ch12::b_load_index<Ch12>(tid, 0, 0, 0));
       }},

      // Chapter 16: the first load of a consumer's B^T fragment
      // (ch16_bt_load(): consumer warp 0, step 0, register b[0]), its
      // columns in order without the swizzle and with it, then spread.
      {"ch16.bt-load.unswizzled", 4,
       "chapter 16: Bs[k * BOX_COLUMNS + n0], columns in order, no swizzle (LDS)",
       [](int lane) { return ch16_bt_load(lane, false, false); }},
      {"ch16.bt-load.in-order", 4,
       "chapter 16: Bs[b_tile_index(k, n0)], columns in order, 128-byte swizzle (LDS)",
       [](int lane) { return ch16_bt_load(lane, false, true); }},
      {"ch16.bt-load", 4,
       "chapter 16: Bs[b_tile_index(k, n0)], columns spread, 128-byte swizzle (LDS)",
       [](int lane) { return ch16_bt_load(lane, true, true); }},
  };
  return accesses;
}

/// The byte addresses of the 32 lanes of one named access.
std::vector<std::uint32_t> warp_addresses_of(const NamedAccess& access) {
  std::vector<std::uint32_t> addresses(kWarp);
  for (int lane = 0; lane < kWarp; ++lane) addresses[lane] = access.address(lane);
  return addresses;
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
  ladder::Json out = ladder::Json::object();
  out.set("name", r.name);
  out.set("what", r.what);
  tools::set_totals(out, a);
  out.set("lanes", std::move(lanes));
  out.set("phases", tools::phases_json(a));
  return out;
}

[[noreturn]] void fail(const std::string& message) { tools::fail("bankmap", message); }

Report named_report(const std::string& name) {
  for (const NamedAccess& access : registry()) {
    if (name == access.name) {
      std::vector<std::uint32_t> addresses = warp_addresses_of(access);
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
  ladder::ArgParser parser;
  parser.flag("--json", &json)
      .flag("--list", &list)
      .flag("--all", &all)
      .list("--access", tools::name_into(&names))
      .value("--stride", tools::integer_into("--stride", 0, 1 << 20, &stride))
      .value("--width", tools::integer_into("--width", 0, 1 << 20, &width_bytes))
      .value("--lanes", tools::integer_into("--lanes", 0, 1 << 20, &lanes))
      .value("--group", tools::integer_into("--group", 0, 1 << 20, &group_size));
  tools::parse_or_fail("bankmap", parser,
                       "usage: bankmap --list | --all | --access NAME... | --stride S "
                       "[--width 4|8|16] [--lanes N] [--group 32|64] [--json]\n",
                       argc, argv);

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
