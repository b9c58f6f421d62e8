// warpmap: prints the global-memory addresses that the 32 lanes of one warp
// touch in one step of a chapter's kernel, and the 32-byte sectors and
// 128-byte lines they fall into; for chapter 07's copy of the A tile, also
// where each lane's four floats land in the transposed As in shared memory.
// CPU only: nothing here runs on a GPU.
//
//   warpmap --list                          names of the accesses it knows
//   warpmap --access NAME... [--K K] [--N N] [--json]
//   warpmap --all [--K K] [--N N] [--json]  every access it knows
//
// K and N (default 64) are the lengths of the rows of A and of B and C in
// floats; the warp is warp 0 of block (0, 0), at the loop's first step (k = 0,
// tile_k = 0), with A, B and C each starting at byte address 0.
//
// Every access comes from the code that runs: each chapter's kernel header is
// included here, and a lane's row and column are computed by the very
// `__host__ __device__ constexpr` functions its kernel calls (chapters 01 and
// 02: c_row and c_col of the lane's grid index; chapter 07: a_copy_row,
// a_copy_col, b_copy_row, b_copy_col and a_store_index). The element to
// address step is the kernel's own row-major expression, quoted in each
// access's description (tests/python/test_figure_warp_access.py checks that
// the kernel still says so).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ladder/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "chapters/01-naive/kernel.cuh"
#include "chapters/02-coalescing/kernel.cuh"
#include "chapters/07-vectorized/kernel.cuh"
#include "cli.hpp"

