// lastround: how chapter 17's 3xTF32 kernel on its 128 x 128 tile divides an
// M x N x K product among blocks on a GPU of a given number of SMs, with its
// last round cut into slices and without: every block's tile and K-steps.
// With --tf32, chapter 16's TF32 kernel instead: uncut on the tile its own
// launcher picks, cut on the tile the variant "cut" picks.
// CPU only: nothing here runs on a GPU.
//
//   lastround --sms S --size S [--tf32] [--json]     S is N or MxNxK
//
// Every number comes from chapters/16-wgmma/tiling.cuh: ch16::last_round()
// and ch16::uncut() for the plan, ch16::block_work() for each block's share,
// ch16::picked_rows() for the TF32 tiles, as the kernel's launchers and the
// kernel call them.
#include <cstdio>
#include <cstdlib>
#include <ladder/json.hpp>
#include <string>
#include <vector>

#include "chapters/16-wgmma/tiling.cuh"
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

/// A plan of tiles of `rows` rows, and each of its blocks' work:
/// [tile, first_step, end_step].
ladder::Json plan_json(const ch16::LastRound& r, int rows) {
  ladder::Json out = ladder::Json::object();
  out.set("bm", ladder::Json::number(rows));
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
  out.set("uncut", plan_json(uncut, uncut_rows));
  out.set("cut", plan_json(cut, cut_rows));
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
