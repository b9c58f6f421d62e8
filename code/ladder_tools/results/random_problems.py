"""Goals held on random sizes: the problems the measure command draws, and
the goals of the book's three final kernels on them.

The chapters' goals name their sizes (ladder_tools.results.goals), and sizes chosen
by the author can flatter a kernel tuned on them. The measure command also
draws 24 problems at random, with a seed it prints and records (a fresh one
each run; ``--seed N`` draws the same 24 again), and times the three final
kernels on them beside cuBLAS (results/<gpu>/random.json,
docs/results-schema.md):

- 16 problems with M, N and K each uniform in [1000, 8192];
- 8 thin or long ones (thin_problem(), the one rule): one dimension in
  [64, 512], and K up to 65536.

This module is plain Python with no GPU and no import from the rest of
ladder_tools, so that results.py (the reader) and measure.py (the writer)
share it.
"""
from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

#: How many problems of each family a draw holds.
UNIFORM_COUNT = 16
THIN_COUNT = 8
#: The range of each dimension of a uniform problem, and of the large
#: dimensions of a thin one.
LARGE = (1000, 8192)
#: The range of the small dimension of a thin problem (and of K when it is
#: the short one).
SMALL = (64, 512)
#: The range of K where a thin problem's K is long.
LONG_K = (1000, 65536)
#: The range of K where both M and N are small: long enough that the
#: product is not all launch overhead.
LONGEST_K = (16384, 65536)
#: Seeds are drawn below this: the chapter binaries' --seed takes no more
#: than 2^30 (code/include/ladder/options.hpp).
SEED_LIMIT = 2**30

#: The kinds of thin problem, in the order thin_problem() cycles through them.
THIN_KINDS = ("M small", "N small", "M and N small, long K", "K short")
UNIFORM_KIND = "uniform"


@dataclass(frozen=True)
class RandomGoal:
    """A final kernel's goal on the random problems: at least `percent` % of
    `against` (a key of ladder_tools.results.goals.AGAINST, as a goal line names it)."""

    percent: float
    against: str

    @property
    def field(self) -> str:
        """The field of a timed size that holds the % of that cuBLAS."""
        return "pct_cublas_tf32" if self.against == "cuBLAS TF32" else "pct_cublas"


#: The book's three final kernels and their goals, as their pages state
#: them: chapter 13's FP32 kernel at least cuBLAS's SGEMM, chapter 16's TF32
#: kernel at least 95% of cuBLAS on TF32, chapter 17's 3xTF32 kernel twice
#: cuBLAS's SGEMM.
RANDOM_CHAPTERS = {
    "13-tail": RandomGoal(100.0, "cuBLAS SGEMM"),
    "16-wgmma": RandomGoal(95.0, "cuBLAS TF32"),
    "17-3xtf32-wgmma": RandomGoal(200.0, "cuBLAS SGEMM"),
}

#: Seconds each random problem may spend on timing (the chapter binaries'
#: --budget-s): over it the problem is checked, not timed. At 8192 cubed a
#: final kernel takes about 25 ms on an H100, 2 x 7 x 5 launches under 2 s;
#: the budget stops only a kernel that is far off, and bounds a binary's
#: timing at 24 x 10 s.
RANDOM_BUDGET_S = 10


def fresh_seed() -> int:
    """A new seed, from the operating system's randomness."""
    return secrets.randbelow(SEED_LIMIT)


def thin_problem(rng: random.Random, index: int) -> tuple[int, int, int]:
    """The `index`-th thin or long problem (index 0, 1, ...): the kinds take
    turns, THIN_KINDS[index % 4], so that 8 problems hold two of each:

    - "M small": M in SMALL, N in LARGE, K in LONG_K (a few rows of C, wide);
    - "N small": N in SMALL, M in LARGE, K in LONG_K (a few columns of C, tall);
    - "M and N small, long K": M and N in SMALL, K in LONGEST_K (few tiles,
      each with a long sum: where split-K and stream-K matter);
    - "K short": M and N in LARGE, K in SMALL (a big C from a short sum).

    Every value is uniform over its range, ends included."""
    kind = THIN_KINDS[index % len(THIN_KINDS)]

    def small() -> int:
        return rng.randint(*SMALL)

    def large() -> int:
        return rng.randint(*LARGE)

    if kind == "M small":
        return small(), large(), rng.randint(*LONG_K)
    if kind == "N small":
        return large(), small(), rng.randint(*LONG_K)
    if kind == "M and N small, long K":
        return small(), small(), rng.randint(*LONGEST_K)
    return large(), large(), small()


def draw(seed: int) -> list[dict]:
    """The problems of one seed, in order: UNIFORM_COUNT uniform ones, then
    THIN_COUNT thin or long ones; each {"M", "N", "K", "kind"}. The same
    seed gives the same problems."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a seed is a whole number in [0, {SEED_LIMIT}), not {seed!r}")
    rng = random.Random(seed)
    problems = []
    for _ in range(UNIFORM_COUNT):
        m, n, k = (rng.randint(*LARGE) for _ in range(3))
        problems.append({"M": m, "N": n, "K": k, "kind": UNIFORM_KIND})
    for index in range(THIN_COUNT):
        m, n, k = thin_problem(rng, index)
        problems.append({"M": m, "N": n, "K": k, "kind": THIN_KINDS[index % len(THIN_KINDS)]})
    return problems


def size_text(problem: dict) -> str:
    """A problem as the chapter binaries' --sizes takes it: "MxNxK"."""
    return f"{problem['M']}x{problem['N']}x{problem['K']}"
