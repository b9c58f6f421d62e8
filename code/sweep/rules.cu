// The chapter's own rules asked about the points of a sweep's grid, on the
// CPU: each line of standard input holds one point (the parameters, in the
// order of the rule function's arguments), and each line of output is the
// sentence of the first rule the point breaks, or "ok". code/sweep.py
// compiles this file once per chapter:
//
//   nvcc -std=c++17 -I code/include \
//     -DLADDER_CHAPTER_HEADER='"chapters/12-final/kernel.cuh"' \
//     -DLADDER_RULES=ch12::tiling_error -DLADDER_PARAMETERS=11 \
//     code/sweep/rules.cu -lcublas -o bin/rules
//
// LADDER_RULES is a constexpr function of LADDER_PARAMETERS ints that returns
// nullptr when a tiling meets every rule, else the sentence of the rule it
// breaks: the same function the chapter's Tiling checks at compile time.
#include LADDER_CHAPTER_HEADER

#include <array>
#include <cstdio>
#include <iostream>
#include <utility>

namespace {

/// The rules' verdict on one point, its parameters spread as arguments.
template <std::size_t... I>
const char* verdict(const std::array<int, sizeof...(I)>& point, std::index_sequence<I...>) {
  return LADDER_RULES(point[I]...);
}

}  // namespace

int main() {
  constexpr std::size_t kParameters = LADDER_PARAMETERS;
  std::array<int, kParameters> point{};
  for (;;) {
    for (int& value : point) {
      if (!(std::cin >> value)) return std::cin.eof() ? 0 : 2;
    }
    const char* broken = verdict(point, std::make_index_sequence<kParameters>{});
    std::printf("%s\n", broken == nullptr ? "ok" : broken);
  }
}
