// A CPU check of the transpose exercise's bank claims, computed from the
// exercise's own index functions (transpose.cuh, which has no main()) by the
// bank model. Nothing here runs on a GPU.
//
// It checks, for every warp of a tiled block and every step:
//   * the tile write (a warp along a row) is conflict-free in every layout;
//   * the tile read (a warp down a column) lands all 32 lanes in one bank for
//     the 32 x 32 layout (32 wavefronts) and in 32 distinct banks for the
//     padded and the swizzled layouts (1 wavefront);
// and that every layout gives each element of the tile its own slot inside
// the floats it declares (a layout that fails this would lose data).
//
// Build and run it alone, from this folder:
//   nvcc -std=c++17 -I../../../code/include bank_check.cu -lcublas -o bank_check && ./bank_check
#include <cstdio>
#include <vector>

#include "transpose.cuh"

namespace {

int failures = 0;

/// Counts and reports a claim that does not hold; `a` and `b` say where
/// (row and column, or warp and step).
void expect(bool ok, const char* layout, const char* what, const char* where, int a, int b) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "bank_check: %s: %s (%s = %d, %d)\n", layout, what, where, a, b);
}

/// Every (row, col) of the tile maps to a different slot in [0, kFloats).
template <typename Layout>
void check_slots(const char* name) {
  std::vector<int> uses(Layout::kFloats, 0);
  for (int row = 0; row < transpose::TILE; ++row) {
    for (int col = 0; col < transpose::TILE; ++col) {
      const int slot = Layout::index(row, col);
      const bool inside = slot >= 0 && slot < Layout::kFloats;
      expect(inside, name, "an element lies outside the tile's storage", "row, col", row, col);
      if (inside && ++uses[slot] > 1) {
        expect(false, name, "two elements share a slot", "row, col", row, col);
      }
    }
  }
}

/// The wavefronts of every warp's write and read match `write_wavefronts`
/// and `read_wavefronts`, and the read's banks are as claimed: all one bank
/// when `read_wavefronts` is 32, all distinct when it is 1.
template <typename Layout>
void check_banks(const char* name, int write_wavefronts, int read_wavefronts) {
  int most_write = 0, most_read = 0;  // the costliest warp instructions seen
  for (int warp = 0; warp < transpose::kWarpsPerBlock; ++warp) {
    for (int step = 0; step < transpose::STEPS; ++step) {
      const transpose::WarpAddresses a = transpose::warp_addresses<Layout>(warp, step);
      const ladder::bank::Analysis write = ladder::bank::analyze(a.write);
      const ladder::bank::Analysis read = ladder::bank::analyze(a.read);
      most_write = write.wavefronts > most_write ? write.wavefronts : most_write;
      most_read = read.wavefronts > most_read ? read.wavefronts : most_read;
      expect(write.wavefronts == write_wavefronts, name, "tile write wavefronts differ",
             "warp, step", warp, step);
      expect(read.wavefronts == read_wavefronts, name, "tile read wavefronts differ", "warp, step",
             warp, step);
      std::vector<int> lanes_in_bank(ladder::bank::kBanks, 0);
      for (int lane = 0; lane < transpose::WARP; ++lane) ++lanes_in_bank[read.bank[lane]];
      int busiest = 0;
      for (int n : lanes_in_bank) busiest = n > busiest ? n : busiest;
      expect(busiest == read_wavefronts, name, "tile read banks are not as claimed", "warp, step",
             warp, step);
    }
  }
  std::printf(
      "%-15s at most %2d wavefront(s) per tile write, %2d per tile read (expected %d, %d)\n", name,
      most_write, most_read, write_wavefronts, read_wavefronts);
}

}  // namespace

int main() {
  check_slots<transpose::Layout32x32>("tiled_32x32");
  check_slots<transpose::Layout32x33>("tiled_32x33");
  check_slots<transpose::LayoutSwizzled>("tiled_swizzled");
  check_banks<transpose::Layout32x32>("tiled_32x32", 1, 32);
  check_banks<transpose::Layout32x33>("tiled_32x33", 1, 1);
  check_banks<transpose::LayoutSwizzled>("tiled_swizzled", 1, 1);
  if (failures > 0) {
    std::fprintf(stderr, "bank_check: %d claim(s) failed\n", failures);
    return 1;
  }
  std::printf("bank_check: every claim holds\n");
  return 0;
}
