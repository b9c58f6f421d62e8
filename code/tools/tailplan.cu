// tailplan: prints what chapter 13's launcher would run for a product on a
// GPU of a given shape, and how its blocks divide the work, from the
// chapter's own plan() and schedules. CPU only: nothing here runs on a GPU.
//
//   tailplan --sms S --big-blocks B --small-blocks b --sizes SIZE... [--json]
//       per size, the plan of each variant (default, tiles, split-k,
//       stream-k): its tiling, scheme, slices or blocks, tiles, K-steps and
//       cost(); and the same of Big's plain tiles (chapter 12's launch)
//   tailplan --sms S --big-blocks B --small-blocks b --segments VARIANT --sizes SIZE
//       (JSON) that plan's blocks and each block's segments, in the order it runs
//       them (tile, first_step, end_step, turn, turns); VARIANT may also be
//       big-tiles
//
// SIZE is N (an N x N x N product) or MxNxK. S is the GPU's SMs, B and b the
// blocks of Big and of Small one SM holds: on a GPU the launcher asks the
// driver (ch13::sm_count(), ch13::blocks_per_sm()); here they are given.
//
// Every number comes from chapters/13-tail/kernel.cuh: ch13::plan() for the
// default, "tiles" and "split-k" variants (as ch13::launch() calls it),
// ch13::stream_k_plan() for "stream-k" (as ch13::launch_stream_k() calls
// it), ch13::split_k_segment(),
// ch13::stream_k_begin() and ch13::stream_k_segment() for the segments.
#include <cstdio>
#include <cstdlib>
#include <ladder/json.hpp>
#include <string>
#include <vector>

#include "chapters/13-tail/kernel.cuh"
#include "cli.hpp"

