// lastround: how chapter 17's 3xTF32 kernel on its 128 x 128 tile divides an
// N x N x N product among blocks on a GPU of a given number of SMs, with its
// last round cut into slices and without: every block's tile and K-steps.
// CPU only: nothing here runs on a GPU.
//
//   lastround --sms S N [--json]
//
// Every number comes from chapters/16-wgmma/tiling.cuh: ch16::last_round()
// and ch16::uncut() for the plan, ch16::block_work() for each block's share,
// as the kernel's launcher and the kernel call them.
#include <cstdio>
#include <cstdlib>
#include <ladder/json.hpp>
#include <string>

#include "chapters/16-wgmma/tiling.cuh"

namespace {

using Tile = ch16::Split;  // chapter 17's 128 x 128 tile

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "lastround: %s\n", message.c_str());
  std::exit(2);
}

/// A whole number from 1 to `most`, or a one-line complaint and exit code 2.
int parse_count(const std::string& what, const std::string& text, int most) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > most) {
    fail(what + " is a whole number from 1 to " + std::to_string(most) + ", got '" + text + "'");
  }
  return static_cast<int>(value);
}

/// A plan and each of its blocks' work: [tile, first_step, end_step].
ladder::Json plan_json(const ch16::LastRound& r) {
  ladder::Json out = ladder::Json::object();
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
  int sms = 0, n = 0;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--sms") {
      if (i + 1 >= argc) fail("--sms wants a value");
      sms = parse_count("--sms", argv[++i], 4096);
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: lastround --sms S N [--json]\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      fail("unknown option " + arg + " (try --help)");
    } else {
      if (n != 0) fail("give one size N");
      n = parse_count("N", arg, 1 << 16);
    }
  }
  if (sms == 0 || n == 0) fail("give --sms S and a size N");
  const ch16::LastRound uncut = ch16::uncut<Tile>(n, n, n);
  const ch16::LastRound cut = ch16::last_round<Tile>(n, n, n, sms);
  if (!json) {
    std::printf("%d x %d x %d on %d SMs: %d tiles of %d x %d, %d K-steps each; ", n, n, n, sms,
                cut.tiles, Tile::BM, ch16::BN, cut.steps);
    if (cut.slices == 1) {
      std::printf("the last round is not cut\n");
    } else {
      std::printf("the last %d tiles cut into %d slices of at most %d steps\n",
                  cut.tiles - cut.whole_tiles, cut.slices, cut.steps_per_slice);
    }
    return 0;
  }
  ladder::Json out = ladder::Json::object();
  out.set("size", ladder::Json::number(n));
  out.set("sms", ladder::Json::number(sms));
  out.set("bm", ladder::Json::number(Tile::BM));
  out.set("bn", ladder::Json::number(ch16::BN));
  out.set("bk", ladder::Json::number(ch16::BK));
  out.set("uncut", plan_json(uncut));
  out.set("cut", plan_json(cut));
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
