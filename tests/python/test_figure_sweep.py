"""The sweep figure (code/ladder_tools/figures/sweep.py, chapters 09 and 12's {ladder-sweep}) is
legible, in the light and the dark drawing: no two x tick labels overlap, no
legend lies over a point, text takes the mode's ink, a sweep's committed
configuration (its ring) lies inside the axes, and the GFLOP/s axis spans
the rates rather than starting at 0.

The data: the committed sweeps (results/<gpu>/sweep-*.json), the test
fixtures', and made-up worst cases.
"""

import json

from figure_checks import (
    MODES,
    RESULT_FOLDERS,
    ROOT,
    drawn,
    ink_problems,
    legend_problems,
    tick_label_overlaps,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.figures import sweep


def sweeps() -> list[tuple[str, list[float], list[bool], int]]:
    """(name, rates, correct, committed index) per sweep file."""
    found = []
    for folder in RESULT_FOLDERS:
        for path in sorted(folder.glob("*/sweep-*.json")):
            configs = json.loads(path.read_text())["configs"]
            results = [c.get("result", c) for c in configs]
            rates = [r.get("gflops", 0.0) for r in results]
            correct = [r.get("status") == "correct" and "gflops" in r for r in results]
            best = max(range(len(rates)), key=lambda i: rates[i] if correct[i] else -1)
            found.append((str(path.relative_to(ROOT)), rates, correct, best))
    return found


SWEEP_CASES = sweeps() + [
    # A sweep whose fastest is first and whose rates spread near the top,
    # with an untimed configuration (rate 0) and an incorrect one.
    ("made-up", [52_000.0 - 90 * i for i in range(90)] + [0.0, 30_000.0],
     [True] * 90 + [False, False], 0),
    # The committed one last: the slowest correct.
    ("made-up, committed last", [50_000.0 - 50 * i for i in range(40)], [True] * 40, 39),
]


@pytest.mark.parametrize("stacked", [False, True], ids=["side-by-side", "stacked"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,rates,correct,committed", SWEEP_CASES,
                         ids=[c[0] for c in SWEEP_CASES])
def test_sweep_figure_is_legible(name, rates, correct, committed, mode, stacked):
    median = sorted(r for r, ok in zip(rates, correct, strict=True) if ok)[sum(correct) // 2]
    figure, renderer = drawn(lambda: sweep.sweep_figure(
        rates, correct, committed, median, mode, stacked))
    try:
        axes = figure.axes[0]
        problems = [f"x tick labels overlap: {p}" for p in tick_label_overlaps(axes, renderer)]
        problems += legend_problems(figure, renderer)
        problems += ink_problems(figure, mode)
        # The ring: the collection labelled "committed", whole inside the axes.
        # (A collection's own window extent leaves out its markers' size, so
        # the ring's box is made from its centre, area and line width.)
        ring = next(c for c in axes.collections if c.get_label() == "committed")
        (x, y), = ring.get_offset_transform().transform(ring.get_offsets())
        points = ring.get_sizes()[0] ** 0.5 / 2 + ring.get_linewidths()[0] / 2
        radius = points * figure.dpi / 72
        inside = axes.get_window_extent(renderer)
        if not (inside.x0 <= x - radius and x + radius <= inside.x1
                and inside.y0 <= y - radius and y + radius <= inside.y1):
            problems.append(f"the committed ring (centre {x:.0f}, {y:.0f}, radius "
                            f"{radius:.1f} px) is not inside the axes {inside.bounds}")
        # The y axis spans the correct rates: it does not start at 0 when
        # they are all far above it, and it shows every one of them.
        good = [r for r, ok in zip(rates, correct, strict=True) if ok]
        low, high = axes.get_ylim()
        if low > min(good) or high < max(good):
            problems.append(f"y axis {low:.0f}..{high:.0f} cuts off the rates "
                            f"{min(good):.0f}..{max(good):.0f}")
        if min(good) > 0.5 * max(good) and low <= 0:
            problems.append("the y axis starts at 0, flattening the spread")
        assert not problems, f"{name}, {mode}:\n" + "\n".join(problems)
    finally:
        plt.close(figure)

