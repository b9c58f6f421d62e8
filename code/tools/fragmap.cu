// fragmap: which elements of chapter 14's mma.sync.m16n8k8 tiles each lane of
// a warp holds, and what the warp's fragment loads from shared memory cost in
// banks. CPU only: nothing here runs on a GPU.
//
//   fragmap [--json]
//
// Printed, from chapter 14's own `__host__ __device__ constexpr` functions
// (and, as the tiles "C16" and "C16.in-order", chapter 16's c_row and c_col:
// where its consumer warps' wgmma accumulators land in C, with the columns
// spread, as the variant wide-spread takes them, and in order, as the
// kernel does):
//   * the tiles: for each lane and register, the element of the 16 x 8 A
//     tile (a_frag_row, a_frag_col), of the 8 x 8 B tile (b_frag_row,
//     b_frag_col) and of the 16 x 8 C tile (c_frag_row, c_frag_col) it holds;
//     and, for chapter 16, the element of the first 8 rows of the block's
//     BN columns of C that each consumer warp w's lane holds in d[r]
//     (c_row(lane, 0, r), c_col(w, lane, r)): each element with its warp;
//   * the loads: one load instruction reads register r of every lane's
//     fragment (a float from As or Bs, then rounded to TF32). For each r, the
//     word each lane reads (a_frag_index, b_frag_index of warp 0's first mma
//     tile at the stage's first step of 8) and its bank, in the three layouts
//     of chapter 14's tilings: ch14::Chosen's padded rows, ch14::Unpadded's
//     plain ones (A_STRIDE = BK, B_STRIDE = BN) and ch14::Swizzled's, and
//     the wavefronts the bank model (ladder/bank_model.hpp) counts. Other
//     warps, mma tiles and steps move the banks round but do not change the
//     count (tests/cpp/test_fragments.cu checks every one).
// Each load is reported in bankmap's JSON form (lanes, phases, wavefronts),
// so code/ladder_tools/figures/bankgrid.py draws it as it draws bankmap's accesses.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ladder/bank_model.hpp>
#include <ladder/json.hpp>
#include <string>
#include <vector>

#include "bank_json.hpp"
#include "chapters/14-tf32/kernel.cuh"
#include "chapters/16-wgmma/tiling.cuh"
#include "cli.hpp"

