// archs: the GPU architectures the book names, their limits and what each
// chapter needs beyond Part I, from ladder/arch.hpp, printed as JSON for the
// book (the line on the GPUs that run each chapter) and for the CPU test that
// compiles every chapter for them (tests/python/arch_compile.py). Runs on the
// CPU; its one option, --json, changes nothing.
#include <cstdio>
#include <ladder/arch.hpp>
#include <ladder/json.hpp>

#include "cli.hpp"

namespace {

/// The name of what `needs` names, as the JSON spells it.
const char* needs_name(ladder::arch::Needs needs) {
  switch (needs) {
    case ladder::arch::Needs::kNothing:
      return "nothing";
    case ladder::arch::Needs::kTf32Mma:
      return "tf32-mma";
    case ladder::arch::Needs::kSm90aOnly:
      return "sm90a-only";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  // The output is JSON either way; --json is taken as the other tools take it.
  bool json = false;
  ladder::ArgParser parser;
  parser.flag("--json", &json);
  tools::parse_or_fail("archs", parser, "usage: archs [--json]\n", argc, argv);
  using namespace ladder::arch;
  ladder::Json archs = ladder::Json::array();
  for (const Arch& a : kArchs) {
    ladder::Json needs = ladder::Json::object();
    for (Needs n : {Needs::kNothing, Needs::kTf32Mma, Needs::kSm90aOnly}) {
      needs.set(needs_name(n), has(a, n));
    }
    archs.push(ladder::Json::object()
                   .set("cc", a.cc)
                   .set("gpus", a.gpus)
                   .set("smem_per_block_optin", a.smem_per_block_optin)
                   .set("max_threads_per_block", a.max_threads_per_block)
                   .set("regs_per_block", a.regs_per_block)
                   .set("max_regs_per_thread", a.max_regs_per_thread)
                   .set("has", std::move(needs)));
  }
  ladder::Json chapters = ladder::Json::object();
  for (const ChapterNeeds& c : kChapterNeeds) chapters.set(c.slug, needs_name(c.needs));
  ladder::Json out = ladder::Json::object();
  out.set("schema", 1).set("archs", std::move(archs)).set("chapter_needs", std::move(chapters));
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
