"""Part II's error against speed (code/ladder_tools/figures/accuracy.py, {ladder-accuracy}):
each method's point at its rate and its error, filled for the uniform
inputs and hollow for the wide ones, the unit roundoffs' labels over no
point, and draw.py's command line.
"""

import json
import os
import re
import sys
from pathlib import Path

from figure_checks import MODES, drawn, ink_problems, legend_problems

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba

from ladder_tools.figures import accuracy
from ladder_tools.results import ChapterResult


def made_up_fp64(kernel: tuple[float, float], cublas=(1.1e-6, 6.0e-7),
                 tf32=(2.5e-4, 2.6e-4)) -> dict:
    """An fp64_error field: (uniform, wide) relative-norm errors per method."""
    methods = {"kernel": kernel, "cublas": cublas, "cublas_tf32": tf32}
    return {d: {m: {"rel_norm_err": errors[i], "max_rel_err": 10 * errors[i],
                    "tolerance": 1e-4, "bad_values": 0, "correct": True}
                for m, errors in methods.items()}
            for i, d in enumerate(("uniform", "wide"))}


def made_up_result(slug: str, title: str, gflops: float, kernel=None,
                   cublas_gflops: float = 50_000.0) -> ChapterResult:
    """A chapter result timed at 4096 (and at 1024 without FP64 errors); with
    ``kernel`` (uniform, wide) errors, FP64 errors and cuBLAS on TF32 at 4096."""
    at_4096 = {"M": 4096, "N": 4096, "K": 4096, "time_ms": {}, "gflops": gflops,
               "cublas_gflops": cublas_gflops, "pct_cublas": 100 * gflops / cublas_gflops,
               "max_rel_err": 1e-6, "correct": True}
    if kernel is not None:
        at_4096 |= {"cublas_tf32_gflops": 380_000.0, "fp64_error": made_up_fp64(kernel)}
    at_1024 = {**at_4096, "M": 1024, "N": 1024, "K": 1024}
    at_1024.pop("fp64_error", None)
    data = {"chapter": slug, "title": title, "sizes": [at_1024, at_4096],
            "provenance": {"gpu": "Made-up GPU", "source": "kernel.cuh"}}
    return ChapterResult("h200", Path(f"{slug}.json"), data, None)


MADE_UP_PART_II = [
    ("12-final", made_up_result("12-final", "The final kernel", 52_000.0)),
    ("14-tf32", made_up_result("14-tf32", "TF32 on mma.sync", 154_000.0, (2.5e-4, 2.6e-4))),
    ("15-3xtf32", made_up_result("15-3xtf32", "3xTF32 on mma.sync", 44_500.0, (4.0e-7, 4.0e-7),
                                 cublas_gflops=51_000.0)),
    ("15-3xtf32-in-core", made_up_result("15-3xtf32-in-core", "3xTF32, sums in the tensor cores",
                                         62_000.0, (2.8e-5, 1.6e-5))),
    ("16-nowhere", None),
]


def marker_at(figure, gid: str) -> tuple[float, float, bool]:
    """The data coordinates of the marker with ``gid``, and whether it is filled."""
    axes = next(a for a in figure.axes if a.get_gid() == "accuracy-axes")
    found = [line for line in axes.get_lines() if line.get_gid() == gid]
    assert len(found) == 1, f"{len(found)} markers with gid {gid}"
    (x, y), = found[0].get_xydata()
    return x, y, to_rgba(found[0].get_markerfacecolor())[3] > 0


def test_accuracy_points_take_every_method_that_recorded_fp64_errors():
    data = accuracy.accuracy_points(MADE_UP_PART_II, (4096,) * 3, "h200")
    labels = [p.label for p in data.points]
    assert labels == ["cuBLAS SGEMM (FP32)", "cuBLAS on TF32", "14 \u00b7 TF32 on mma.sync",
                      "15 \u00b7 3xTF32 on mma.sync",
                      "15 \u00b7 3xTF32, sums in the tensor cores"]
    # Chapter 12 recorded no FP64 error at 4096; 16 has no result: no points.
    assert data.missing == ["12-final", "16-nowhere"]
    # cuBLAS's points are the first run's that has them: chapter 14's, named
    # as its point is (a caption names no result by its file's slug).
    assert data.cublas_from == "14 \u00b7 TF32 on mma.sync"
    assert data.points[0].tflops == pytest.approx(50.0)
    assert data.points[1].tflops == pytest.approx(380.0)
    assert data.points[4].error == {"uniform": 2.8e-5, "wide": 1.6e-5}
    # At 1024 no result has FP64 errors: no points at all.
    assert not accuracy.accuracy_points(MADE_UP_PART_II, (1024,) * 3, "h200").points


