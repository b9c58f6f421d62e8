"""Chapter 13's rounds and plans (code/ladder_tools/figures/tail.py, {ladder-tail-rounds};
ladder_tools/analysis/tailplan.py, {ladder-tail-plans}). The plans and segments are
build/bin/tailplan's (the chapter's own plan(), cost() and schedule
functions); what is checked here is computed here: the tiles and steps from
the sizes and tilings, every tile's K-steps covered once, the figure's bars
those of the placement, the table those of the tool.
"""

import json
import re
from itertools import pairwise
from pathlib import Path

from figure_checks import BUILD, COLUMN_PX, MODES, ROOT, drawn, natural_width_px, text_problems

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgb

from ladder_tools import results as results_tools
from ladder_tools.analysis import tailplan
from ladder_tools.figures import tail

TAIL_SIZES = ["512", "768", "1024", "1280", "1536", "2048", "2560", "3072", "4096",
              "4097x4097x4097", "512x512x16384", "128x4096x4096"]
TAIL_FIGURES = [("3072", ["tiles", "split-k", "stream-k"]),
                ("1024", ["tiles", "split-k", "stream-k"]),
                ("512x512x16384", ["tiles", "split-k", "stream-k"]),
                ("4097x4097x4097", ["default", "big-tiles"])]
#: An H200's shape, for the tool alone (the book takes it from the results).
H200_SHAPE = tailplan.TailGpu("NVIDIA H200", 132, 1, 3, "the test's")


def tailplan_tool() -> Path:
    tool = BUILD / "bin" / "tailplan"
    if not tool.is_file():
        pytest.skip(f"tailplan is not built in {BUILD}/bin")
    return tool


def tail_pages() -> list[tuple[str, str, list[str]]]:
    """(page and line, size, schemes) of every {ladder-tail-rounds} on a page."""
    found = []
    for page in sorted((ROOT / "chapters").glob("**/*.md")):
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            if match := re.match(r"^```\{ladder-tail-rounds\}\s+(\S+)", line):
                schemes = ["tiles", "split-k", "stream-k"]
                for option in lines[number:number + 3]:
                    if option.startswith(":schemes:"):
                        schemes = option.split()[1:]
                found.append((f"{page.relative_to(ROOT)}:{number}", match.group(1), schemes))
    return found


TAIL_CASES = [(f"size {size}", size, schemes) for size, schemes in TAIL_FIGURES] + tail_pages()


