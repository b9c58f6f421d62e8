// A model of shared-memory banks: how many wavefronts one warp-wide access takes.
//
// The model
// ---------
// Shared memory is 32 banks, each 4 bytes wide: the 4-byte word at byte
// address a lives in bank (a / 4) % 32. One wavefront (one pass through the
// banks, what Nsight Compute counts as a shared-memory wavefront) serves at
// most one word per bank, and as many lanes as want that word (broadcast).
//
//   * A 4-byte access (LDS, STS) is one phase of 32 lanes.
//   * An 8-byte access (LDS.64) is two phases of 16 lanes; a 16-byte access
//     (LDS.128) is four phases of 8 lanes. A phase moves at most 128 bytes,
//     which is one word from each of the 32 banks.
//   * A lane of an 8- or 16-byte access touches 2 or 4 consecutive words, so
//     2 or 4 consecutive banks.
//   * A phase takes as many wavefronts as the busiest bank has distinct words
//     in it (a phase with an active lane takes at least one); the access takes
//     the sum over its phases.
//   * A 64-lane group (a 64-wide wavefront, as on some non-NVIDIA GPUs) is
//     analysed as two 32-lane halves, each on its own, and the halves add up.
//
// The ideal is one wavefront per phase that has an active lane, so the
// conflict degree (wavefronts / ideal) is 1 for a conflict-free access and
// 32 for 32 lanes reading 32 different words of one bank.
//
// Limits
// ------
// * Only what the banks do: no latency, no pipelining across instructions,
//   no atomics, no `ldmatrix`/TMA/`cp.async` paths.
// * The phase split is the documented one. Hardware may do better in special
//   cases (for example an 8-byte access whose 32 lanes all fall in 128 bytes);
//   the profiler's `l1tex__data_pipe_lsu_wavefronts_mem_shared` counters are
//   the judge, and the measure command records them beside this model.
// * A phase whose lanes are all inactive is taken to cost nothing.
// * Addresses must be aligned to the access width: CUDA faults on a
//   misaligned shared-memory access, so the model refuses one rather than
//   guess (std::invalid_argument).
//
// Everything here is constexpr, so a test or a chapter can check a bank
// claim with static_assert.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ladder::bank {

/// Number of banks, and the width of one bank in bytes.
inline constexpr int kBanks = 32;
inline constexpr int kBankBytes = 4;
/// Bytes one phase can move: one word from every bank.
inline constexpr int kPhaseBytes = kBanks * kBankBytes;
/// The largest group the model takes (a 64-lane wavefront).
inline constexpr int kMaxLanes = 64;
/// Phases of the widest access (16 bytes: 4) times the halves of a 64-lane group.
inline constexpr int kMaxPhases = 8;
/// Every lane active.
inline constexpr std::uint64_t kAllLanes = ~std::uint64_t{0};

/// The bank that holds the 4-byte word at `byte_address`.
constexpr int bank_of(std::uint32_t byte_address) {
  return static_cast<int>((byte_address / kBankBytes) % kBanks);
}

/// One phase: a slice of the lanes served together.
struct Phase {
  int first_lane = 0;  ///< the phase's lanes are [first_lane, first_lane + lanes)
  int lanes = 0;
  int active_lanes = 0;
  /// Distinct 4-byte words this phase requests from each bank.
  std::array<int, kBanks> words_per_bank{};
  /// Wavefronts this phase takes: the largest entry of words_per_bank, or 0
  /// when no lane of the phase is active.
  int wavefronts = 0;
};

/// What one warp-wide access costs.
struct Analysis {
  int lanes = 0;        ///< lanes given (at most the group size)
  int width_bytes = 4;  ///< 4, 8 or 16
  int group_size = 32;  ///< 32, or 64 for a wavefront analysed per half
  /// First bank each lane touches (it touches width_bytes / 4 consecutive
  /// banks from there); -1 for an inactive lane or one past `lanes`.
  std::array<int, kMaxLanes> bank{};
  int phase_count = 0;
  std::array<Phase, kMaxPhases> phases{};
  int wavefronts = 0;        ///< sum over the phases
  int ideal_wavefronts = 0;  ///< phases with at least one active lane

  /// wavefronts / ideal_wavefronts: 1 means conflict-free (0 for no active lane).
  constexpr double conflict_degree() const {
    return ideal_wavefronts == 0 ? 0.0 : static_cast<double>(wavefronts) / ideal_wavefronts;
  }
};