namespace {

[[noreturn]] void fail(const std::string& message) { tools::fail("tailplan", message); }

/// One M x N x K product, as the chapters' --sizes reads it.
using Size = ladder::Size;

/// The GPU's shape as plan() sees it.
struct Gpu {
  int sms = 0;
  int big_blocks = 0;
  int small_blocks = 0;
};

/// A chapter variant's name and the schemes ch13::launch() lets it pick.
struct Variant {
  const char* name;
  ch13::Schemes schemes;
};

// The variants of ch13::chapter() that call plan(); "stream-k" is apart.
constexpr Variant kPlanned[] = {
    {"default", {true, true}}, {"tiles", {false, false}}, {"split-k", {true, false}}};
constexpr const char* kStreamK = "stream-k";

/// The plan of variant "stream-k": ch13::launch_stream_k()'s choice, stream-K
/// with whichever tiling cost() favours, with the GPU's shape given.
ch13::Plan stream_k_plan(const Size& z, const Gpu& g) {
  return ch13::stream_k_plan(z.M, z.N, z.K, g.sms, g.big_blocks, g.small_blocks);
}

/// Whether the rows of an M x N x K product start on 16-byte boundaries, as
/// the harness allocates its matrices: K and N multiples of 4.
bool rows_aligned(const Size& z) { return ch13::rows_on_16_bytes(z.N, z.K); }

/// Big's plain tiles, one block per tile: chapter 12's launch.
constexpr const char* kBigTiles = "big-tiles";

ch13::Plan big_tiles_plan(const Size& z, const Gpu& g) {
  const ch13::Schedule plain = ch13::split_k<ch13::Big>(z.M, z.N, z.K, 1);
  // Chapter 12 runs rows off the 16-byte grid on its general path.
  const double cost = ch13::cost<ch13::Big>(plain, g.sms, g.big_blocks);
  return {false, plain, rows_aligned(z) ? cost : cost * ch13::kGeneralSlowdown, false, 0};
}

/// The plan variant `name` runs for `z` (or "big-tiles").
ch13::Plan plan_of(const std::string& name, const Size& z, const Gpu& g) {
  if (name == kStreamK) return stream_k_plan(z, g);
  if (name == kBigTiles) return big_tiles_plan(z, g);
  for (const Variant& v : kPlanned) {
    if (name == v.name) {
      return ch13::plan(z.M, z.N, z.K, g.sms, g.big_blocks, g.small_blocks, v.schemes,
                        rows_aligned(z));
    }
  }
  fail("no variant '" + name + "' (default, tiles, split-k, stream-k; or big-tiles)");
}

/// The blocks a schedule launches: tiles x slices, or stream-K's
/// data-parallel tiles and sharing blocks (as ch13::launch_path()).
long long grid_blocks(const ch13::Schedule& s) {
  return s.stream_k ? 1ll * s.dp_tiles + s.blocks : 1ll * s.tiles_m * s.tiles_n * s.slices;
}

/// "tiles", "split-k" or "stream-k": the scheme of a schedule.
const char* scheme_of(const ch13::Schedule& s) {
  if (s.stream_k) return "stream-k";
  return s.slices > 1 ? "split-k" : "tiles";
}

template <class T>
ladder::Json tiling_json(int blocks_per_sm) {
  ladder::Json out = ladder::Json::object();
  out.set("BM", T::BM);
  out.set("BN", T::BN);
  out.set("BK", T::BK);
  out.set("blocks_per_sm", blocks_per_sm);
  return out;
}

/// The part of p's count that is the packed copies (0 when not packed), as
/// ch13::plan_tiling() adds it. The schedule is of the padded sizes; the
/// copies' floats are of the product's own, `z`.
double copies(const ch13::Plan& p, const Size& z, const Gpu& g) {
  if (!p.packed) return 0.0;
  return ch13::packing_cost(z.M, z.N, z.K, g.sms);
}

/// The part of p's count that is split-K's second pass: its cost() less
/// its blocks' rounds and its copies (0 when there is no second pass).
double second_pass(const ch13::Plan& p, const Size& z, const Gpu& g) {
  const ch13::Schedule& s = p.schedule;
  if (s.stream_k || s.slices == 1) return 0.0;
  const long long blocks = 1ll * s.tiles_m * s.tiles_n * s.slices;
  const double rounds = p.small ? ch13::busiest_sm<ch13::Small>(blocks, g.sms, g.small_blocks)
                                : ch13::busiest_sm<ch13::Big>(blocks, g.sms, g.big_blocks);
  return p.cost - copies(p, z, g) - rounds * (s.steps_per_slice + ch13::kSegmentOverheadSteps);
}

ladder::Json plan_json(const ch13::Plan& p, const Size& z, const Gpu& g) {
  const ch13::Schedule& s = p.schedule;
  ladder::Json out = ladder::Json::object();
  out.set("tiling", p.small ? "small" : "big");
  out.set("scheme", scheme_of(s));
  out.set("tiles_m", s.tiles_m);
  out.set("tiles_n", s.tiles_n);
  out.set("tiles", s.tiles_m * s.tiles_n);
  out.set("steps", s.steps);
  out.set("slices", s.stream_k ? 1 : s.slices);
  out.set("steps_per_slice", s.stream_k ? s.steps : s.steps_per_slice);
  out.set("blocks", static_cast<double>(grid_blocks(s)));
  out.set("dp_tiles", s.stream_k ? s.dp_tiles : 0);
  out.set("sharing_blocks", s.stream_k ? s.blocks : 0);
  out.set("cost", static_cast<double>(p.cost));
  out.set("second_pass", second_pass(p, z, g));
  out.set("packed", p.packed);
  out.set("copies", copies(p, z, g));
  // What ch13::plan() compares: Small's count times kSmallSlowdown.
  const double weighted = p.small ? ch13::kSmallSlowdown * p.cost : static_cast<double>(p.cost);
  out.set("weighted_cost", weighted);
  // The same work spread evenly over the SMs, in the count's unit (elements
  // of C times K-steps of BK on one SM), with nothing lost to rounds,
  // segments, copies or a second pass: how much of the GPU the plan uses.
  static_assert(ch13::Big::BK == ch13::Small::BK, "one K-step for both tilings");
  const double even = 1.0 * z.M * z.N * (1.0 * z.K / ch13::Big::BK) / g.sms;
  out.set("busy_share", even / weighted);
  return out;
}

ladder::Json gpu_json(const Gpu& g) {
  ladder::Json out = ladder::Json::object();
  out.set("sms", g.sms);
  out.set("segment_overhead_steps", ch13::kSegmentOverheadSteps);
  out.set("big", tiling_json<ch13::Big>(g.big_blocks));
  out.set("small", tiling_json<ch13::Small>(g.small_blocks));
  return out;
}

ladder::Json size_json(const Size& z) {
  ladder::Json out = ladder::Json::object();
  out.set("M", z.M);
  out.set("N", z.N);
  out.set("K", z.K);
  return out;
}

/// Per size: each variant's plan, and Big's plain tiles.
ladder::Json plans_json(const std::vector<Size>& sizes, const Gpu& g) {
  ladder::Json entries = ladder::Json::array();
  for (const Size& z : sizes) {
    ladder::Json variants = ladder::Json::object();
    for (const Variant& v : kPlanned) variants.set(v.name, plan_json(plan_of(v.name, z, g), z, g));
    variants.set(kStreamK, plan_json(plan_of(kStreamK, z, g), z, g));
    ladder::Json entry = size_json(z);
    entry.set("variants", std::move(variants));
    entry.set("big_tiles", plan_json(big_tiles_plan(z, g), z, g));
    entries.push(std::move(entry));
  }
  ladder::Json out = gpu_json(g);
  out.set("sizes", std::move(entries));
  return out;
}

ladder::Json segment_json(const ch13::Segment& seg) {
  ladder::Json out = ladder::Json::object();
  out.set("tile", seg.tile);
  out.set("first_step", seg.first_step);
  out.set("end_step", seg.end_step);
  out.set("turn", seg.turn);
  out.set("turns", seg.turns);
  return out;
}

/// Block `block`'s segments in the order the kernel (sgemm_segments) runs
/// them: split-K's one segment, or stream-K's: a whole tile for each of the
/// first dp_tiles blocks, then each sharing block's from the end of its share
/// down.
ladder::Json block_segments(const ch13::Schedule& s, long long block) {
  ladder::Json segments = ladder::Json::array();
  if (!s.stream_k) {
    const int tiles = s.tiles_m * s.tiles_n;
    segments.push(segment_json(ch13::split_k_segment(s, static_cast<int>(block % tiles),
                                                     static_cast<int>(block / tiles))));
    return segments;
  }
  if (block < s.dp_tiles) {
    segments.push(segment_json({static_cast<int>(block), 0, s.steps, 0, 1, 0}));
    return segments;
  }
  const int b = static_cast<int>(block - s.dp_tiles);
  const long long begin = ch13::stream_k_begin(s, b);
  for (long long end = ch13::stream_k_begin(s, b + 1); end > begin;) {
    const ch13::Segment seg = ch13::stream_k_segment(s, b, begin, end);
    segments.push(segment_json(seg));
    end -= seg.end_step - seg.first_step;
  }
  return segments;
}

/// Variant `name`'s plan for `z` and every block's segments, blocks in the
/// order of their index (blockIdx.x + blockIdx.y * gridDim.x for split-K).
ladder::Json segments_json(const std::string& name, const Size& z, const Gpu& g) {
  const ch13::Plan p = plan_of(name, z, g);
  ladder::Json blocks = ladder::Json::array();
  for (long long block = 0; block < grid_blocks(p.schedule); ++block) {
    ladder::Json entry = ladder::Json::object();
    entry.set("block", static_cast<double>(block));
    entry.set("segments", block_segments(p.schedule, block));
    blocks.push(std::move(entry));
  }
  ladder::Json out = gpu_json(g);
  out.set("variant", name);
  out.set("size", size_json(z));
  out.set("plan", plan_json(p, z, g));
  out.set("blocks", std::move(blocks));
  return out;
}

void print_plans_text(const std::vector<Size>& sizes, const Gpu& g) {
  std::printf("%d SMs, %d Big and %d Small blocks per SM\n", g.sms, g.big_blocks, g.small_blocks);
  std::printf("%-16s %-9s %-6s %-9s %7s %6s %7s %6s\n", "size", "variant", "tiling", "scheme",
              "blocks", "slices", "steps", "cost/big-tiles");
  for (const Size& z : sizes) {
    const double base = static_cast<double>(big_tiles_plan(z, g).cost);
    const std::string words =
        std::to_string(z.M) + "x" + std::to_string(z.N) + "x" + std::to_string(z.K);
    for (const char* name : {"default", "tiles", "split-k", "stream-k"}) {
      const ch13::Plan p = plan_of(name, z, g);
      std::printf("%-16s %-9s %-6s %-9s %7lld %6d %7d %6.3f\n", words.c_str(), name,
                  p.small ? "small" : "big", scheme_of(p.schedule), grid_blocks(p.schedule),
                  p.schedule.stream_k ? 1 : p.schedule.slices, p.schedule.steps, p.cost / base);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  Gpu gpu;
  std::string segments;
  std::vector<Size> sizes;
  ladder::ArgParser parser;
  parser.flag("--json", &json)
      .value("--sms", tools::integer_into("--sms", 1, 4096, &gpu.sms))
      .value("--big-blocks", tools::integer_into("--big-blocks", 1, 64, &gpu.big_blocks))
      .value("--small-blocks", tools::integer_into("--small-blocks", 1, 64, &gpu.small_blocks))
      .value("--segments", ladder::text_into(&segments))
      .list("--sizes", tools::size_into("--sizes", &sizes));
  tools::parse_or_fail("tailplan", parser,
                       "usage: tailplan --sms S --big-blocks B --small-blocks b --sizes S... "
                       "[--segments VARIANT] [--json]\n  S is N (an N x N x N product) or MxNxK.\n",
                       argc, argv);
  if (gpu.sms == 0 || gpu.big_blocks == 0 || gpu.small_blocks == 0) {
    fail("give --sms, --big-blocks and --small-blocks");
  }
  if (sizes.empty()) fail("give --sizes: N or MxNxK");
  if (!segments.empty()) {
    if (sizes.size() != 1) fail("--segments draws one size");
    std::printf("%s\n", segments_json(segments, sizes[0], gpu).dump().c_str());
    return 0;
  }
  if (json) {
    std::printf("%s\n", plans_json(sizes, gpu).dump().c_str());
  } else {
    print_plans_text(sizes, gpu);
  }
  return 0;
}