namespace {

constexpr int kWarp = 32;

using Padded = ch14::Chosen;
using Unpadded = ch14::Unpadded;
using Swizzled = ch14::Swizzled;

// ------------------------------------------------------------------ tiles

/// One element of an mma tile held by one register of one lane (of one
/// warp, where a tile spans several).
struct Held {
  int warp;
  int lane;
  int reg;
  int row;
  int col;
};

/// One of chapter 14's three mma tiles, and where its elements live in the
/// warp; or chapter 16's first 8 rows of C, and where in its consumer warps.
struct Tile {
  const char* name;  // "A", "B", "C", "C16" or "C16.in-order"
  int rows;
  int cols;
  int warps;      // whose lanes hold the tile: 1, or chapter 16's consumer warps
  int registers;  // per lane
  const char* what;
  std::vector<Held> held;  // warp by warp, lane by lane, register by register
};

/// A tile that `warps` warps hold: element (row(w, lane, r), col(w, lane, r)).
template <class Row, class Col>
Tile tile_of_warps(const char* name, int rows, int cols, int warps, int registers, const char* what,
                   Row row, Col col) {
  Tile t{name, rows, cols, warps, registers, what, {}};
  for (int w = 0; w < warps; ++w) {
    for (int lane = 0; lane < kWarp; ++lane) {
      for (int r = 0; r < registers; ++r)
        t.held.push_back({w, lane, r, row(w, lane, r), col(w, lane, r)});
    }
  }
  return t;
}

/// A tile that one warp holds: element (row(lane, r), col(lane, r)).
template <class Row, class Col>
Tile tile_of(const char* name, int rows, int cols, int registers, const char* what, Row row,
             Col col) {
  return tile_of_warps(
      name, rows, cols, 1, registers, what, [&](int, int lane, int r) { return row(lane, r); },
      [&](int, int lane, int r) { return col(lane, r); });
}

/// Chapter 16's consumer warps: CONSUMERS warpgroups of WARPGROUP / 32.
constexpr int kConsumerWarps = ch16::CONSUMERS * ch16::WARPGROUP / kWarp;

std::vector<Tile> tiles() {
  using T = Padded;
  return {
      tile_of("A", T::MMA_M, T::MMA_K, 4, "a_frag_row(lane, r), a_frag_col(lane, r)",
              ch14::a_frag_row, ch14::a_frag_col),
      tile_of("B", T::MMA_K, T::MMA_N, 2, "b_frag_row(lane, r), b_frag_col(lane, r)",
              ch14::b_frag_row, ch14::b_frag_col),
      tile_of("C", T::MMA_M, T::MMA_N, 4, "c_frag_row(lane, r), c_frag_col(lane, r)",
              ch14::c_frag_row, ch14::c_frag_col),
      // Chapter 16: the first 8 rows of the block's BN columns of C, from
      // each consumer warp w's wgmma accumulators d[r] (j = 0): its columns
      // spread over its copy box, as the kernel takes them, and in order.
      tile_of_warps(
          "C16", 8, ch16::BN, kConsumerWarps, 4,
          "chapter 16: c_row(lane, 0, r), c_col(w, lane, r), spread",
          [](int, int lane, int r) { return ch16::c_row(lane, 0, r); },
          [](int w, int lane, int r) { return ch16::c_col(w, lane, r, true); }),
      tile_of_warps(
          "C16.in-order", 8, ch16::BN, kConsumerWarps, 4,
          "chapter 16: c_row(lane, 0, r), c_col(w, lane, r, false), in order",
          [](int, int lane, int r) { return ch16::c_row(lane, 0, r); },
          [](int w, int lane, int r) { return ch16::c_col(w, lane, r, false); }),
  };
}

// ------------------------------------------------------------------ loads

/// One lane's word of a fragment load: the element of the A (m, k) or B
/// (k, n) tile of the stage, its index in As or Bs, and its byte offset in
/// the stage (As first, then Bs, as the kernel lays them out).
struct LaneWord {
  int row;
  int col;
  int index;
  std::uint32_t address;
};

/// One warp-wide fragment load: register `reg` of every lane.
struct Load {
  std::string name;  // "A.r0.padded"
  std::string what;
  std::string operand;  // "A" or "B"
  std::string layout;   // "padded", "unpadded" or "swizzled"
  int reg;
  int stride;
  std::vector<LaneWord> lanes;
  ladder::bank::Analysis analysis;
};

// The load of warp 0 (warp_m = warp_n = 0), mma tile 0 (mi = ni = 0), step 0
// of the stage (kk = 0).
template <class T>
Load a_load(const char* layout, int reg) {
  Load load{std::string("A.r") + std::to_string(reg) + "." + layout,
            "As[a_frag_index(0, 0, 0, lane, " + std::to_string(reg) + ")], rows of " +
                std::to_string(T::A_STRIDE) + " floats (LDS)",
            "A",
            layout,
            reg,
            T::A_STRIDE,
            {},
            {}};
  std::vector<std::uint32_t> addresses;
  for (int lane = 0; lane < kWarp; ++lane) {
    const int index = ch14::a_frag_index<T>(0, 0, 0, lane, reg);
    const auto address = static_cast<std::uint32_t>(index * sizeof(float));
    load.lanes.push_back(
        {ch14::a_frag_row(lane, reg), ch14::a_frag_col(lane, reg), index, address});
    addresses.push_back(address);
  }
  load.analysis = ladder::bank::analyze(addresses, 4);
  return load;
}

template <class T>
Load b_load(const char* layout, int reg) {
  Load load{std::string("B.r") + std::to_string(reg) + "." + layout,
            "Bs[b_frag_index(0, 0, 0, lane, " + std::to_string(reg) + ")], rows of " +
                std::to_string(T::B_STRIDE) + " floats (LDS)",
            "B",
            layout,
            reg,
            T::B_STRIDE,
            {},
            {}};
  std::vector<std::uint32_t> addresses;
  for (int lane = 0; lane < kWarp; ++lane) {
    const int index = ch14::b_frag_index<T>(0, 0, 0, lane, reg);
    const auto address = static_cast<std::uint32_t>((T::A_STAGE_FLOATS + index) * sizeof(float));
    load.lanes.push_back(
        {ch14::b_frag_row(lane, reg), ch14::b_frag_col(lane, reg), index, address});
    addresses.push_back(address);
  }
  load.analysis = ladder::bank::analyze(addresses, 4);
  return load;
}

std::vector<Load> loads() {
  std::vector<Load> all;
  for (int r = 0; r < 4; ++r) all.push_back(a_load<Padded>("padded", r));
  for (int r = 0; r < 2; ++r) all.push_back(b_load<Padded>("padded", r));
  for (int r = 0; r < 4; ++r) all.push_back(a_load<Unpadded>("unpadded", r));
  for (int r = 0; r < 2; ++r) all.push_back(b_load<Unpadded>("unpadded", r));
  for (int r = 0; r < 4; ++r) all.push_back(a_load<Swizzled>("swizzled", r));
  for (int r = 0; r < 2; ++r) all.push_back(b_load<Swizzled>("swizzled", r));
  return all;
}

// ------------------------------------------------------------------ output

ladder::Json tile_json(const Tile& t) {
  ladder::Json held = ladder::Json::array();
  for (const Held& h : t.held) {
    ladder::Json entry = ladder::Json::object();
    entry.set("warp", h.warp);
    entry.set("lane", h.lane);
    entry.set("register", h.reg);
    entry.set("row", h.row);
    entry.set("col", h.col);
    held.push(std::move(entry));
  }
  ladder::Json out = ladder::Json::object();
  out.set("name", t.name);
  out.set("rows", t.rows);
  out.set("cols", t.cols);
  out.set("warps", t.warps);
  out.set("registers", t.registers);
  out.set("what", t.what);
  out.set("elements", std::move(held));
  return out;
}

/// bankmap's report of one access, with the fragment's own fields added.
ladder::Json load_json(const Load& load) {
  const ladder::bank::Analysis& a = load.analysis;
  ladder::Json lanes = ladder::Json::array();
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneWord& w = load.lanes[lane];
    ladder::Json entry = ladder::Json::object();
    entry.set("lane", lane);
    entry.set("active", true);
    entry.set("row", w.row);
    entry.set("col", w.col);
    entry.set("index", w.index);
    entry.set("address", static_cast<double>(w.address));
    entry.set("bank", a.bank[lane]);
    lanes.push(std::move(entry));
  }
  ladder::Json out = ladder::Json::object();
  out.set("name", load.name);
  out.set("what", load.what);
  out.set("operand", load.operand);
  out.set("layout", load.layout);
  out.set("register", load.reg);
  out.set("stride", load.stride);
  tools::set_totals(out, a);
  out.set("lanes", std::move(lanes));
  out.set("phases", tools::phases_json(a));
  return out;
}