namespace {

constexpr int kWarp = 32;
constexpr int kSectorBytes = 32;
constexpr int kLineBytes = 128;

/// The sizes the addresses are computed at: floats per row of A (K) and of B
/// and C (N).
struct Sizes {
  int K = 64;
  int N = 64;
};

/// Where one lane's access falls: the element (row, col) of the matrix it
/// starts at, and its byte address.
struct LaneAccess {
  int row;
  int col;
  std::uint64_t address;
};

/// Where element `element` (0 .. 3) of a lane's float4 is stored in shared
/// memory: the index in the array, and its row and column there.
struct SharedStore {
  int lane;
  int element;
  int index;
  int row;
  int col;
};

/// One access the tool can print.
struct NamedAccess {
  const char* name;
  const char* chapter;
  const char* matrix;  // "A", "B" or "C"
  const char* kind;    // "load" or "store"
  int width_bytes;
  const char* what;
  LaneAccess (*lane)(int lane, const Sizes& s);
  /// Chapter 07's A copy: where the lane's floats go in As; null otherwise.
  std::vector<SharedStore> (*shared)(int lane);
};

/// Byte address of float number `index` of a matrix that starts at 0.
constexpr std::uint64_t float_at(long long index) {
  return static_cast<std::uint64_t>(index) * sizeof(float);
}

// Chapters 01 and 02 launch BLOCK x BLOCK threads per block; a warp is 32
// consecutive threads of the block, threadIdx.x varying fastest, so lane L of
// warp 0 of block (0, 0) is at threadIdx (L % BLOCK, L / BLOCK), which is its
// grid index (x, y).
template <int Block>
constexpr int grid_x(int lane) {
  return lane % Block;
}
template <int Block>
constexpr int grid_y(int lane) {
  return lane / Block;
}

// Chapter 07: lane L of warp 0 is thread tid = L; the block copies with copy
// number c = 0 first; block_row = block_col = 0 and tile_k = 0.
constexpr int kCopy = 0;

std::vector<SharedStore> ch07_a_stores(int tid) {
  std::vector<SharedStore> stores;
  for (int e = 0; e < 4; ++e) {
    const int index = ch07::a_store_index(tid, kCopy, e);
    stores.push_back({tid, e, index, index / ch07::BM, index % ch07::BM});
  }
  return stores;
}

const std::vector<NamedAccess>& registry() {
  static const std::vector<NamedAccess> accesses = {
      // Chapter 01: row = c_row(x, y), col = c_col(x, y); k = 0.
      {"ch01.a-load", "01-naive", "A", "load", 4, "chapter 01: A[row * K + k] (LDG)",
       [](int lane, const Sizes& s) {
         const int x = grid_x<ch01::BLOCK>(lane), y = grid_y<ch01::BLOCK>(lane);
         const int row = ch01::c_row(x, y), k = 0;
         return LaneAccess{row, k, float_at(1LL * row * s.K + k)};
       },
       nullptr},
      {"ch01.b-load", "01-naive", "B", "load", 4, "chapter 01: B[k * N + col] (LDG)",
       [](int lane, const Sizes& s) {
         const int x = grid_x<ch01::BLOCK>(lane), y = grid_y<ch01::BLOCK>(lane);
         const int col = ch01::c_col(x, y), k = 0;
         return LaneAccess{k, col, float_at(1LL * k * s.N + col)};
       },
       nullptr},
      {"ch01.c-store", "01-naive", "C", "store", 4, "chapter 01: C[row * N + col] = ... (STG)",
       [](int lane, const Sizes& s) {
         const int x = grid_x<ch01::BLOCK>(lane), y = grid_y<ch01::BLOCK>(lane);
         const int row = ch01::c_row(x, y), col = ch01::c_col(x, y);
         return LaneAccess{row, col, float_at(1LL * row * s.N + col)};
       },
       nullptr},

      // Chapter 02: the same expressions, row and col swapped in c_row and c_col.
      {"ch02.a-load", "02-coalescing", "A", "load", 4, "chapter 02: A[row * K + k] (LDG)",
       [](int lane, const Sizes& s) {
         const int x = grid_x<ch02::BLOCK>(lane), y = grid_y<ch02::BLOCK>(lane);
         const int row = ch02::c_row(x, y), k = 0;
         return LaneAccess{row, k, float_at(1LL * row * s.K + k)};
       },
       nullptr},
      {"ch02.b-load", "02-coalescing", "B", "load", 4, "chapter 02: B[k * N + col] (LDG)",
       [](int lane, const Sizes& s) {
         const int x = grid_x<ch02::BLOCK>(lane), y = grid_y<ch02::BLOCK>(lane);
         const int col = ch02::c_col(x, y), k = 0;
         return LaneAccess{k, col, float_at(1LL * k * s.N + col)};
       },
       nullptr},
      {"ch02.c-store", "02-coalescing", "C", "store", 4, "chapter 02: C[row * N + col] = ... (STG)",
       [](int lane, const Sizes& s) {
         const int x = grid_x<ch02::BLOCK>(lane), y = grid_y<ch02::BLOCK>(lane);
         const int row = ch02::c_row(x, y), col = ch02::c_col(x, y);
         return LaneAccess{row, col, float_at(1LL * row * s.N + col)};
       },
       nullptr},

      // Chapter 07: one float4 per lane, copy 0 of the tile at tile_k = 0.
      {"ch07.a-load", "07-vectorized", "A", "load", 16,
       "chapter 07: load_float4(&A[(block_row + a_copy_row(tid, c)) * K + tile_k + "
       "a_copy_col(tid)]) (LDG.128), stored to As[a_store_index(tid, c, e)] (STS)",
       [](int tid, const Sizes& s) {
         const int row = ch07::a_copy_row(tid, kCopy), col = ch07::a_copy_col(tid);
         return LaneAccess{row, col, float_at(1LL * row * s.K + col)};
       },
       ch07_a_stores},
      {"ch07.b-load", "07-vectorized", "B", "load", 16,
       "chapter 07: load_float4(&B[(tile_k + b_copy_row(tid, c)) * N + block_col + "
       "b_copy_col(tid)]) (LDG.128)",
       [](int tid, const Sizes& s) {
         const int row = ch07::b_copy_row(tid, kCopy), col = ch07::b_copy_col(tid);
         return LaneAccess{row, col, float_at(1LL * row * s.N + col)};
       },
       nullptr},
  };
  return accesses;
}

/// What is printed for one access: its lanes, and the distinct sectors and
/// lines they touch.
struct Report {
  const NamedAccess* access;
  Sizes sizes;
  std::vector<LaneAccess> lanes;
  std::vector<std::uint64_t> sectors;  // sector numbers (address / 32), ascending
  std::vector<std::uint64_t> lines;    // line numbers (address / 128), ascending
  std::uint64_t distinct_bytes;        // bytes the lanes ask for, each counted once
};

Report report_of(const NamedAccess& access, const Sizes& sizes) {
  Report r{&access, sizes, {}, {}, {}, 0};
  std::set<std::uint64_t> sectors, lines, bytes;
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneAccess a = access.lane(lane, sizes);
    r.lanes.push_back(a);
    for (int b = 0; b < access.width_bytes; ++b) {
      bytes.insert(a.address + b);
      sectors.insert((a.address + b) / kSectorBytes);
      lines.insert((a.address + b) / kLineBytes);
    }
  }
  r.sectors.assign(sectors.begin(), sectors.end());
  r.lines.assign(lines.begin(), lines.end());
  r.distinct_bytes = bytes.size();
  return r;
}

ladder::Json numbers(const std::vector<std::uint64_t>& values) {
  ladder::Json out = ladder::Json::array();
  for (std::uint64_t v : values) out.push(ladder::Json::number(static_cast<double>(v)));
  return out;
}

