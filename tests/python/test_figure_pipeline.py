"""Chapter 16's pipeline (code/ladder_tools/figures/pipeline.py, {ladder-pipeline}): what the
kernel's barriers require (sgemm_wgmma, consume_tf32, consume_3xtf32),
checked here against the schedule code/ladder_tools/figures/ring.py computes from each
variant's --describe constants, and against what the figure draws of it.
"""

import os
import re
import subprocess
import sys
from itertools import pairwise

from figure_checks import BUILD, MODES, ROOT, drawn, panel, text_problems, texts_of

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.analysis.binaries import AnalysisError, describe
from ladder_tools.figures import pipeline, ring

PIPELINE_SLUGS = ["16-wgmma", "16-wgmma-wide", "17-3xtf32-wgmma"]


def variant_constants(slug: str) -> dict:
    chapter = "16-wgmma" if slug.startswith("16-") else "17-3xtf32-wgmma"
    binary = BUILD / "bin" / chapter
    if not binary.is_file():
        pytest.skip(f"{chapter} is not built in {BUILD}/bin")
    (variant,) = [v for v in describe(binary)["variants"] if v["slug"] == slug]
    return variant["constants"]


def made_up_wgmma(stages: int, products: int) -> dict:
    """Constants of a made-up variant of chapter 16's tiling (tiling.cuh's sums)."""
    bm, bn, bk = 128, 128, 32
    a_tiles = 2 if products == 3 else 1  # A's tile, and on 3xTF32 its small part
    copy = (a_tiles * bm + bn) * bk
    return {"BM": bm, "BN": bn, "BK": bk, "STAGES": stages, "PRODUCTS": products,
            "CONSUMERS": 2, "WARPGROUP": 128, "A_TILES": a_tiles, "COPY_FLOATS": copy,
            "STAGE_FLOATS": copy}


def pipeline_problems(c: dict, tasks) -> list[str]:
    """What the kernel's barriers and roles require of a schedule of
    constants c; [] when it keeps them all."""
    stages = c["STAGES"]
    kinds = {"copy", "mma"}
    problems = []
    found: dict[tuple[str, int], list] = {}
    for t in tasks:
        found.setdefault((t.kind, t.step), []).append(t)
    steps = sorted({t.step for t in tasks})
    if steps != list(range(len(steps))) or len(steps) <= stages:
        problems.append(f"steps {steps}: not 0 .. n - 1 with a refill (n > STAGES = {stages})")
    for k in steps:
        for kind in kinds:
            if len(found.get((kind, k), [])) != 1:
                problems.append(f"step {k} has {len(found.get((kind, k), []))} {kind} tasks")
    problems += [f"a {kind} task" for kind in {t.kind for t in tasks} - kinds]
    problems += [f"step {t.step}'s {t.kind} is in stage {t.stage}, not k mod {stages}"
                 for t in tasks if t.stage != t.step % stages]
    if problems:
        return problems

    def task(kind, k):
        return found[(kind, k)][0]

    for k in steps:
        copy, mma = task("copy", k), task("mma", k)
        # "full": the consumers read step k after its copy landed.
        if mma.start < copy.end:
            problems.append(f"step {k} is multiplied before its copy lands")
        # "empty": the stage takes step k + STAGES only after the consumers
        # are done with step k.
        if k + stages in steps:
            refill = task("copy", k + stages)
            if refill.start < mma.end:
                problems.append(f"step {k + stages} refills stage {k % stages} before "
                                f"step {k}'s empty")
    # Each role does one step after another (the producer's thread issues its
    # copies in order; the consumers finish one first).
    for kind in kinds:
        order = [task(kind, k) for k in steps]
        for a, b in pairwise(order):
            if b.start < a.start or (kind != "copy" and b.start < a.end):
                problems.append(f"{kind} of step {b.step} runs before that of step {a.step}")
    # A stage holds one thing at a time.
    for stage in range(stages):
        lane = sorted((t for t in tasks if t.stage == stage), key=lambda t: t.start)
        problems += [f"stage {stage}: {a.kind} {a.step} and {b.kind} {b.step} overlap"
                     for a, b in pairwise(lane) if b.start < a.end]
    # The ring overlaps copying with multiplying: the producer runs ahead.
    if not any(a.kind == "copy" and b.kind == "mma" and a.start == b.start and a.step > b.step
               for a in tasks for b in tasks):
        problems.append("no copy runs beside a multiply")
    return problems


