// Tests of the shared-memory bank model (code/include/ladder/bank_model.hpp).
//
// Every expected number is worked out by hand in the comment above it, from
// bank = (byte address / 4) % 32, so a test fails when the model and the
// arithmetic disagree.
#include <gtest/gtest.h>

#include <cstdint>
#include <ladder/bank_model.hpp>
#include <stdexcept>
#include <vector>

namespace {

using ladder::bank::analyze;
using ladder::bank::lane_addresses;

// Lane i reads element i * stride of a float array: a column walk down a
// tile whose rows are `stride` floats long.
template <int Lanes = 32>
constexpr std::array<std::uint32_t, Lanes> column_walk(int stride) {
  return lane_addresses<Lanes>([stride](int lane) { return lane * stride; });
}

// The model is constexpr, so the headline claims hold at compile time too.
static_assert(analyze(column_walk(32)).wavefronts == 32);
static_assert(analyze(column_walk(33)).wavefronts == 1);

// A 32 x 32 float tile read down a column: element (lane, c) is word
// lane * 32 + c, in bank (lane * 32 + c) % 32 = c for every lane. 32 different
// words in one bank: 32 wavefronts, a 32-way conflict.
TEST(BankModel, Tile32x32ColumnReadIs32Way) {
  const auto a = analyze(column_walk(32));
  EXPECT_EQ(a.wavefronts, 32);
  EXPECT_EQ(a.ideal_wavefronts, 1);
  EXPECT_DOUBLE_EQ(a.conflict_degree(), 32.0);
  EXPECT_EQ(a.phases[0].words_per_bank[0], 32);
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(a.bank[lane], 0);
}

// Padding each row to 33 floats: word lane * 33 is in bank (lane * 33) % 32 =
// lane % 32 = lane. 32 lanes, 32 banks, one wavefront.
TEST(BankModel, Tile32x33ColumnReadIsConflictFree) {
  const auto a = analyze(column_walk(33));
  EXPECT_EQ(a.wavefronts, 1);
  EXPECT_DOUBLE_EQ(a.conflict_degree(), 1.0);
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(a.bank[lane], lane);
}

// The unpadded tile with the column XOR-swizzled by the row: element (r, c)
// is stored at r * 32 + (c ^ r). Reading column c, lane r lands in bank c ^ r,
// and r -> c ^ r is a permutation of 0..31: conflict-free without padding.
TEST(BankModel, Tile32x32XorSwizzleColumnReadIsConflictFree) {
  for (int c = 0; c < 32; ++c) {
    const auto a = analyze(lane_addresses<32>([c](int r) { return r * 32 + (c ^ r); }));
    EXPECT_EQ(a.wavefronts, 1) << "column " << c;
  }
}

// Every lane reads the same word: one word, broadcast, one wavefront.
TEST(BankModel, OneAddressIsBroadcast) {
  const auto a = analyze(lane_addresses<32>([](int) { return 7; }));
  EXPECT_EQ(a.wavefronts, 1);
  EXPECT_EQ(a.phases[0].words_per_bank[7], 1);
}

// Consecutive floats: lane i in bank i. One wavefront.
TEST(BankModel, ConsecutiveFloatsAreConflictFree) {
  EXPECT_EQ(analyze(column_walk(1)).wavefronts, 1);
}

// Stride 2: lane i reads word 2i, bank 2i % 32. Lanes i and i + 16 share
// bank 2i with different words (2i and 2i + 32): 2 wavefronts, 2-way.
TEST(BankModel, StrideTwoFloatsIsTwoWay) {
  const auto a = analyze(column_walk(2));
  EXPECT_EQ(a.wavefronts, 2);
  EXPECT_DOUBLE_EQ(a.conflict_degree(), 2.0);
  EXPECT_EQ(a.phases[0].words_per_bank[0], 2);
  EXPECT_EQ(a.phases[0].words_per_bank[1], 0);
}

// Two lanes in one bank asking for the same word are one request: lanes
// 0..15 read words 0..15, lanes 16..31 read them again. One wavefront.
TEST(BankModel, RepeatedWordsInOneBankCountOnce) {
  EXPECT_EQ(analyze(lane_addresses<32>([](int lane) { return lane % 16; })).wavefronts, 1);
}

// The transposed store of A into shared memory in a warp-tiled SGEMM with
// BM = 128 (four scalar stores per thread, j = 0..3):
//   As[(innerColA * 4 + j) * STRIDE + innerRowA] with
//   innerRowA = tid / (BK / 4), innerColA = tid % (BK / 4).
// Lane = tid for the first warp (and `offset` = 0; a non-zero offset shifts
// every lane by the same amount and changes nothing).
std::array<std::uint32_t, 32> transposed_a_store(int bk, int stride, int j) {
  return lane_addresses<32>([=](int tid) {
    const int inner_row_a = tid / (bk / 4);
    const int inner_col_a = tid % (bk / 4);
    return (inner_col_a * 4 + j) * stride + inner_row_a;
  });
}

// BK = 16, STRIDE = 128: 128 % 32 = 0, so the bank is innerRowA % 32 =
// tid / 4, 8 banks (0..7). Each holds the 4 lanes with innerColA = 0..3, whose
// words differ by multiples of 4 * 128: 4 distinct words, 4-way, every j.
TEST(BankModel, TransposedAStoreBk16Stride128IsFourWay) {
  for (int j = 0; j < 4; ++j) {
    const auto a = analyze(transposed_a_store(16, 128, j));
    EXPECT_EQ(a.wavefronts, 4) << "j = " << j;
    for (int b = 0; b < 8; ++b) EXPECT_EQ(a.phases[0].words_per_bank[b], 4);
    for (int b = 8; b < 32; ++b) EXPECT_EQ(a.phases[0].words_per_bank[b], 0);
  }
}

// BK = 8, STRIDE = 128: innerRowA = tid / 2 takes 16 values, innerColA = tid % 2
// two; 16 banks with 2 distinct words each: 2-way.
TEST(BankModel, TransposedAStoreBk8Stride128IsTwoWay) {
  for (int j = 0; j < 4; ++j) EXPECT_EQ(analyze(transposed_a_store(8, 128, j)).wavefronts, 2);
}

// BK = 16, STRIDE = 130 (padded by 2): 130 % 32 = 2, so the bank is
// (2 * (4 * innerColA + j) + innerRowA) % 32 = (8 * innerColA + innerRowA + 2j) % 32.
// innerColA in 0..3 and innerRowA in 0..7 make 8 * innerColA + innerRowA run
// over 0..31 exactly once; adding 2j rotates that. Conflict-free.
TEST(BankModel, TransposedAStoreBk16Stride130IsConflictFree) {
  for (int j = 0; j < 4; ++j) EXPECT_EQ(analyze(transposed_a_store(16, 130, j)).wavefronts, 1);
}

// A 128-bit read of consecutive float4s: lane i reads bytes 16i..16i+15. It
// splits into 4 phases of 8 lanes; each phase covers 8 * 16 = 128 bytes,
// words 32p..32p+31, one per bank. 4 wavefronts, all of them needed: the ideal
// is also 4, degree 1.
TEST(BankModel, ConsecutiveFloat4ReadIsFourPhasesConflictFree) {
  const auto a = analyze(column_walk(4), 16);
  EXPECT_EQ(a.phase_count, 4);
  EXPECT_EQ(a.wavefronts, 4);
  EXPECT_EQ(a.ideal_wavefronts, 4);
  EXPECT_DOUBLE_EQ(a.conflict_degree(), 1.0);
  for (int p = 0; p < 4; ++p) {
    for (int b = 0; b < 32; ++b) EXPECT_EQ(a.phases[p].words_per_bank[b], 1);
  }
}

// 64-bit read of consecutive float2s: 2 phases of 16 lanes, 128 bytes each.
TEST(BankModel, ConsecutiveFloat2ReadIsTwoPhasesConflictFree) {
  const auto a = analyze(column_walk(2), 8);
  EXPECT_EQ(a.wavefronts, 2);
  EXPECT_DOUBLE_EQ(a.conflict_degree(), 1.0);
}

// Padding As to a 130-float row breaks 16-byte alignment: row r starts at
// byte 130 * 4 * r = 520r, and 520 % 16 = 8, so every odd row starts 8 bytes
// off a 16-byte boundary. An LDS.128 there would fault (misaligned address);
// the model refuses it just as CUDA would.
TEST(BankModel, Stride130RowIsNotSixteenByteAligned) {
  constexpr int kStride = 130;
  const auto row1_float4s = lane_addresses<32>([](int lane) { return kStride + 4 * lane; });
  EXPECT_THROW(analyze(row1_float4s, 16), std::invalid_argument);
  const auto row0_float4s = lane_addresses<32>([](int lane) { return 4 * lane; });
  EXPECT_NO_THROW(analyze(row0_float4s, 16));
}

// So with a 130-float stride the compiler reads a float4 of a row as two
// LDS.64 (8-byte aligned, which 520r always is). Lane i's two loads are at
// bytes 520 + 16i and 528 + 16i: words 130 + 4i (+1) and 132 + 4i (+1).
// Each LDS.64 is 2 phases of 16 lanes; in a phase, lane i touches banks
// (2 + 4i) % 32 and (3 + 4i) % 32 for the first load, so lanes i and i + 8 hit
// the same two banks with different words: 2 words per bank, 2 wavefronts a
// phase, 4 per instruction (ideal 2, degree 2). The float4 costs two such
// instructions, 8 wavefronts, where one aligned LDS.128 costs 4.
TEST(BankModel, Stride130RowReadAsTwoLds64IsTwiceTheWavefronts) {
  constexpr int kStride = 130;
  const auto first_half = lane_addresses<32>([](int lane) { return kStride + 4 * lane; });
  const auto second_half = lane_addresses<32>([](int lane) { return kStride + 4 * lane + 2; });
  const auto lo = analyze(first_half, 8);
  const auto hi = analyze(second_half, 8);
  EXPECT_EQ(lo.wavefronts, 4);
  EXPECT_EQ(hi.wavefronts, 4);
  EXPECT_DOUBLE_EQ(lo.conflict_degree(), 2.0);
  const auto aligned = analyze(lane_addresses<32>([](int lane) { return 4 * lane; }), 16);
  EXPECT_EQ(lo.wavefronts + hi.wavefronts, 2 * aligned.wavefronts);
}

// A 64-lane group is analysed per 32-lane half. A column walk with a 33-float
// stride: lane i in bank i % 32, so lanes i and i + 32 share a bank, but they
// are in different halves: 1 wavefront each, 2 in all, the ideal.
TEST(BankModel, SixtyFourLaneGroupIsAnalysedPerHalf) {
  const auto padded = analyze(column_walk<64>(33), 4, 64);
  EXPECT_EQ(padded.phase_count, 2);
  EXPECT_EQ(padded.wavefronts, 2);
  EXPECT_DOUBLE_EQ(padded.conflict_degree(), 1.0);
  // Unpadded (stride 32): each half is 32-way, 64 wavefronts in all.
  EXPECT_EQ(analyze(column_walk<64>(32), 4, 64).wavefronts, 64);
}

// Inactive lanes ask for nothing: a 32-way column read with only lanes 0..7
// active is 8-way, and a mask with no lane costs nothing.
TEST(BankModel, InactiveLanesAreIgnored) {
  const auto a = analyze(column_walk(32), 4, 32, 0xffu);
  EXPECT_EQ(a.wavefronts, 8);
  EXPECT_EQ(a.bank[8], -1);
  const auto none = analyze(column_walk(32), 4, 32, 0u);
  EXPECT_EQ(none.wavefronts, 0);
  EXPECT_EQ(none.ideal_wavefronts, 0);
}

// A 16-byte lane covers 4 banks. Two lanes 128 bytes apart collide on all four.
TEST(BankModel, WideLanesCoverConsecutiveBanks) {
  const std::vector<std::uint32_t> two_lanes = {0, 128};
  const auto a = analyze(two_lanes, 16);
  EXPECT_EQ(a.phases[0].words_per_bank[0], 2);
  EXPECT_EQ(a.phases[0].words_per_bank[3], 2);
  EXPECT_EQ(a.phases[0].words_per_bank[4], 0);
  EXPECT_EQ(a.wavefronts, 2);
}

TEST(BankModel, RejectsBadArguments) {
  const std::vector<std::uint32_t> lanes(32, 0);
  EXPECT_THROW(analyze(lanes, 2), std::invalid_argument);
  EXPECT_THROW(analyze(lanes, 4, 16), std::invalid_argument);
  EXPECT_THROW(analyze(std::vector<std::uint32_t>(33, 0)), std::invalid_argument);
  EXPECT_THROW(analyze(std::vector<std::uint32_t>{}), std::invalid_argument);
}

}  // namespace