void print_tile(const Tile& t) {
  const bool warps = t.warps > 1;
  std::printf("%s tile, %d x %d: %s of each element (%s)\n", t.name, t.rows, t.cols,
              warps ? "warp.lane:register" : "lane:register", t.what);
  std::vector<std::string> cell(t.rows * t.cols, "?");
  for (const Held& h : t.held) {
    cell[h.row * t.cols + h.col] = (warps ? std::to_string(h.warp) + "." : std::string()) +
                                   std::to_string(h.lane) + ":" + std::to_string(h.reg);
  }
  const int width = warps ? 8 : 6;
  std::printf("  row\\col");
  for (int c = 0; c < t.cols; ++c) std::printf("%*d", width, c);
  std::printf("\n");
  for (int r = 0; r < t.rows; ++r) {
    std::printf("  %7d", r);
    for (int c = 0; c < t.cols; ++c) std::printf("%*s", width, cell[r * t.cols + c].c_str());
    std::printf("\n");
  }
  std::printf("\n");
}

void print_load(const Load& load) {
  const ladder::bank::Analysis& a = load.analysis;
  std::printf("%s: %s: %d wavefront%s\n", load.name.c_str(), load.what.c_str(), a.wavefronts,
              a.wavefronts == 1 ? "" : "s");
  std::printf("  lane:(row, col) word bank\n");
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneWord& w = load.lanes[lane];
    std::printf("  %2d:(%2d, %2d) %5d %2d%s", lane, w.row, w.col, w.index, a.bank[lane],
                lane % 4 == 3 ? "\n" : "   ");
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  ladder::ArgParser parser;
  parser.flag("--json", &json);
  tools::parse_or_fail("fragmap", parser, "usage: fragmap [--json]\n", argc, argv);
  const std::vector<Tile> all_tiles = tiles();
  const std::vector<Load> all_loads = loads();
  if (json) {
    ladder::Json shape = ladder::Json::object();
    shape.set("m", Padded::MMA_M);
    shape.set("n", Padded::MMA_N);
    shape.set("k", Padded::MMA_K);
    ladder::Json strides = ladder::Json::object();
    strides.set("BK", Padded::BK);
    strides.set("BN", Padded::BN);
    strides.set("A_STRIDE", Padded::A_STRIDE);
    strides.set("B_STRIDE", Padded::B_STRIDE);
    ladder::Json tiles_json = ladder::Json::array();
    for (const Tile& t : all_tiles) tiles_json.push(tile_json(t));
    ladder::Json loads_json = ladder::Json::array();
    for (const Load& load : all_loads) loads_json.push(load_json(load));
    ladder::Json out = ladder::Json::object();
    out.set("chapter", "14-tf32");
    out.set("mma", std::move(shape));
    out.set("chosen", std::move(strides));
    out.set("tiles", std::move(tiles_json));
    out.set("loads", std::move(loads_json));
    std::printf("%s\n", out.dump().c_str());
  } else {
    for (const Tile& t : all_tiles) print_tile(t);
    for (const Load& load : all_loads) print_load(load);
  }
  return 0;
}
