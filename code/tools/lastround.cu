// lastround: how chapter 17's 3xTF32 kernel on its 128 x 128 tile divides an
// M x N x K product among blocks on a GPU of a given number of SMs, with its
// last round cut into slices and without: every block's tile and K-steps.
// With --tf32, chapter 16's TF32 kernel instead: uncut on the tile its own
// launcher picks, cut on the tile the variant "cut" picks. With --json, also
// each plan's busiest SM's K-steps and, for the chapter's own launcher, the
// share of the GPU its count says it keeps busy (ladder_tools.misses).
// CPU only: nothing here runs on a GPU.
//
//   lastround --sms S --size S [--tf32] [--json]     S is N or MxNxK
//
// Every number comes from chapters/16-wgmma/counts.cuh: ch16::last_round()
// and ch16::uncut() for the plan, ch16::block_work() for each block's share,
// ch16::picked_rows() for the TF32 tiles, as the kernel's launchers and the
// kernel call them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ladder/json.hpp>
#include <string>
#include <vector>

#include "chapters/16-wgmma/counts.cuh"
#include "cli.hpp"

namespace {

using Tile = ch16::Split;  // chapter 17's 128 x 128 tile

[[noreturn]] void fail(const std::string& message) { tools::fail("lastround", message); }

/// Tiling T's plan for an M x N x K product: its last round cut or not.
template <class T>
ch16::LastRound plan_of(bool cut, int m, int n, int k, int sms) {
  return cut ? ch16::last_round<T>(m, n, k, sms) : ch16::uncut<T>(m, n, k);
}

/// The plan of chapter 16's TF32 tile of `rows` rows (64, 128 or 256).
ch16::LastRound tf32_plan(int rows, bool cut, int m, int n, int k, int sms) {
  if (rows == ch16::Wide::BM) return plan_of<ch16::Wide>(cut, m, n, k, sms);
  if (rows == ch16::Narrow::BM) return plan_of<ch16::Narrow>(cut, m, n, k, sms);
  return plan_of<ch16::Chosen>(cut, m, n, k, sms);
}

/// Block-steps of `rows`-row tiles an M x N x K product holds, spread evenly
/// over `sms` SMs: the busiest SM's K-steps if no SM waited and no tile
/// were part-empty.
double even_steps(int rows, int m, int n, int k, int sms) {
  return 1.0 * m * n * k / (1.0 * rows * ch16::BN * ch16::BK) / sms;
}

/// A plan of tiles of `rows` rows, the K-steps its busiest SM runs
/// (ch16::busiest_steps(), the chapters' counts), and each of its blocks'
/// work: [tile, first_step, end_step].
ladder::Json plan_json(const ch16::LastRound& r, int rows, int sms) {
  ladder::Json out = ladder::Json::object();
  out.set("bm", ladder::Json::number(rows));
  out.set("busiest_steps", ladder::Json::number(static_cast<double>(ch16::busiest_steps(r, sms))));
  out.set("tiles", ladder::Json::number(r.tiles));
  out.set("whole_tiles", ladder::Json::number(r.whole_tiles));
  out.set("slices", ladder::Json::number(r.slices));
  out.set("steps", ladder::Json::number(r.steps));
  out.set("steps_per_slice", ladder::Json::number(r.steps_per_slice));
  ladder::Json blocks = ladder::Json::array();
  for (int b = 0; b < ch16::last_round_blocks(r); ++b) {
    const ch16::BlockWork w = ch16::block_work(r, b);
    ladder::Json block = ladder::Json::array();
    block.push(ladder::Json::number(w.tile));
    block.push(ladder::Json::number(w.first_step));
    block.push(ladder::Json::number(w.end_step));
    blocks.push(block);
  }
  out.set("blocks", blocks);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  bool json = false, tf32 = false;
  std::vector<ladder::Size> sizes;
  ladder::ArgParser parser;
  parser.flag("--json", &json)
      .flag("--tf32", &tf32)
      .value("--sms", tools::integer_into("--sms", 1, 4096, &sms))
      .value("--size", tools::size_into("--size", &sizes));
  tools::parse_or_fail("lastround", parser,
                       "usage: lastround --sms S --size S [--tf32] [--json]   "
                       "(S: N or MxNxK)\n",
                       argc, argv);
  if (sms == 0 || sizes.size() != 1) fail("give --sms S and one --size");
  const int m = sizes[0].M, n = sizes[0].N, k = sizes[0].K;
  // 3xTF32: the 128-row tile both ways. TF32: each launcher's own pick.
  const int uncut_rows =
      tf32 ? ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, false>(m, n, k, sms)
           : Tile::BM;
  const int cut_rows =
      tf32 ? ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, true>(m, n, k, sms)
           : Tile::BM;
  const ch16::LastRound uncut =
      tf32 ? tf32_plan(uncut_rows, false, m, n, k, sms) : plan_of<Tile>(false, m, n, k, sms);
  const ch16::LastRound cut =
      tf32 ? tf32_plan(cut_rows, true, m, n, k, sms) : plan_of<Tile>(true, m, n, k, sms);
  if (!json) {
    std::printf("%d x %d x %d on %d SMs: %d tiles of %d x %d, %d K-steps each; ", m, n, k, sms,
                cut.tiles, cut_rows, ch16::BN, cut.steps);
    if (cut.slices == 1) {
      std::printf("the last round is not cut\n");
    } else {
      std::printf("the last %d tiles cut into %d slices of at most %d steps\n",
                  cut.tiles - cut.whole_tiles, cut.slices, cut.steps_per_slice);
    }
    return 0;
  }
  ladder::Json out = ladder::Json::object();
  out.set("m", ladder::Json::number(m));
  out.set("n", ladder::Json::number(n));
  out.set("k", ladder::Json::number(k));
  out.set("sms", ladder::Json::number(sms));
  out.set("bn", ladder::Json::number(ch16::BN));
  out.set("bk", ladder::Json::number(ch16::BK));
  out.set("uncut", plan_json(uncut, uncut_rows, sms));
  out.set("cut", plan_json(cut, cut_rows, sms));
  // What the chapter's own launcher runs, and the share of the GPU its count
  // says it uses: its even spread over its busiest SM's count. Chapter 16's
  // launcher runs the uncut plan (its count: the floats the busiest SM
  // copies, (BM + BN) * BK a step, so the share is a ratio of steps).
  // Chapter 17's, launch_3xtf32_by_count(), cuts the last round of the tile
  // whose split_steps() is the smaller (the 64-row tile's steps priced at
  // kNarrowSplitStep of the 128-row tile's).
  ladder::Json launcher = ladder::Json::object();
  if (tf32) {
    launcher.set("bm", uncut_rows);
    launcher.set("cut", false);
    launcher.set("busy_share",
                 ladder::Json::number(even_steps(uncut_rows, m, n, k, sms) /
                                      static_cast<double>(ch16::busiest_steps(uncut, sms))));
  } else {
    const double square = ch16::split_steps<ch16::Split>(m, n, k, sms);
    const double narrow = ch16::split_steps<ch16::SplitNarrow>(m, n, k, sms);
    launcher.set("bm", narrow < square ? ch16::SplitNarrow::BM : ch16::Split::BM);
    launcher.set("cut", true);
    launcher.set("busy_share", ladder::Json::number(even_steps(Tile::BM, m, n, k, sms) /
                                                    std::min(square, narrow)));
  }
  out.set("launcher", launcher);
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