def test_tailplan_plans_follow_the_sizes_and_the_variants_rules():
    tool = tailplan_tool()
    sizes = [tailplan.parse_size(s) for s in TAIL_SIZES]
    report = tailplan.run_plans(tool, H200_SHAPE, sizes)
    assert [(e["M"], e["N"], e["K"]) for e in report["sizes"]] == sizes
    for entry in report["sizes"]:
        where = f"{entry['M']}x{entry['N']}x{entry['K']}"
        plans = {**entry["variants"], "big-tiles": entry["big_tiles"]}
        for name, plan in plans.items():
            t = report[plan["tiling"]]
            # A packed plan runs on copies whose rows are whole 128-byte
            # lines: N and K rounded up to multiples of 32 floats.
            n, k = entry["N"], entry["K"]
            if plan.get("packed"):
                n, k = -(-n // 32) * 32, -(-k // 32) * 32
            assert plan["tiles_m"] == -(-entry["M"] // t["BM"]), (where, name)
            assert plan["tiles_n"] == -(-n // t["BN"]), (where, name)
            assert plan["tiles"] == plan["tiles_m"] * plan["tiles_n"]
            assert plan["steps"] == -(-k // t["BK"]), (where, name)
            slots = report["sms"] * t["blocks_per_sm"]
            if plan["scheme"] == "stream-k":
                shared = plan["tiles"] - plan["dp_tiles"]
                assert plan["dp_tiles"] % slots == 0, (where, name)
                assert plan["sharing_blocks"] == min(slots, shared * plan["steps"]), (where, name)
                assert plan["blocks"] == plan["dp_tiles"] + plan["sharing_blocks"]
            else:
                assert plan["blocks"] == plan["tiles"] * plan["slices"], (where, name)
                assert (plan["slices"] > 1) == (plan["scheme"] == "split-k")
        v = entry["variants"]
        assert v["tiles"]["scheme"] == "tiles", where
        assert v["split-k"]["scheme"] != "stream-k", where
        assert v["stream-k"]["scheme"] == "stream-k", where
        assert entry["big_tiles"]["tiling"] == "big" and entry["big_tiles"]["scheme"] == "tiles"
        # More schemes to pick from never make the pick's count worse (the
        # count as plan() compares it: Small's weighted by its slowdown).
        cost = {name: plan["weighted_cost"] for name, plan in v.items()}
        assert cost["default"] <= cost["split-k"] <= cost["tiles"], where
        assert cost["tiles"] <= entry["big_tiles"]["weighted_cost"], where


@pytest.mark.parametrize("size", ["3072", "1024", "512x512x16384", "4097x4097x4097", "1280",
                                  "128x4096x4096"])
def test_every_schemes_segments_cover_each_tiles_steps_once(size):
    tool = tailplan_tool()
    for scheme in tailplan.SCHEMES:
        report = tailplan.run_segments(tool, H200_SHAPE, scheme, tailplan.parse_size(size))
        plan = report["plan"]
        assert len(report["blocks"]) == plan["blocks"], scheme
        covered: dict[int, list[tuple[int, int, int, int]]] = {}
        for block in report["blocks"]:
            for seg in block["segments"]:
                covered.setdefault(seg["tile"], []).append(
                    (seg["first_step"], seg["end_step"], seg["turn"], seg["turns"]))
        assert sorted(covered) == list(range(plan["tiles"])), scheme
        for tile, segs in covered.items():
            segs.sort()
            assert [s[0] for s in segs] == [0] + [s[1] for s in segs[:-1]], (scheme, tile)
            assert segs[-1][1] == plan["steps"], (scheme, tile)
            assert [s[2] for s in segs] == list(range(len(segs))), (scheme, tile)
            assert {s[3] for s in segs} == {len(segs)}, (scheme, tile)
        # The placement's bars and the busy slots add up to every tile's steps.
        (panel,) = tail.tail_panels([(scheme, report)])
        assert sum(b.steps for b in panel.bars) == plan["tiles"] * plan["steps"], scheme
        busy = panel.busy()
        area = sum(level * (after[0] - time) for (time, level), after in pairwise(busy))
        assert area == plan["tiles"] * plan["steps"], scheme
        assert busy[-1][1] == 0 and max(level for _, level in busy) <= panel.slots, scheme
        # No slot runs two blocks at once.
        by_slot: dict[int, list] = {}
        for b in panel.bars:
            by_slot.setdefault(b.slot, []).append((b.start, b.start + b.steps))
        for spans in by_slot.values():
            spans.sort()
            assert all(a[1] <= b[0] for a, b in pairwise(spans)), scheme


def tail_rounds_or_skip(size: str, schemes: list[str]):
    tool = tailplan_tool()
    found, _, _ = tail.chapter_tail_rounds(ROOT, BUILD, tool, tailplan.parse_size(size),
                                           schemes, "h200")
    if found is None:
        pytest.skip("no H200 result to take the SMs from")
    return found


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where,size,schemes", TAIL_CASES, ids=[c[0] for c in TAIL_CASES])
def test_the_tail_rounds_figure_is_the_tools_segments(where, size, schemes, mode):
    found = tail_rounds_or_skip(size, schemes)
    tool = tailplan_tool()
    gpu, _, _ = tailplan.tail_gpu(ROOT, BUILD, "h200")
    figure, renderer = drawn(lambda: tail.tail_rounds_figure(found, mode))
    try:
        problems = text_problems(figure, renderer, mode)
        # One panel per distinct plan; every scheme is named in one.
        assert sorted(n for p in found.panels for n in p.names) == sorted(schemes)
        sampled = found.sampled()
        for index, panel in enumerate(found.panels):
            report = tailplan.run_segments(tool, gpu, panel.names[0], found.size)
            plan = report["plan"]
            if sum(b.steps for b in panel.bars) != plan["tiles"] * plan["steps"]:
                problems.append(f"{panel.names}: the bars do not add up to tiles x steps")
            # The drawn bars are the placement's on the sampled SMs, to the step.
            expected = sorted((b.start, b.steps) for b in panel.bars
                              if b.slot % panel.sms in sampled)
            axes = panel_of(figure, f"tail-panel-{index}")
            bars = sorted((round(p.get_x()), round(p.get_width())) for p in axes.patches
                          if p.get_gid() == "tail-segment")
            if bars != expected:
                problems.append(f"{panel.names}: {len(bars)} bars drawn, {len(expected)} placed")
            if not any(t.get_text().startswith(" = ".join(panel.names) + ":")
                       for t in axes.texts if t.get_gid() == "tail-title"):
                problems.append(f"{panel.names}: the title does not name the schemes")
        alt = tail.alt_text(found)
        if f"{len(sampled)} of the {found.sms} SMs" not in alt:
            problems.append("the alt text does not say the SMs are sampled")
        assert not problems, "\n".join(f"{where}, {mode}: {p}" for p in problems)
        width = natural_width_px(tail.draw_tail_rounds(found, mode))
        assert width <= COLUMN_PX, f"{where}: {width} px wide, the column is {COLUMN_PX}"
    finally:
        plt.close(figure)


def panel_of(figure, gid: str):
    (axes,) = [a for a in figure.axes if a.get_gid() == gid]
    return axes


def test_the_tail_figure_shows_plain_tiles_idle_tail_and_stream_ks_even_shares():
    found = tail_rounds_or_skip("3072", ["big-tiles", "stream-k"])
    big, stream = found.panels
    # 288 Big tiles on 132 SMs: two full rounds and 24 blocks in the third.
    assert big.rounds() == [132, 132, 24]
    assert tail.schedule_words(big) == "288 blocks in 3 rounds of 132, the last 24"
    # Stream-K at 3072: the first round's 132 tiles a block each, the other
    # 156 tiles' steps shared by 132 blocks, every share the same give or take one.
    dp = stream.plan["dp_tiles"]
    assert dp == 132
    lengths = [e - s for e, s in zip(stream.block_ends(), stream.block_starts(), strict=True)]
    assert set(lengths[:dp]) == {stream.plan["steps"]}
    shares = lengths[dp:]
    assert len(shares) == 132 and max(shares) - min(shares) <= 1
    # Both panels on one time scale: the count's time of their last step.
    axes = [panel_of(found_figure, f"tail-panel-{i}")
            for found_figure in [tail.tail_rounds_figure(found, "light")] for i in (0, 1)]
    try:
        spans = [a.get_xlim()[1] * p.step_time for a, p in zip(axes, found.panels, strict=False)]
        assert spans[0] == pytest.approx(spans[1])
    finally:
        plt.close(axes[0].figure)


def test_the_tail_figure_draws_split_ks_slices_then_its_second_pass():
    found = tail_rounds_or_skip("1024", ["big-tiles", "split-k"])
    big, split = found.panels
    assert not big.split and big.second_pass == 0
    assert split.split and split.plan["slices"] > 1
    # The second pass as the count prices it: the chapter's cost() less the
    # blocks' rounds, in K-steps of a full SM, after the last slice.
    plan = split.plan
    rounds_cost = split.step_time * (plan["steps_per_slice"] + 2)  # one round of Big
    assert plan["second_pass"] == pytest.approx(plan["cost"] - rounds_cost)
    assert split.second_pass > 0 and split.finish == split.makespan + split.second_pass
    figure = tail.tail_rounds_figure(found, "dark")
    try:
        axes = panel_of(figure, "tail-panel-1")
        passes = [p for p in axes.patches if p.get_gid() == "tail-second-pass"]
        assert len(passes) == len(found.sampled())
        assert all(p.get_x() == split.makespan and p.get_width() == pytest.approx(split.second_pass)
                   for p in passes)
        slices = [p for p in axes.patches if p.get_gid() == "tail-segment"]
        assert slices and all(p.get_facecolor()[:3] == to_rgb(tail.SLICE_COLOUR) for p in slices)
        labels = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
        assert "second pass" in labels and "a later turn: adds into C" not in labels
        # The time scale holds the second pass: both panels end by the axis's end.
        assert panel_of(figure, "tail-panel-0").get_xlim()[1] * big.step_time >= \
            split.finish * split.step_time
    finally:
        plt.close(figure)


def fake_result(slug: str, times: dict[tuple[int, int, int], float]) -> results_tools.ChapterResult:
    sizes = [{"M": m, "N": n, "K": k, "time_ms": {"median": t, "min": t, "max": t},
              "pct_cublas": 50.0 + m % 7, "gflops": 1.0, "cublas_gflops": 1.0,
              "cublas_time_ms": {"median": t, "min": t, "max": t}, "max_rel_err": 0.0,
              "correct": True} for (m, n, k), t in times.items()]
    return results_tools.ChapterResult("h200", Path(f"{slug}.json"),
                                       {"chapter": slug, "sizes": sizes}, None)


def test_the_tail_plans_table_is_the_tools_plans():
    tool = tailplan_tool()
    sizes = [tailplan.parse_size(s) for s in TAIL_SIZES]
    report = tailplan.run_plans(tool, H200_SHAPE, sizes)
    # Measured at some sizes only: the others show a dash.
    ours = fake_result("13-tail", {sizes[0]: 1.0, sizes[7]: 3.0, sizes[10]: 2.0})
    tiles = fake_result("13-tail-tiles", {sizes[0]: 2.0, sizes[7]: 4.0})
    rows = tailplan.plans_rows(report, ours, tiles)
    assert len(rows) == len(sizes)
    assert len(tailplan.PLANS_HEADER) == len(rows[0])
    for row, entry, size in zip(rows, report["sizes"], sizes, strict=True):
        own, plain = entry["variants"]["default"], entry["variants"]["tiles"]
        assert row[0] == tailplan.size_text(size)
        assert row[1] == {"big": "Big", "small": "Small"}[own["tiling"]]
        assert row[2].lower().startswith(own["scheme"].replace("-k", "-k"))
        assert row[3].split(" ")[0].replace(",", "") == str(own["blocks"])
        # As plan() weighs them: Small's count times its slowdown.
        assert float(row[4]) == pytest.approx(own["weighted_cost"] / plain["weighted_cost"],
                                              abs=0.005)
    assert [r[5] for r in rows] == ["0.50"] + ["\u2014"] * 6 + ["0.75"] + ["\u2014"] * 4
    assert rows[10][6] == f"{50.0 + 512 % 7:.1f}%" and rows[1][6] == "\u2014"
    # Not measured at all: every measured cell is a dash, the prediction stays.
    bare = tailplan.plans_rows(report, None, None)
    assert all(r[5] == r[6] == "\u2014" for r in bare)
    assert [r[4] for r in bare] == [r[4] for r in rows]


def test_the_tail_gpu_comes_from_the_13_tail_result(tmp_path, monkeypatch):
    tailplan_tool()
    if not (BUILD / "bin" / "13-tail").is_file():
        pytest.skip("13-tail is not built")
    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    result = {"schema": 1, "chapter": "13-tail",
              "provenance": {"gpu": "Made-up GPU", "source": "chapters/13-tail/kernel.cuh",
                             "sm_count": 100},
              "resources": {"blocks_per_sm": 2},
              "sizes": [{"M": 512, "N": 512, "K": 512, "max_rel_err": 0.0, "correct": True}]}
    (folder / "13-tail.json").write_text(json.dumps(result))
    monkeypatch.setenv("LADDER_RESULTS_DIR", str(tmp_path))
    found, read, got = tailplan.tail_gpu(ROOT, BUILD, "h200")
    assert (found.sms, found.big_blocks) == (100, 2)
    assert got is not None and got.path == folder / "13-tail.json"
    assert "13-tail's run" in found.whence and ".json" not in found.whence
    # Small's is computed from its kernel in the binary, whatever the result says.
    small, kernel = tailplan.small_blocks_per_sm(*binaries_find("13-tail"))
    assert found.small_blocks == small and "Tiling<64, 128," in kernel["name"]
    # Without any result of the GPU there is nothing to take the SMs from.
    (folder / "13-tail.json").unlink()
    assert tailplan.tail_gpu(ROOT, BUILD, "h200")[0] is None


def binaries_find(slug: str):
    from ladder_tools.analysis.binaries import find_variant
    return find_variant(ROOT, BUILD, slug)


@pytest.mark.parametrize("mode", MODES)
def test_the_phones_tail_figure_draws_the_same_bars(mode):
    """The phone's drawing (phone=True) is narrow, its titles wrapped, and
    draws each panel's bars as the wide drawing does."""
    found = tail_rounds_or_skip("3072", ["big-tiles", "tiles", "stream-k"])
    drawings = [tail.tail_rounds_figure(found, mode, phone=phone) for phone in (False, True)]
    try:
        wide, narrow = drawings
        assert narrow.get_figwidth() == tail.PHONE_WIDTH < wide.get_figwidth()
        for index, panel in enumerate(found.panels):
            bars = [sorted((round(p.get_x()), round(p.get_width()), round(p.get_y(), 6))
                           for p in panel_of(figure, f"tail-panel-{index}").patches
                           if p.get_gid() == "tail-segment") for figure in drawings]
            assert bars[0] == bars[1] and bars[0], panel.names
            (title,) = [t.get_text() for t in panel_of(narrow, f"tail-panel-{index}").texts
                        if t.get_gid() == "tail-title"]
            assert title.startswith(" = ".join(panel.names) + ":")
            assert max(len(line) for line in title.split("\n")) <= tail.PHONE_LINE
    finally:
        for figure in drawings:
            plt.close(figure)