namespace detail {

constexpr bool lane_active(std::uint64_t mask, int lane) { return ((mask >> lane) & 1u) != 0; }

// Fills `phase` for the lanes [phase.first_lane, phase.first_lane + phase.lanes).
constexpr void analyse_phase(const std::uint32_t* addresses, std::uint64_t mask, int words_per_lane,
                             Phase& phase) {
  // A phase requests at most kPhaseBytes / kBankBytes = 32 distinct words.
  std::array<std::uint32_t, kBanks> distinct{};
  int distinct_count = 0;
  for (int lane = phase.first_lane; lane < phase.first_lane + phase.lanes; ++lane) {
    if (!lane_active(mask, lane)) continue;
    ++phase.active_lanes;
    for (int w = 0; w < words_per_lane; ++w) {
      const std::uint32_t word = addresses[lane] / kBankBytes + static_cast<std::uint32_t>(w);
      bool seen = false;  // a word asked for twice is served once (broadcast)
      for (int i = 0; i < distinct_count; ++i) seen = seen || distinct[i] == word;
      if (!seen) distinct[distinct_count++] = word;
    }
  }
  for (int i = 0; i < distinct_count; ++i) ++phase.words_per_bank[distinct[i] % kBanks];
  for (int count : phase.words_per_bank) {
    if (count > phase.wavefronts) phase.wavefronts = count;
  }
}

}  // namespace detail

/// @brief Analyses one shared-memory access of `lanes` lanes.
///
/// @param addresses    byte address (offset in shared memory) of each lane
/// @param lanes        number of lanes, 1 to group_size
/// @param width_bytes  bytes each lane moves: 4, 8 or 16
/// @param group_size   32 (a warp) or 64 (a wavefront analysed per 32-lane half)
/// @param active_mask  bit i set when lane i takes part
/// @throws std::invalid_argument for a bad width, group size or lane count,
///         or an active lane whose address is not a multiple of width_bytes.
constexpr Analysis analyze(const std::uint32_t* addresses, int lanes, int width_bytes = 4,
                           int group_size = 32, std::uint64_t active_mask = kAllLanes) {
  if (width_bytes != 4 && width_bytes != 8 && width_bytes != 16) {
    throw std::invalid_argument("access width must be 4, 8 or 16 bytes");
  }
  if (group_size != 32 && group_size != 64) {
    throw std::invalid_argument("group size must be 32 or 64 lanes");
  }
  if (lanes < 1 || lanes > group_size) {
    throw std::invalid_argument("lane count must be between 1 and the group size");
  }
  Analysis result;
  result.lanes = lanes;
  result.width_bytes = width_bytes;
  result.group_size = group_size;
  for (int lane = 0; lane < kMaxLanes; ++lane) {
    const bool active = lane < lanes && detail::lane_active(active_mask, lane);
    if (active && addresses[lane] % width_bytes != 0) {
      throw std::invalid_argument("misaligned shared-memory access (CUDA faults on it)");
    }
    result.bank[lane] = active ? bank_of(addresses[lane]) : -1;
  }
  // 32-lane halves of a 64-lane group never share a phase: 32 is a multiple
  // of every phase size. A short list ends with a short phase.
  const int lanes_per_phase = kPhaseBytes / width_bytes;  // 32, 16 or 8
  for (int first = 0; first < lanes; first += lanes_per_phase) {
    Phase& phase = result.phases[result.phase_count++];
    phase.first_lane = first;
    phase.lanes = first + lanes_per_phase <= lanes ? lanes_per_phase : lanes - first;
    detail::analyse_phase(addresses, active_mask, width_bytes / kBankBytes, phase);
    result.wavefronts += phase.wavefronts;
    if (phase.active_lanes > 0) ++result.ideal_wavefronts;
  }
  return result;
}

/// The same, for a fixed-size array of lanes (usable in static_assert).
template <std::size_t N>
constexpr Analysis analyze(const std::array<std::uint32_t, N>& addresses, int width_bytes = 4,
                           int group_size = 32, std::uint64_t active_mask = kAllLanes) {
  static_assert(N >= 1 && N <= kMaxLanes, "one access has 1 to 64 lanes");
  return analyze(addresses.data(), static_cast<int>(N), width_bytes, group_size, active_mask);
}

/// The same, for a list of lanes built at run time.
inline Analysis analyze(const std::vector<std::uint32_t>& addresses, int width_bytes = 4,
                        int group_size = 32, std::uint64_t active_mask = kAllLanes) {
  if (addresses.empty() || addresses.size() > kMaxLanes) {
    throw std::invalid_argument("one access has 1 to 64 lanes");
  }
  return analyze(addresses.data(), static_cast<int>(addresses.size()), width_bytes, group_size,
                 active_mask);
}

/// @brief The byte addresses of `N` lanes, from a function lane -> element
/// index into an array of `element_bytes`-byte elements (4 for float).
///
/// For example `lane_addresses<32>([](int lane) { return lane * 33; })` is a
/// column read of a float tile with rows of 33 floats.
template <int N, typename IndexOfLane>
constexpr std::array<std::uint32_t, N> lane_addresses(IndexOfLane index_of_lane,
                                                      int element_bytes = 4) {
  std::array<std::uint32_t, N> addresses{};
  for (int lane = 0; lane < N; ++lane) {
    addresses[lane] = static_cast<std::uint32_t>(index_of_lane(lane) * element_bytes);
  }
  return addresses;
}

}  // namespace ladder::bank