@pytest.mark.parametrize("mode", MODES)
def test_the_accuracy_figure_puts_each_point_at_its_rate_and_error(mode):
    data = accuracy.accuracy_points(MADE_UP_PART_II, (4096,) * 3, "h200")
    figure, renderer = drawn(lambda: accuracy.accuracy_figure(data, mode))
    try:
        axes = next(a for a in figure.axes if a.get_gid() == "accuracy-axes")
        assert axes.get_yscale() == "log"
        for index, point in enumerate(data.points):
            for distribution in ("uniform", "wide"):
                x, y, filled = marker_at(figure, f"accuracy-{index}-{distribution}")
                assert (x, y) == pytest.approx((point.tflops, point.error[distribution]))
                assert filled == (distribution == "uniform")
                low, high = axes.get_ylim()
                assert low < y < high and 0 <= x < axes.get_xlim()[1]
        # Ordered as the data says: the in-core variant above 3xTF32, TF32 above both.
        assert marker_at(figure, "accuracy-4-uniform")[1] > marker_at(figure,
                                                                      "accuracy-3-uniform")[1]
        problems = legend_problems(figure, renderer) + ink_problems(figure, mode)
        assert not problems, problems
    finally:
        plt.close(figure)


def test_the_accuracy_figure_draws_a_method_measured_on_one_distribution_only():
    only_uniform = made_up_result("15-3xtf32", "3xTF32 on mma.sync", 44_500.0, (4e-7, 4e-7))
    del only_uniform.data["sizes"][1]["fp64_error"]["wide"]["kernel"]
    data = accuracy.accuracy_points([("15-3xtf32", only_uniform)], (4096,) * 3, "h200")
    assert data.points[-1].error == {"uniform": 4e-7, "wide": None}
    figure, _ = drawn(lambda: accuracy.accuracy_figure(data, "light"))
    try:
        gids = {line.get_gid() for a in figure.axes for line in a.get_lines()}
        assert "accuracy-2-uniform" in gids and "accuracy-2-wide" not in gids
    finally:
        plt.close(figure)


@pytest.mark.parametrize("near_tf32", [None, 0.9, 0.1])
def test_a_unit_roundoffs_label_covers_no_point(near_tf32):
    """A label sits just above its line: at the right end, or at the left
    when a point lies under the right end's label (not measured: made-up
    points, one at 1.4 times TF32's unit roundoff, near the right or left)."""
    points = [accuracy.Point("SGEMM", 50.0, {"uniform": 1e-6, "wide": 6e-7}),
              accuracy.Point("TF32", 400.0, {"uniform": 2.5e-4, "wide": 2.6e-4})]
    if near_tf32 is not None:
        points.append(accuracy.Point("near", 400.0 * near_tf32,
                                     {"uniform": 1.4 * 2.0 ** -11, "wide": None}))
    data = accuracy.Accuracy("h200", (4096,) * 3, points)
    figure, renderer = drawn(lambda: accuracy.accuracy_figure(data, "light"))
    try:
        axes = figure.axes[0]
        label = next(t for t in axes.texts if t.get_gid() == "roundoff-TF32")
        box = label.get_window_extent(renderer)
        for point in points:
            for value in point.error.values():
                if value is None:
                    continue
                x, y = axes.transData.transform((point.tflops, value))
                assert not box.expanded(1.05, 1.3).contains(x, y), (point.label, label.get_text())
        right = near_tf32 is None or near_tf32 < 0.4
        assert (label.get_horizontalalignment() == "right") == right
    finally:
        plt.close(figure)


def test_draw_py_draws_the_accuracy_figure(tmp_path):
    import subprocess

    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    times = {"median": 1.0, "min": 1.0, "max": 1.0}
    for slug, result in MADE_UP_PART_II[1:3]:
        data = json.loads(json.dumps(result.data))
        data |= {"schema": 1, "provenance": {"gpu": "Made-up GPU", "source": "kernel.cuh"}}
        for entry in data["sizes"]:
            entry |= {"time_ms": times, "cublas_time_ms": times}
        (folder / f"{slug}.json").write_text(json.dumps(data))
    command = [sys.executable, "-m", "ladder_tools.figures.draw", "accuracy", "12-final",
               "14-tf32", "15-3xtf32", "--mode", "dark", "--out"]
    env = {**os.environ, "LADDER_RESULTS_DIR": str(tmp_path)}
    done = subprocess.run(command + [str(tmp_path / "a.svg")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "no point for 12-final" in done.stderr
    drawing = (tmp_path / "a.svg").read_text()
    # cuBLAS's two methods and the two chapters, each on both distributions.
    assert len(re.findall(r'id="accuracy-\d-(uniform|wide)"', drawing)) == 8
    # No chapter named has an error at 1024: one line, no figure.
    missing = subprocess.run(command[:-3] + ["--size", "1024", "--out",
                                             str(tmp_path / "no.svg")],
                             env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "no error against FP64 at 1024" in missing.stderr
    assert not (tmp_path / "no.svg").exists()
