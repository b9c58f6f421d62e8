"""Chapter 13's map of where it wins (code/ladder_tools/figures/tail_map.py, {ladder-tail-map}),
drawn from a made-up result that lacks some of the map's sizes: every size
of the map is a cell or a point at its place, the values written are the
result's, a size without a timed entry is a grey cell with a dash and a gap
in the lines, and the figure is legible and fits the column. And the measure
command measures every size the map draws.
"""

import json
import math
import os
import subprocess
import sys
from types import SimpleNamespace

from figure_checks import (
    COLUMN_PX,
    MODES,
    ROOT,
    corner,
    drawn,
    natural_width_px,
    panel,
    text_problems,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba
from matplotlib.text import Text

from common import load_command
from ladder_tools.figures import style, tail_map
from ladder_tools.formatting import DASH, format_gflops, format_percent

MAP_ABSENT = {(512, 2048, 4096), (4096, 4096, 256)}
MAP_UNTIMED = {(8192, 256, 4096)}


def made_up_map_entries() -> list[dict]:
    entries = []
    for index, (m, n, k) in enumerate(tail_map.map_sizes() + [(1000, 1000, 1000)]):
        if (m, n, k) in MAP_ABSENT:
            continue
        entry = {"M": m, "N": n, "K": k, "max_rel_err": 1e-6, "correct": True}
        if (m, n, k) not in MAP_UNTIMED:
            entry.update({"time_ms": {"median": 1.0, "min": 1.0, "max": 1.0},
                          "cublas_time_ms": {"median": 1.0, "min": 1.0, "max": 1.0},
                          "gflops": 1.0, "cublas_gflops": 1000.0 * (index + 7) + 0.4,
                          "pct_cublas": 40.0 + 1.9 * index})
        entries.append(entry)
    return entries


def map_texts(axes, gid: str) -> dict[tuple[int, int], str]:
    """The texts of one kind in the heat map, by the (row, column) of their cell."""
    return {(math.floor(t.get_position()[1]), math.floor(t.get_position()[0])): t.get_text()
            for t in axes.texts if t.get_gid() == gid}


@pytest.mark.parametrize("mode", MODES)
def test_the_tail_map_draws_every_size_at_its_place_with_its_values(mode):
    entries = made_up_map_entries()
    timed = {(e["M"], e["N"], e["K"]): e for e in entries if "time_ms" in e}
    found = tail_map.tail_map("Made-up GPU", entries)
    figure, renderer = drawn(lambda: tail_map.tail_map_figure(found, mode))
    try:
        heat = panel(figure, "map-heat")
        sides = tail_map.MAP_SIDES
        want_pct, want_cublas, want_missing = {}, {}, set()
        for row, m in enumerate(sides):
            for column, n in enumerate(sides):
                entry = timed.get((m, n, tail_map.MAP_K))
                if entry is None:
                    want_missing.add((row, column))
                    continue
                want_pct[(row, column)] = format_percent(entry["pct_cublas"])
                want_cublas[(row, column)] = format_gflops(entry["cublas_gflops"])
        assert len(want_missing) == 2  # one absent, one untimed
        cells = {corner(p) for p in heat.patches if p.get_gid() == "map-cell"}
        missing = {corner(p) for p in heat.patches if p.get_gid() == "map-missing"}
        assert len(cells) + len(missing) == len(sides) ** 2
        assert {(int(r), int(c)) for r, c in missing} == want_missing
        assert map_texts(heat, "map-pct") == want_pct
        assert map_texts(heat, "map-cublas") == want_cublas
        assert map_texts(heat, "map-dash") == {cell: DASH for cell in want_missing}
        # Blue at or above cuBLAS, orange below; grey where nothing was measured.
        for p in heat.patches:
            row, column = (int(v) for v in corner(p))
            entry = timed.get((sides[row], sides[column], tail_map.MAP_K))
            colour = (tail_map.ABOVE if entry and entry["pct_cublas"] >= 100
                      else tail_map.BELOW if entry else style.THEMES[mode]["grid"])
            assert to_rgba(p.get_facecolor())[:3] == to_rgba(colour)[:3], (row, column)
        # (b): a point per K, a gap where the size was not measured.
        for gid, key in (("map-pct-line", "pct_cublas"), ("map-rate-line", "cublas_gflops")):
            (line,) = [drawn_line for a in figure.axes for drawn_line in a.get_lines()
                       if drawn_line.get_gid() == gid]
            assert list(line.get_xdata()) == list(tail_map.SWEEP_KS)
            for k, y in zip(tail_map.SWEEP_KS, line.get_ydata(), strict=True):
                entry = timed.get((tail_map.SWEEP_MN, tail_map.SWEEP_MN, k))
                assert math.isnan(y) if entry is None else y == entry[key], (gid, k)
        note = [t.get_text() for t in figure.texts if t.get_gid() == "map-note"]
        assert note == [f"3 of the figure's {len(tail_map.map_sizes())} sizes are not "
                        "measured yet: grey cells, gaps in the lines."]
        assert "512 not measured" not in tail_map.alt_text(found)
        assert "2048 not measured" in tail_map.alt_text(found)
        problems = text_problems(figure, renderer, mode)
        assert not problems, "\n".join(problems)
        width = natural_width_px(tail_map.draw_tail_map(found, mode))
        assert width <= COLUMN_PX, f"{width} px wide, the column is {COLUMN_PX}"
    finally:
        plt.close(figure)


def test_a_complete_tail_map_has_no_note_and_no_grey_cell():
    entries = [e for e in made_up_map_entries() if "time_ms" in e]
    entries += [{**e, "M": m, "N": n, "K": k} for (m, n, k), e in
                zip(MAP_ABSENT | MAP_UNTIMED, entries, strict=False)]
    found = tail_map.tail_map("Made-up GPU", entries)
    assert not found.missing() and tail_map.missing_words(found) == ""
    figure, _ = drawn(lambda: tail_map.tail_map_figure(found, "light"))
    try:
        heat = panel(figure, "map-heat")
        assert not [p for p in heat.patches if p.get_gid() == "map-missing"]
        assert not [t for t in figure.texts if t.get_gid() == "map-note"]
    finally:
        plt.close(figure)


def size_of(text: str) -> tuple[int, int, int]:
    """A measure command's size, "N" or "MxNxK", as (M, N, K)."""
    dims = tuple(int(d) for d in text.split("x"))
    return dims if len(dims) == 3 else dims * 3


def mapped_chapters() -> list[str]:
    """The chapters whose maps the pages draw ({ladder-tail-map} [chapter])."""
    found = set()
    for page in sorted((ROOT / "chapters").glob("*/chapter.md")):
        for line in page.read_text().splitlines():
            if line.startswith("```{ladder-tail-map}"):
                found.add(line.removeprefix("```{ladder-tail-map}").strip() or tail_map.CHAPTER)
    return sorted(found)


def test_the_pages_map_chapters_13_16_and_17():
    assert mapped_chapters() == ["13-tail", "16-wgmma", "17-3xtf32-wgmma"]


@pytest.mark.parametrize("chapter", mapped_chapters())
def test_the_measure_command_measures_every_size_of_a_map(chapter):
    measure = load_command("measure")

    standard = [size_of(s) for s in measure.SIZES]
    extra = [size_of(s) for s in measure.extra_sizes(SimpleNamespace(chapter=chapter,
                                                                      name=chapter))]
    measured = standard + extra
    twice = [s for s in tail_map.map_sizes() if measured.count(s) > 1]
    assert not twice, f"measured twice: {twice}"
    unmeasured = [s for s in tail_map.map_sizes() if s not in measured]
    assert not unmeasured, f"chapters/{chapter}/own-sizes lacks {unmeasured}"


def test_the_variants_are_not_measured_at_the_maps_sizes():
    """Only at the sizes the page names."""
    measure = load_command("measure")

    extra = [size_of(s) for s in measure.extra_sizes(SimpleNamespace(chapter="13-tail",
                                                                      name="13-tail"))]
    variant = SimpleNamespace(chapter="13-tail", name="13-tail-tiles")
    for_variants = [size_of(s) for s in measure.extra_sizes(variant)]
    assert len(for_variants) < len(extra)
    assert (4096, 128, 4096) in for_variants and (256, 256, 4096) not in for_variants


def test_draw_py_draws_the_tail_map(tmp_path):
    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    result = {"schema": 1, "chapter": "13-tail",
              "provenance": {"gpu": "Made-up GPU", "source": "chapters/13-tail/kernel.cuh"},
              "sizes": made_up_map_entries()}
    (folder / "13-tail.json").write_text(json.dumps(result))
    out = tmp_path / "map.svg"
    done = subprocess.run([sys.executable, "-m", "ladder_tools.figures.draw", "tail-map",
                           "--mode", "dark", "--out", str(out)],
                          env={**os.environ, "LADDER_RESULTS_DIR": str(tmp_path)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 of the figure's" in done.stderr
    drawing = out.read_text()
    assert drawing.count('id="map-cell') == len(tail_map.MAP_SIDES) ** 2 - 2
    # No result for the GPU: one line, no figure.
    missing = subprocess.run([sys.executable, "-m", "ladder_tools.figures.draw", "tail-map",
                              "--gpu", "nowhere", "--out", str(tmp_path / "no.svg")],
                             env={**os.environ, "LADDER_RESULTS_DIR": str(tmp_path)},
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "no result for 13-tail" in missing.stderr
    assert not (tmp_path / "no.svg").exists()


@pytest.mark.parametrize("mode", MODES)
def test_the_phones_tail_map_shows_the_same_values(mode):
    """The phone's drawing (phone=True): the same cells, each share without
    its % sign, the same GFLOP/s and dashes, the same lines over K."""
    found = tail_map.tail_map("Made-up GPU", made_up_map_entries())
    wide, _ = drawn(lambda: tail_map.tail_map_figure(found, mode))
    narrow, renderer = drawn(lambda: tail_map.tail_map_figure(found, mode, phone=True))
    try:
        assert narrow.get_figwidth() == tail_map.PHONE_WIDTH
        heats = [panel(f, "map-heat") for f in (wide, narrow)]
        assert map_texts(heats[1], "map-pct") == {
            cell: text.removesuffix("%") for cell, text in map_texts(heats[0], "map-pct").items()}
        for gid in ("map-cublas", "map-dash"):
            assert map_texts(heats[1], gid) == map_texts(heats[0], gid)
        for gid in ("map-pct-line", "map-rate-line"):
            lines = [[line for a in f.axes for line in a.get_lines() if line.get_gid() == gid][0]
                     for f in (wide, narrow)]
            assert list(lines[0].get_xdata()) == list(lines[1].get_xdata())
        assert [t.get_text() for t in narrow.texts if t.get_gid() == "map-note"]
        assert text_problems(narrow, renderer, mode) == []
    finally:
        plt.close(wide)
        plt.close(narrow)


def test_each_map_holds_its_chapter_to_the_final_kernels_goal():
    """The goal and what it is held against are the chapter's own, as the
    random problems hold it (one statement of each final kernel's goal)."""
    assert tail_map.chapter_goal("13-tail") == ("cuBLAS SGEMM", 100.0)
    assert tail_map.chapter_goal("16-wgmma") == ("cuBLAS TF32", 95.0)
    assert tail_map.chapter_goal("17-3xtf32-wgmma") == ("cuBLAS SGEMM", 200.0)
    assert tail_map.chapter_goal("12-final") == ("cuBLAS", 100.0)
    thirteen = tail_map.tail_map("GPU", made_up_map_entries(), "13-tail",
                                 *tail_map.chapter_goal("13-tail"))
    assert tail_map.legend_words(thirteen) == ("at or above cuBLAS", "below cuBLAS")
    assert tail_map.goal_words(thirteen) == ""
    seventeen = tail_map.tail_map("GPU", made_up_map_entries(), "17-3xtf32-wgmma",
                                  *tail_map.chapter_goal("17-3xtf32-wgmma"))
    assert tail_map.legend_words(seventeen) == ("at or above 200%", "below 200%")
    assert seventeen.reference == "cuBLAS"


def tf32_entries() -> list[dict]:
    """Made-up TF32 entries: the kernel's share of cuBLAS on TF32 runs from
    80% to about 120%, and its share of cuBLAS's SGEMM is a constant 300%."""
    entries = []
    for index, (m, n, k) in enumerate(tail_map.map_sizes()):
        entries.append({"M": m, "N": n, "K": k, "max_rel_err": 1e-4, "correct": True,
                        "time_ms": {"median": 1.0, "min": 1.0, "max": 1.0},
                        "cublas_time_ms": {"median": 1.0, "min": 1.0, "max": 1.0},
                        "gflops": 1.0, "cublas_gflops": 1000.0, "pct_cublas": 300.0,
                        "cublas_tf32_gflops": 5000.0 * (index + 3) + 0.4,
                        "pct_cublas_tf32": 80.0 + 0.9 * index})
    return entries


@pytest.mark.parametrize("phone", [False, True], ids=["column", "phone"])
@pytest.mark.parametrize("mode", MODES)
def test_a_map_against_cublas_on_tf32_colours_each_cell_by_the_goal(mode, phone):
    """Held against cuBLAS on TF32 with a goal of 95%: each cell shows the
    share of cuBLAS on TF32 and its GFLOP/s, blue at or above 95% and orange
    below; the sweep's dashed line is at 95; the words say what it is held
    against."""
    entries = tf32_entries()
    found = tail_map.tail_map("Made-up GPU", entries, "16-wgmma", "cuBLAS TF32", 95.0)
    figure, renderer = drawn(lambda: tail_map.tail_map_figure(found, mode, phone=phone))
    try:
        heat = panel(figure, "map-heat")
        by_size = {(e["M"], e["N"], e["K"]): e for e in entries}
        sides = tail_map.MAP_SIDES
        for p in heat.patches:
            row, column = (int(v) for v in corner(p))
            entry = by_size[(sides[row], sides[column], tail_map.MAP_K)]
            colour = tail_map.ABOVE if entry["pct_cublas_tf32"] >= 95 else tail_map.BELOW
            assert to_rgba(p.get_facecolor())[:3] == to_rgba(colour)[:3], (row, column)
        shares = map_texts(heat, "map-pct")
        assert shares[(0, 0)].removesuffix("%") == format_percent(
            by_size[(256, 256, 4096)]["pct_cublas_tf32"]).removesuffix("%")
        assert map_texts(heat, "map-cublas")[(0, 0)] == format_gflops(
            by_size[(256, 256, 4096)]["cublas_tf32_gflops"])
        sweep = panel(figure, "map-sweep")
        assert [line.get_ydata()[0] for line in sweep.get_lines()
                if line.get_linestyle() == "--"] == [95.0]
        legend_texts = [t.get_text() for t in figure.legends[0].get_texts()]
        assert legend_texts == ["at or above 95%", "below 95%"]
        words = [t.get_text() for t in figure.findobj(Text)]
        assert any("% of cuBLAS on TF32" in w for w in words)
        assert ("Chapter 16's time as a share of cuBLAS's on TF32, on the Made-up GPU"
                in tail_map.alt_text(found))
        assert "Each cell also gives cuBLAS's GFLOP/s on TF32." in tail_map.alt_text(found)
        assert "against a goal of 95%" in tail_map.alt_text(found)
        assert text_problems(figure, renderer, mode) == []
        # Six-digit rates and two-line labels: every text within the figure.
        width = figure.bbox.width
        outside = [t.get_text() for t in figure.findobj(Text) if t.get_visible()
                   and t.get_text() and not 0 <= t.get_window_extent(renderer).x0 <= width]
        assert not outside, outside
    finally:
        plt.close(figure)
