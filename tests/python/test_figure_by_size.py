"""The by-size figure (code/ladder_tools/figures/by_size.py, the chapter pages' {ladder-plot}) is
legible: drawn as the book draws it, side by side and stacked (the phone's
drawing), in the light mode (and in the dark one for two of the cases: the
modes differ only in colours), and measured in display coordinates:

- no two x tick labels overlap (chapter 12's sizes once put 1000 over 1024
  and 3072 to 8192 on top of each other);
- no legend lies over a data point or a line's vertex;
- the by-size line joins only the sizes of its series (4096 and 4097 once
  made a spike); the other sizes are markers of their own;
- text takes the mode's ink colour (light text on the dark page).

The data: the committed results (results/<gpu>/) where there are some, the
test fixtures (tests/fixtures/results/), and made-up worst cases.
"""

import json
from pathlib import Path

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

from ladder_tools.figures import by_size
from ladder_tools.results import ChapterResult


def chapter_results() -> list[tuple[str, dict]]:
    """(name, result) for every chapter result that has a timed square size."""
    found = []
    for folder in RESULT_FOLDERS:
        for path in sorted(folder.glob("*/chapters/*.json")):
            result = json.loads(path.read_text())
            if squares(result):
                found.append((str(path.relative_to(ROOT)), result))
    return found


def squares(result: dict) -> list[dict]:
    return sorted((e for e in result.get("sizes", [])
                   if e["M"] == e["N"] == e["K"] and "time_ms" in e), key=lambda e: e["M"])


def series(result: dict, key: str) -> by_size.Series:
    entries = squares(result)
    return by_size.Series("GPU", [e["M"] for e in entries], [e[key] for e in entries])


# Chapter 12's sizes: powers of two, the multiples of 1024 between 2048 and
# 8192, and two sizes no tile divides.
CROWDED = [256, 512, 1000, 1024, 2048, 3072, 4096, 4097, 5120, 6144, 7168, 8192]
MADE_UP_RESULT = {"sizes": [
    {"M": s, "N": s, "K": s, "time_ms": 1.0,
     "gflops": 40_000.0 + (s % 7) * 1000 - (s == 4097) * 15_000,
     "cublas_gflops": 45_000.0, "pct_cublas": 90.0 + s % 5}
    for s in CROWDED]}

BY_SIZE_CASES = [("made-up: chapter 12's sizes", MADE_UP_RESULT)] + chapter_results()
# The two modes differ only in colours (code/ladder_tools/figures/style.py), so the geometry is
# measured on every result in the light mode and the dark mode is drawn, and
# measured whole, on the made-up case and the first committed result.
MODE_CASES = [(name, result, mode) for index, (name, result) in enumerate(BY_SIZE_CASES)
              for mode in (MODES if index < 2 else ["light"])]


@pytest.mark.parametrize("stacked", [False, True], ids=["side-by-side", "stacked"])
@pytest.mark.parametrize("name,result,mode", MODE_CASES,
                         ids=[f"{name}-{mode}" for name, _, mode in MODE_CASES])
def test_by_size_figure_is_legible(name, result, mode, stacked):
    figure, renderer = drawn(lambda: by_size.by_size_figure(
        [series(result, "gflops")], [series(result, "cublas_gflops")],
        [series(result, "pct_cublas")], mode, stacked=stacked))
    try:
        problems = []
        for axes in figure.axes:
            problems += [f"x tick labels overlap: {p}" for p in tick_label_overlaps(axes, renderer)]
            for line in axes.get_lines():
                joined = line.get_linestyle() not in ("None", "none", "")
                off = [x for x in line.get_xdata() if not by_size.on_series(int(x))]
                if joined and off:
                    problems.append(f"a line runs through {off}, off the series")
            drawn_sizes = {int(x) for line in axes.get_lines() for x in line.get_xdata()}
            assert drawn_sizes == {e["M"] for e in squares(result)}, "a size is not drawn"
        problems += legend_problems(figure, renderer)
        problems += ink_problems(figure, mode)
        assert not problems, f"{name}, {mode}:\n" + "\n".join(problems)
    finally:
        plt.close(figure)


def test_a_tf32_plot_measures_against_cublas_on_tf32():
    """With the reference "tf32", the series are the TF32 keys and the axis
    and the dashed line say cuBLAS on TF32."""
    result = {"provenance": {"gpu": "GPU"}, "sizes": [
        {"M": m, "N": m, "K": m, "gflops": 2.0 * m, "cublas_gflops": 1.0 * m,
         "pct_cublas": 200.0, "cublas_tf32_gflops": 4.0 * m, "pct_cublas_tf32": 50.0,
         "time_ms": {"median": 1.0}, "cublas_time_ms": {"median": 1.0}}
        for m in (1024, 2048)]}
    chapter = ChapterResult("gpu", Path("x.json"), result, None)
    gflops, cublas, pct = by_size.by_size_series([chapter], "tf32")
    assert cublas[0].values == [4096.0, 8192.0] and pct[0].values == [50.0, 50.0]
    figure, _ = drawn(lambda: by_size.by_size_figure(gflops, cublas, pct, "light", "tf32"))
    try:
        left, right = figure.axes[:2]
        assert right.get_ylabel() == "% of cuBLAS on TF32"
        assert any(line.get_label() == "cuBLAS on TF32, GPU" for line in left.get_lines())
    finally:
        plt.close(figure)


def test_the_crowded_sizes_are_on_the_axis_without_overlap():
    """The made-up case has the sizes that crowded chapter 12's axis: each
    power of two is labelled, every other size has a tick of its own."""
    figure, _ = drawn(lambda: by_size.by_size_figure(
        [series(MADE_UP_RESULT, "gflops")], [series(MADE_UP_RESULT, "cublas_gflops")],
        [series(MADE_UP_RESULT, "pct_cublas")], "light"))
    try:
        axes = figure.axes[0]
        labelled = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
        assert labelled == ["256", "512", "1024", "2048", "4096", "8192"]
        minor = {int(x) for x in axes.get_xticks(minor=True)}
        assert {1000, 3072, 4097, 5120, 6144, 7168} <= minor
    finally:
        plt.close(figure)
