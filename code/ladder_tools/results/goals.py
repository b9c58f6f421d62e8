"""A chapter's goals against its measured results: which sizes meet each
goal (a % of cuBLAS) and which fall below it, computed from the result so
that a page's verdict follows its numbers.

A goal is one line: ``<percent> | <label> | <sizes>``, where the sizes are
tokens separated by spaces, each ``N`` (an N x N x N product), ``MxNxK``,
or ``A..B:S`` (the squares A, A + S, ... up to B). A fourth field,
``| cuBLAS TF32``, holds the goal against cuBLAS on TF32 instead of cuBLAS's
SGEMM (Part II's TF32 kernels); ``| cuBLAS SGEMM`` names the default, for a
page that lists both.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ladder_tools.errors import ResultsError
from ladder_tools.formatting import parse_size

#: What a goal can be held against: its name on a goal line, and the
#: prefix of the result's fields for it (``<prefix>_gflops``).
AGAINST = {"cuBLAS": "cublas", "cuBLAS SGEMM": "cublas", "cuBLAS TF32": "cublas_tf32"}


@dataclass(frozen=True)
class Goal:
    percent: float  #: the least % of cuBLAS the goal asks for
    label: str  #: what the sizes are, in words
    sizes: tuple[tuple[int, int, int], ...]
    against: str = "cuBLAS"  #: a key of AGAINST


@dataclass(frozen=True)
class Verdict:
    goal: Goal
    measured: dict  #: {size: % of cuBLAS} of the goal's sizes that were timed
    below: dict  #: those of `measured` below the goal
    unmeasured: tuple  #: the goal's sizes with no timed result


def parse_sizes(text: str) -> tuple[tuple[int, int, int], ...]:
    """The sizes of one goal line, in order."""
    sizes = []
    for token in text.split():
        if ".." in token:
            span, _, step = token.partition(":")
            first, _, last = span.partition("..")
            if not (first.isdigit() and last.isdigit() and step.isdigit() and int(step) > 0):
                raise ResultsError(f"size range {token!r} is not A..B:S")
            sizes += [(n, n, n) for n in range(int(first), int(last) + 1, int(step))]
        else:
            sizes.append(parse_size(token))
    if not sizes:
        raise ResultsError("a goal names no size")
    return tuple(sizes)


def parse_goal(line: str) -> Goal:
    """One ``<percent> | <label> | <sizes> [| <against>]`` line."""
    parts = [part.strip() for part in line.split("|")]
    if len(parts) not in (3, 4):
        raise ResultsError(f"goal {line!r} is not '<percent> | <label> | <sizes> [| <against>]'")
    try:
        percent = float(parts[0].rstrip("%"))
    except ValueError as error:
        raise ResultsError(f"goal {line!r}: {parts[0]!r} is not a percent") from error
    against = parts[3] if len(parts) == 4 else "cuBLAS"
    if against not in AGAINST:
        raise ResultsError(f"goal {line!r}: {against!r} is not one of {', '.join(AGAINST)}")
    return Goal(percent, parts[1], parse_sizes(parts[2]), against)


def judge(goal: Goal, timed_at: Callable[[tuple[int, int, int]], dict[str, Any] | None],
          fastest_cublas: Callable[[tuple[int, int, int], str], float | None] | None = None
          ) -> Verdict:
    """The goal against a result; `timed_at(size)` gives a size's timed
    entry or None (ChapterResult.timed_at). With `fastest_cublas(size,
    field)` (the fastest GFLOP/s in `field`, cuBLAS's or cuBLAS TF32's, any
    run measured at that size, this entry's included), each size is held
    against that rate instead of the cuBLAS run beside the kernel."""
    field = f"{AGAINST[goal.against]}_gflops"
    measured, unmeasured = {}, []
    for size in goal.sizes:
        entry = timed_at(size)
        if entry is None or field not in entry:
            unmeasured.append(size)
        elif fastest_cublas is None:
            measured[size] = entry[f"pct_{AGAINST[goal.against]}"]
        else:
            fastest = max(fastest_cublas(size, field) or 0.0, entry[field])
            measured[size] = 100.0 * entry["gflops"] / fastest
    below = {size: pct for size, pct in measured.items() if pct < goal.percent}
    return Verdict(goal, measured, below, tuple(unmeasured))
