"""Why a final kernel misses its goal on a random problem, as its own count
tells it.

Each final kernel's launcher picks its plan by a count (chapter 13's cost(),
chapter 16's floats copied, chapter 17's K-steps), and the CPU tools that
include the chapters' headers say, for any size, which plan the launcher
runs and how much of the GPU its count says that plan uses: its
``busy_share``, the same work spread evenly over the SMs divided by the
plan's count (tailplan: the default variant; lastround: the chapter's own
launcher). Nothing of the count is computed here.

The prediction for a problem scales the kernel's % of cuBLAS at 4096 cubed
on the same GPU by the ratio of the two busy shares: as if the kernel's rate
per busy SM, and cuBLAS's rate, were those of 4096 at every shape. A miss
is then the product of three factors, each 1 where it costs nothing:

* the rate at 4096: the kernel's % there over the goal (1 when it meets it);
* the schedule: the problem's busy share over 4096's, what the count sees;
* outside the count: the measured % over the predicted, what the count
  leaves out (a slower step at this shape, a copy, a cuBLAS faster than at
  4096).

The cause named is the factor that costs the most.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ladder_tools import results
from ladder_tools.analysis import tailplan
from ladder_tools.analysis.binaries import AnalysisError, require_binary, tool_json

#: The size whose measured % the prediction scales: every chapter measures it.
REFERENCE_SIZE = (4096, 4096, 4096)
RATE, SCHEDULE, STEP = "the rate at 4096", "the schedule", "outside the count"
#: lastround's arguments for the Part II chapters whose count it holds:
#: chapter 16's TF32 launcher, chapter 17's 3xTF32 one (chapter 13's count is
#: tailplan's).
LASTROUND_ARGUMENTS = {"16-wgmma": ["--tf32"], "17-3xtf32-wgmma": []}


@dataclass(frozen=True)
class Miss:
    """One problem under the goal, with what the count says of it."""

    size: tuple[int, int, int]
    percent: float | None  #: measured % of the goal's cuBLAS (None: not timed)
    busy: float  #: the share of the GPU the launcher's plan uses, by its count
    reference_busy: float  #: the same at REFERENCE_SIZE
    reference_percent: float | None  #: the kernel's % there (None: not measured)

    @property
    def predicted(self) -> float | None:
        """The % the count predicts: the reference's, scaled by the busy shares."""
        if self.reference_percent is None:
            return None
        return self.reference_percent * self.busy / self.reference_busy

    def factors(self, goal: float) -> dict[str, float] | None:
        """The miss as three factors, RATE x SCHEDULE x STEP: their product is
        the measured % over the goal (over the rate at 4096 where that meets
        the goal). None without a measured % or a prediction."""
        if self.percent is None or self.predicted is None or self.reference_percent is None:
            return None
        return {RATE: min(1.0, self.reference_percent / goal),
                SCHEDULE: self.busy / self.reference_busy,
                STEP: self.percent / self.predicted}

    def cause(self, goal: float) -> str | None:
        """The factor that costs the most, None without a prediction."""
        factors = self.factors(goal)
        return None if factors is None else min(factors, key=lambda name: factors[name])


def busy_shares(slug: str, sizes: list[tuple[int, int, int]], sms: int, repo_root: Path,
                build: Path, gpu: str) -> tuple[dict[tuple[int, int, int], float], list[Path]]:
    """The busy share of `slug`'s own launcher at each size on a GPU of
    `sms` SMs, and the tools read."""
    if slug == tailplan.CHAPTER:
        shape, _, _ = tailplan.tail_gpu(repo_root, build, gpu, sms)
        assert shape is not None  # the SMs are given
        tool = require_binary(build, "tailplan")
        plans = tailplan.run_plans(tool, shape, sizes)
        return ({(s["M"], s["N"], s["K"]): s["variants"]["default"]["busy_share"]
                 for s in plans["sizes"]}, [tool])
    if slug not in LASTROUND_ARGUMENTS:
        raise AnalysisError(f"no count for {slug}")
    tool = require_binary(build, "lastround")
    shares = {}
    for m, n, k in sizes:
        plan = tool_json(tool, ["--sms", str(sms), "--size", f"{m}x{n}x{k}",
                                *LASTROUND_ARGUMENTS[slug]])
        shares[(m, n, k)] = plan["launcher"]["busy_share"]
    return shares, [tool]


def explained(verdict: results.RandomVerdict, field: str, shares: dict, reference: dict | None
              ) -> list[Miss]:
    """Every miss of `verdict` with its busy share and prediction. `reference`
    is the chapter's timed entry at REFERENCE_SIZE on the same GPU, or None."""
    base = reference.get(field) if reference is not None else None
    return [Miss(size, pct, shares[size], shares[REFERENCE_SIZE], base)
            for size, pct, _ in verdict.misses]