ladder::Json to_json(const Report& r) {
  const NamedAccess& a = *r.access;
  ladder::Json lanes = ladder::Json::array();
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneAccess& l = r.lanes[lane];
    ladder::Json entry = ladder::Json::object();
    entry.set("lane", lane);
    entry.set("row", l.row);
    entry.set("col", l.col);
    entry.set("address", static_cast<double>(l.address));
    entry.set("sector", static_cast<double>(l.address / kSectorBytes));
    entry.set("line", static_cast<double>(l.address / kLineBytes));
    lanes.push(std::move(entry));
  }
  ladder::Json out = ladder::Json::object();
  out.set("name", a.name);
  out.set("chapter", a.chapter);
  out.set("matrix", a.matrix);
  out.set("kind", a.kind);
  out.set("what", a.what);
  out.set("width_bytes", a.width_bytes);
  out.set("K", r.sizes.K);
  out.set("N", r.sizes.N);
  out.set("row_floats", std::string(a.matrix) == "A" ? r.sizes.K : r.sizes.N);
  out.set("sector_bytes", kSectorBytes);
  out.set("line_bytes", kLineBytes);
  out.set("lanes", std::move(lanes));
  out.set("sectors", numbers(r.sectors));
  out.set("lines", numbers(r.lines));
  out.set("distinct_bytes", static_cast<double>(r.distinct_bytes));
  if (a.shared != nullptr) {
    ladder::Json stores = ladder::Json::array();
    for (int lane = 0; lane < kWarp; ++lane) {
      for (const SharedStore& s : a.shared(lane)) {
        ladder::Json entry = ladder::Json::object();
        entry.set("lane", s.lane);
        entry.set("element", s.element);
        entry.set("index", s.index);
        entry.set("row", s.row);
        entry.set("col", s.col);
        stores.push(std::move(entry));
      }
    }
    ladder::Json shared = ladder::Json::object();
    shared.set("array", "As");
    shared.set("rows", ch07::BK);
    shared.set("cols", ch07::BM);
    shared.set("rows_name", "BK");
    shared.set("cols_name", "BM");
    shared.set("stores", std::move(stores));
    out.set("shared", std::move(shared));
  }
  return out;
}

void print_text(const Report& r) {
  const NamedAccess& a = *r.access;
  std::printf("%s: %s\n", a.name, a.what);
  std::printf("  K = %d, N = %d; %d-byte access per lane; sectors: %zu, lines: %zu, bytes: %llu\n",
              r.sizes.K, r.sizes.N, a.width_bytes, r.sectors.size(), r.lines.size(),
              static_cast<unsigned long long>(r.distinct_bytes));
  std::printf("  lane   row   col   byte address   sector   line\n");
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneAccess& l = r.lanes[lane];
    std::printf("  %4d  %4d  %4d   %12llu   %6llu   %4llu\n", lane, l.row, l.col,
                static_cast<unsigned long long>(l.address),
                static_cast<unsigned long long>(l.address / kSectorBytes),
                static_cast<unsigned long long>(l.address / kLineBytes));
  }
  if (a.shared != nullptr) {
    std::printf("  stored to As (BK x BM = %d x %d): lane: (row, col) of elements 0-3\n", ch07::BK,
                ch07::BM);
    for (int lane = 0; lane < kWarp; ++lane) {
      std::printf("  %4d:", lane);
      for (const SharedStore& s : a.shared(lane)) std::printf(" (%d, %d)", s.row, s.col);
      std::printf("\n");
    }
  }
  std::printf("\n");
}

[[noreturn]] void fail(const std::string& message) { tools::fail("warpmap", message); }

/// Takes a K or N: a multiple of 8 from 8 to 1048576 (2^20).
ladder::ArgParser::Take side_into(const std::string& flag, int* out) {
  return [flag, out](const std::string& text) {
    long value = 0;
    if (!ladder::parse_int(text, 8, 1 << 20, &value) || value % 8 != 0) {
      return "bad value '" + text + "' for " + flag +
             ": expected a multiple of 8 from 8 to 1048576";
    }
    *out = static_cast<int>(value);
    return std::string();
  };
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool list = false;
  bool all = false;
  Sizes sizes;
  std::vector<std::string> names;
  ladder::ArgParser parser;
  parser.flag("--json", &json)
      .flag("--list", &list)
      .flag("--all", &all)
      .list("--access", tools::name_into(&names))
      .value("--K", side_into("--K", &sizes.K))
      .value("--N", side_into("--N", &sizes.N));
  tools::parse_or_fail(
      "warpmap", parser,
      "usage: warpmap --list | --all | --access NAME... [--K K] [--N N] [--json]\n", argc, argv);

  if (list) {
    for (const NamedAccess& access : registry())
      std::printf("%-14s %s\n", access.name, access.what);
    return 0;
  }
  if (all) {
    for (const NamedAccess& access : registry()) names.emplace_back(access.name);
  }
  if (names.empty()) fail("nothing to show (try --help)");

  std::vector<Report> reports;
  for (const std::string& name : names) {
    const auto& known = registry();
    const auto found = std::find_if(known.begin(), known.end(),
                                    [&](const NamedAccess& a) { return name == a.name; });
    if (found == known.end()) fail("no access named '" + name + "' (warpmap --list shows them)");
    reports.push_back(report_of(*found, sizes));
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
