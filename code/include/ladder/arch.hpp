// The GPU architectures the book names, and the limits that decide whether a
// variant can run on each: the shared memory a block may ask for, the threads
// a block may have and the registers it may hold. One table, read three ways:
// Part II's launchers compare a variant with the GPU they run on (chapter
// 14's run_fitting()); the tool `archs` prints the table for the book, which
// writes each chapter's line on the GPUs that run it; and the CPU test
// tests/python/arch_compile.py compiles every chapter for the architectures
// it names here. Plain C++: nothing here needs the CUDA toolkit.
#pragma once

namespace ladder::arch {

/// The instructions a chapter needs beyond what every GPU of the table has.
enum class Needs : int {
  kNothing = 0,   ///< Part I: FP32 FMAs, shared memory, 16-byte loads
  kTf32Mma = 1,   ///< mma.sync on TF32 (chapters 14 and 15): sm_80 or newer
  kSm90aOnly = 2  ///< wgmma, TMA, setmaxnreg built for sm_90a (chapters 16, 17): 9.0 only
};

/// One architecture: its compute capability and the limits a block meets
/// there (the CUDA C++ Programming Guide's table of compute capabilities).
struct Arch {
  int cc;                     ///< compute capability as 10 * major + minor
  const char* gpus;           ///< GPUs of this architecture, for the page
  int smem_per_block_optin;   ///< shared memory a block may ask for, bytes
  int max_threads_per_block;  ///< threads in one block
  int regs_per_block;         ///< 32-bit registers one block may hold
  int max_regs_per_thread;    ///< registers one thread may have
};

/// The architectures the README names, oldest first: CUDA 13 builds for
/// sm_75 and newer.
inline constexpr Arch kArchs[] = {
    {75, "T4, RTX 20 series", 64 * 1024, 1024, 64 * 1024, 255},
    {80, "A100, A30", 163 * 1024, 1024, 64 * 1024, 255},
    {86, "RTX 30 series, A10", 99 * 1024, 1024, 64 * 1024, 255},
    {89, "RTX 40 series, L4", 99 * 1024, 1024, 64 * 1024, 255},
    {90, "H100, H200", 227 * 1024, 1024, 64 * 1024, 255},
    {100, "B200", 227 * 1024, 1024, 64 * 1024, 255},
    {120, "RTX 50 series", 99 * 1024, 1024, 64 * 1024, 255},
};

/// What each chapter needs, where it needs more than Part I (kNothing).
struct ChapterNeeds {
  const char* slug;  ///< the chapter's folder name
  Needs needs;
};
inline constexpr ChapterNeeds kChapterNeeds[] = {
    {"14-tf32", Needs::kTf32Mma},
    {"15-3xtf32", Needs::kTf32Mma},
    {"16-wgmma", Needs::kSm90aOnly},
    {"17-3xtf32-wgmma", Needs::kSm90aOnly},
};

/// The number of architectures in kArchs.
inline constexpr int kArchCount = sizeof(kArchs) / sizeof(kArchs[0]);

/// Whether architecture `a` has the instructions `needs` names.
constexpr bool has(const Arch& a, Needs needs) {
  switch (needs) {
    case Needs::kNothing:
      return true;
    case Needs::kTf32Mma:
      return a.cc >= 80;
    case Needs::kSm90aOnly:
      return a.cc == 90;
  }
  return false;
}

/// Why a block of `threads` threads that asks for `smem_bytes` of shared
/// memory cannot run on `a`, or nullptr when it can. `registers` (per
/// thread) is checked when known; 0 means not known.
constexpr const char* why_not(const Arch& a, int smem_bytes, int threads, int registers = 0) {
  if (smem_bytes > a.smem_per_block_optin) return "more shared memory than a block may have";
  if (threads > a.max_threads_per_block) return "more threads than a block may have";
  if (registers > a.max_regs_per_thread) return "more registers than a thread may have";
  if (registers * threads > a.regs_per_block) return "more registers than a block may hold";
  return nullptr;
}

/// The same check against the limits a GPU reports at run time.
constexpr Arch with_limits(int cc, int smem_per_block_optin, int max_threads_per_block,
                           int regs_per_block) {
  return {cc, "", smem_per_block_optin, max_threads_per_block, regs_per_block, 255};
}

/// The architecture of the H100 and H200, the GPUs the book measures on.
inline constexpr const Arch& kHopper = kArchs[4];
static_assert(kHopper.cc == 90, "kHopper is sm_90");

}  // namespace ladder::arch