@pytest.mark.parametrize("slug", PIPELINE_SLUGS)
def test_the_pipeline_schedule_keeps_the_kernels_barriers(slug):
    c = variant_constants(slug)
    found, _ = ring.chapter_pipeline(ROOT, BUILD, slug)
    assert (found.stages, found.products) == (c["STAGES"], c["PRODUCTS"])
    assert pipeline_problems(c, ring.schedule(found)) == []


@pytest.mark.parametrize("products", [1, 3])
@pytest.mark.parametrize("stages", [2, 3, 5])
def test_the_pipeline_schedule_follows_made_up_constants(stages, products):
    c = made_up_wgmma(stages, products)
    assert pipeline_problems(c, ring.schedule(ring.pipeline_of("made-up", c))) == []


def test_a_schedule_that_refills_before_empty_is_caught():
    # The check above can fail: a producer that ignores "empty" refills early.
    c = made_up_wgmma(3, 1)
    tasks = ring.schedule(ring.pipeline_of("made-up", c))
    early = [ring.Task(t.kind, t.step, t.stage, 0) if t.kind == "copy" else t for t in tasks]
    assert any("before step" in p for p in pipeline_problems(c, early))


@pytest.mark.parametrize("broken", [{"COPY_FLOATS": 1}, {"STAGE_FLOATS": 1}, {"PRODUCTS": 2},
                                    {"STAGES": 1}, {"A_TILES": 1}, {"A_TILES": 3},
                                    {"A_TILES": 3, "COPY_FLOATS": 16384, "STAGE_FLOATS": 16384}])
def test_the_pipeline_refuses_constants_that_are_not_the_kernels(broken):
    with pytest.raises(AnalysisError):
        ring.pipeline_of("made-up", {**made_up_wgmma(3, 3), **broken})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug", PIPELINE_SLUGS)
def test_the_pipeline_figure_draws_each_task_and_barrier_once(slug, mode):
    c = variant_constants(slug)
    found, _ = ring.chapter_pipeline(ROOT, BUILD, slug)
    barrier_of = {"copy": "full", "mma": "empty"}
    kinds = ["copy", "mma"]
    figure, renderer = drawn(lambda: pipeline.pipeline_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"STAGES = {c['STAGES']}" in words and f"BK = {c['BK']}" in words
        assert f"= {c['STAGE_FLOATS']} floats" in words
        assert f"empty: {c['CONSUMERS'] * c['WARPGROUP']} arrived" in words
        assert ("A's small part" in words) == (c["PRODUCTS"] == 3)
        if c["PRODUCTS"] == 3:  # A's tile, B's and A's small part, as big as A's
            assert (f"+ A's small part {c['BM'] * c['BK']} = "
                    f"{(2 * c['BM'] + c['BN']) * c['BK']} floats") in words
        lanes = panel(figure, "lanes")
        lane_height = lanes.get_ylim()[0] / c["STAGES"]
        cells = {p.get_gid(): p for p in lanes.patches}
        steps = len([gid for gid in cells if gid.startswith("copy-")])
        assert steps > c["STAGES"]  # at least one stage refilled
        assert set(cells) == {f"{kind}-{k}" for kind in kinds for k in range(steps)}
        lines = {line.get_gid(): line for line in lanes.get_lines()}
        for gid, cell in cells.items():
            kind, step = gid.split("-")
            # Step k in stage k mod STAGES, its barrier at its end.
            assert int(cell.get_y() // lane_height) == int(step) % c["STAGES"], gid
            line = lines[f"barrier-{barrier_of[kind]}-{step}"]
            assert line.get_xdata()[0] == pytest.approx(round(cell.get_x() + cell.get_width()))
        assert len([gid for gid in lines if gid.startswith("barrier-")]) == len(cells)
    finally:
        plt.close(figure)
    # The SVG: one element per cell and per barrier, each under its own id.
    ids = re.findall(r'<g id="([^"]+)"', pipeline.draw_pipeline(found, mode).decode())
    for kind in kinds:
        for k in range(steps):
            assert ids.count(f"{kind}-{k}") == 1, f"{kind}-{k}"
            assert ids.count(f"barrier-{barrier_of[kind]}-{k}") == 1


def test_draw_py_draws_the_pipeline(tmp_path):
    variant_constants("17-3xtf32-wgmma")
    for mode in MODES:
        out = tmp_path / f"pipeline-{mode}.svg"
        done = subprocess.run([sys.executable, "-m", "ladder_tools.figures.draw", "pipeline",
                               "17-3xtf32-wgmma", "--mode", mode, "--out", str(out)],
                              capture_output=True, text=True,
                              env={**os.environ, "LADDER_BUILD_DIR": str(BUILD)})
        assert done.returncode == 0, done.stderr
        assert 'id="copy-0"' in out.read_text() and "A's small part" in out.read_text()
