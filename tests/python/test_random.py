"""Goals held on random sizes (ladder_tools.results.random_problems): the draw, the
reader of results/<gpu>/random.json (results.load_random_result), its
staleness and --changed, and the {ladder-random} directive on a scratch
page built from a synthetic file (tests/python/random_fixture.py)."""
from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import random_fixture
from common import ROOT, load_command
from ladder_tools import results
from ladder_tools.results import goals, pending
from ladder_tools.results import random_problems as rp
from ladder_tools.results import results_check as rc

measure = load_command("measure")

DOCS = ROOT / "docs"


# -- The draw -----------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**30 - 1])
def test_a_draw_holds_16_uniform_and_8_thin_problems_in_their_ranges(seed):
    drawn = rp.draw(seed)
    assert len(drawn) == 24
    uniform, thin = drawn[:16], drawn[16:]
    for p in uniform:
        assert p["kind"] == rp.UNIFORM_KIND
        assert all(1000 <= p[d] <= 8192 for d in "MNK"), p
    # Two of each kind, in turn.
    assert [p["kind"] for p in thin] == [*rp.THIN_KINDS, *rp.THIN_KINDS]
    for p in thin:
        small = [d for d in "MNK" if 64 <= p[d] <= 512]
        assert small, p  # one dimension in [64, 512]
        assert p["K"] <= 65536
        if p["kind"] == "M small":
            assert p["M"] <= 512 and p["N"] >= 1000 and p["K"] >= 1000
        elif p["kind"] == "N small":
            assert p["N"] <= 512 and p["M"] >= 1000 and p["K"] >= 1000
        elif p["kind"] == "M and N small, long K":
            assert p["M"] <= 512 and p["N"] <= 512 and p["K"] >= 16384
        else:
            assert p["K"] <= 512 and p["M"] >= 1000 and p["N"] >= 1000


def test_the_seed_repeats_the_draw_and_another_seed_does_not():
    assert rp.draw(777) == rp.draw(777)
    assert rp.draw(777) != rp.draw(778)
    # The sizes as the binaries take them.
    assert rp.size_text({"M": 1, "N": 2, "K": 3}) == "1x2x3"


def test_the_draw_covers_its_ranges_over_many_seeds():
    """Over many seeds the draw reaches both ends of each range (uniform,
    ends included), not a corner of it."""
    seen = [p for seed in range(300) for p in rp.draw(seed)]
    uniform = [p[d] for p in seen if p["kind"] == rp.UNIFORM_KIND for d in "MNK"]
    assert min(uniform) < 1100 and max(uniform) > 8090
    longest = [p["K"] for p in seen if p["kind"] == "M and N small, long K"]
    assert max(longest) > 60000 and min(longest) < 20000
    short = [p["K"] for p in seen if p["kind"] == "K short"]
    assert min(short) < 80 and max(short) > 500


@pytest.mark.parametrize("seed", [-1, 2**30, 1.5, True, "3"])
def test_a_seed_out_of_range_is_refused(seed):
    with pytest.raises(ValueError):
        rp.draw(seed)


def test_a_fresh_seed_is_in_range_and_changes():
    seeds = {rp.fresh_seed() for _ in range(20)}
    assert len(seeds) > 1 and all(0 <= s < rp.SEED_LIMIT for s in seeds)


def test_the_goals_are_the_final_chapters_own():
    assert rp.RANDOM_CHAPTERS["13-tail"] == rp.RandomGoal(100.0, "cuBLAS SGEMM")
    assert rp.RANDOM_CHAPTERS["16-wgmma"] == rp.RandomGoal(95.0, "cuBLAS TF32")
    assert rp.RANDOM_CHAPTERS["17-3xtf32-wgmma"] == rp.RandomGoal(200.0, "cuBLAS SGEMM")
    assert rp.RANDOM_CHAPTERS["16-wgmma"].field == "pct_cublas_tf32"
    assert rp.RANDOM_CHAPTERS["17-3xtf32-wgmma"].field == "pct_cublas"
    for slug in rp.RANDOM_CHAPTERS:
        assert (ROOT / "chapters" / slug / "kernel.cu").is_file()


# -- The reader ---------------------------------------------------------------


def write(folder: Path, content: dict) -> Path:
    (folder / "h200").mkdir(parents=True, exist_ok=True)
    path = folder / "h200" / "random.json"
    path.write_text(json.dumps(content))
    return path


def test_a_good_file_reads_fresh_and_passes_the_checks(tmp_path):
    content = random_fixture.random_file(12345)
    write(tmp_path, content)
    found = results.load_random_result(tmp_path, "h200", ROOT)
    assert found is not None and found.stale is None
    assert found.seed == 12345 and len(found.problems) == 24
    assert rc.random_problems(content) == []
    verdict = found.verdict("16-wgmma")
    assert (verdict.met, verdict.total, verdict.misses) == (24, 24, ())
    assert (verdict.percent, verdict.against) == (95.0, "cuBLAS TF32")
    assert results.load_random_result(tmp_path, "h100", ROOT) is None


def test_misses_are_below_the_goal_untimed_or_incorrect(tmp_path):
    content = random_fixture.random_file(
        5, {"13-tail": lambda i: {0: 97.5, 1: None}.get(i, 101.0)})
    content["chapters"]["13-tail"]["sizes"][2]["correct"] = False
    write(tmp_path, content)
    verdict = results.load_random_result(tmp_path, "h200", ROOT).verdict("13-tail")
    assert verdict.met == 21
    problems = rp.draw(5)
    dims = [(p["M"], p["N"], p["K"]) for p in problems]
    (first, pct, why), (second, none, untimed), (third, _, wrong) = verdict.misses
    assert (first, round(pct, 6), why) == (dims[0], 97.5, "below the goal")
    assert (second, none, untimed) == (dims[1], None, "not timed")
    assert (third, wrong) == (dims[2], "not correct")
    # The measure command's checks refuse the incorrect one.
    assert any("random 13-tail" in p and "is not correct" in p
               for p in rc.random_problems(content))


BAD_FILES = {
    "no seed": lambda c: c.pop("seed"),
    "a negative seed": lambda c: c.update(seed=-3),
    "another schema": lambda c: c.update(schema=2),
    "no problems": lambda c: c.update(problems=[]),
    "a problem of no size": lambda c: c["problems"][4].update(K=0),
    "a chapter missing": lambda c: c["chapters"].pop("17-3xtf32-wgmma"),
    "no inputs": lambda c: c.pop("inputs"),
    "a goal against nothing known": lambda c: c["chapters"]["13-tail"]["goal"].update(
        against="cuBLAS FP16"),
    "a problem not timed by a chapter": lambda c: c["chapters"]["16-wgmma"]["sizes"].pop(),
    "sizes out of order": lambda c: c["chapters"]["13-tail"]["sizes"].reverse(),
    "a timed size without the goal's %": lambda c: c["chapters"]["16-wgmma"]["sizes"][0].pop(
        "pct_cublas_tf32"),
    "a size without correct": lambda c: c["chapters"]["13-tail"]["sizes"][0].pop("correct"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_the_reader_refuses_a_bad_file(tmp_path, case):
    content = copy.deepcopy(random_fixture.random_file(9))
    BAD_FILES[case](content)
    write(tmp_path, content)
    with pytest.raises(results.ResultsError, match="random.json"):
        results.load_random_result(tmp_path, "h200", ROOT)
    assert rc.random_problems(content) != []


def test_a_file_that_is_not_json_is_refused(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "random.json").write_text("{not json")
    with pytest.raises(results.ResultsError):
        results.load_random_result(tmp_path, "h200", ROOT)


def test_a_rate_that_does_not_follow_from_its_times_is_refused():
    content = random_fixture.random_file(9)
    content["chapters"]["17-3xtf32-wgmma"]["sizes"][5]["pct_cublas"] *= 1.5
    found = rc.random_problems(content)
    assert len(found) == 1 and found[0].startswith("random 17-3xtf32-wgmma: ")


# -- Staleness, pending and --changed ----------------------------------------


def test_the_file_goes_stale_when_any_of_the_three_chapters_changes(tmp_path):
    content = random_fixture.random_file(3)
    recorded = "chapters/16-wgmma/kernel.cu"
    assert recorded in content["inputs"]
    content["inputs"][recorded] = "0" * 64
    write(tmp_path, content)
    found = results.load_random_result(tmp_path, "h200", ROOT)
    assert found.stale and recorded in found.stale
    # The pending check lists it as a measurement of its own.
    listed = dict(pending.measurements(tmp_path))
    assert listed["h200/random.json"]["inputs"] == content["inputs"]


def test_changed_measures_the_random_problems_when_missing_or_stale(tmp_path):
    folder = tmp_path / "h200"
    folder.mkdir()
    assert measure.RANDOM in measure.changed_chapters(ROOT, folder, [], [])
    content = random_fixture.random_file(3)
    (folder / "random.json").write_text(json.dumps(content))
    assert measure.RANDOM not in measure.changed_chapters(ROOT, folder, [], [])
    content["inputs"]["chapters/13-tail/kernel.cu"] = "0" * 64
    (folder / "random.json").write_text(json.dumps(content))
    assert measure.RANDOM in measure.changed_chapters(ROOT, folder, [], [])


def test_a_run_that_measures_a_final_chapter_draws_the_random_problems():
    assert measure.measures_random([])
    assert measure.measures_random([measure.RANDOM])
    for slug in rp.RANDOM_CHAPTERS:
        assert measure.measures_random(["01-naive", slug])
    assert not measure.measures_random(["12-final", measure.TRANSPOSE])
    # --quick never does: every problem has a dimension over its cap.
    assert not measure.measures_random([], quick=True)


def test_the_random_pass_runs_each_final_binary_once_with_every_problem(monkeypatch, tmp_path):
    asked = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    monkeypatch.setattr(measure, "run", lambda command, **_: asked.append(command) or Done())
    problems, status = measure.random_pass(Path("build"), tmp_path / "random", 99)
    assert problems == rp.draw(99)
    assert [Path(c[0]).name for c in asked] == list(rp.RANDOM_CHAPTERS)
    for command in asked:
        sizes = command[command.index("--sizes") + 1:command.index("--budget-s")]
        assert sizes == [rp.size_text(p) for p in problems]
        assert command[command.index("--budget-s") + 1] == str(rp.RANDOM_BUDGET_S)
        assert command[command.index("--seed") + 1] == "99"
    assert status == {f"random {slug}": {"returncode": 0} for slug in rp.RANDOM_CHAPTERS}
    # No binary wrote a file: nothing to write.
    assert measure.random_result(99, problems, tmp_path / "random") is None


# -- --quick and the progress line --------------------------------------------


def test_quick_caps_every_dimension_at_2048():
    sizes = ["256", "2048", "4096", "2048x2048x2048", "256x256x65536", "1000x1000x1000",
             "4097x4097x4097", "64x2049x64"]
    assert measure.capped(sizes, measure.QUICK_LIMIT) == [
        "256", "2048", "2048x2048x2048", "1000x1000x1000"]
    assert measure.capped(sizes, None) == sizes


def test_the_progress_line_estimates_the_time_left(monkeypatch):
    lines = []
    monkeypatch.setattr(measure, "say", lines.append)
    clock = iter([0.0, 4.0, 10.0, 12.0, 13.0])
    progress = measure.Progress(3, budget_s=20, clock=lambda: next(clock))
    progress.start("benchmarking a")
    progress.end()  # 4 s
    progress.start("benchmarking b")
    progress.end()  # 2 s
    progress.start("benchmarking c")
    assert lines[0].startswith("[1/3] benchmarking a; about 60 s")
    assert "an estimate: 3 runs \u00d7 20.0 s, the time budget of one size" in lines[0]
    assert lines[2].startswith("[3/3] benchmarking c; about 3 s")
    assert "1 runs \u00d7 3.0 s, their mean so far" in lines[2]


# -- {ladder-random} on a scratch page ------------------------------------------


@pytest.fixture(scope="module")
def sphinx_python() -> str:
    if importlib.util.find_spec("sphinx") and importlib.util.find_spec("myst_parser"):
        return sys.executable
    build = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
    python = build / "venv" / "bin" / "python"
    if not python.is_file():
        pytest.skip("no Python with Sphinx: run python3 docs/build_book.py --env-only")
    return str(python)


PAGE = """# Scratch

```{ladder-random} 13-tail
```

```{ladder-random} 16-wgmma
```
"""


def build_page(python: str, tmp_path: Path, results_dir: Path) -> str:
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        "extensions = ['myst_parser', 'ladder_tools.sphinx.ladder_results']\n"
        f"ladder_repo_root = {str(ROOT)!r}\nnitpicky = True\n")
    (source / "index.md").write_text(PAGE)
    done = subprocess.run(
        [python, "-m", "sphinx", "-E", "-W", "-n", "-q", "--no-color", "-b", "html", str(source),
         str(tmp_path / "out")],
        capture_output=True, text=True, timeout=240,
        env=dict(os.environ, LADDER_RESULTS_DIR=str(results_dir)))
    assert done.returncode == 0, done.stdout + done.stderr
    content = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content))


def test_the_directive_shows_the_seed_the_count_and_every_miss(sphinx_python, tmp_path):
    results_dir = tmp_path / "results"
    content = random_fixture.random_file(
        31337, {"13-tail": lambda i: 96.25 if i in (3, 20) else 104.0})
    write(results_dir, content)
    # A second GPU with chapter 13's result and no random.json.
    other = results_dir / "h100"
    (other / "chapters").mkdir(parents=True)
    chapter = random_fixture.binary_output("13-tail", rp.draw(1)[:1])
    chapter["provenance"].update(gpu="Fixture GPU B", gpu_slug="h100")
    (other / "chapters" / "13-tail.json").write_text(json.dumps(chapter))
    text = build_page(sphinx_python, tmp_path, results_dir)
    problems = rp.draw(31337)
    assert "Random problems · Fixture GPU A (h200 folder)" in text
    assert ("Seed 31337: 22 of the 24 random problems meet the goal, at least 100% of "
            "cuBLAS SGEMM.") in text
    # Each miss is a row: its size, its %, the share of the GPU the count
    # keeps busy, and no prediction (chapter 13 has no result at 4096 here).
    assert "The misses: problem busy, by the count % measured / predicted cause" in text
    for index in (3, 20):
        p = problems[index]
        assert re.search(rf"{p['M']} × {p['N']} × {p['K']} \d+(\.\d)?% 96\.[23]% / — "
                         "not predicted", text), text
    assert text.count("not predicted") == 2
    assert ("Seed 31337: 24 of the 24 random problems meet the goal, at least 95% of "
            "cuBLAS TF32. No miss.") in text
    # The draw is explained once per directive, from the rule.
    assert text.count("Each measure run draws 24 problems afresh") == 2
    # The GPU without the file says so where it measured the chapter (13,
    # not 16); no box says nothing was measured.
    assert text.count("Random problems · Fixture GPU B") == 1
    assert text.count("Random problems: not measured on this GPU yet.") == 1
    assert "Not measured yet" not in text and "Stale" not in text


def test_the_directive_with_no_file_anywhere_says_not_measured(sphinx_python, tmp_path):
    results_dir = tmp_path / "results"
    results_dir.mkdir()
    text = build_page(sphinx_python, tmp_path, results_dir)
    assert text.count("Not measured yet") == 2
    assert "No GPU has timed 13-tail on random problems." in text


def test_a_stale_file_is_shown_under_a_warning(sphinx_python, tmp_path):
    results_dir = tmp_path / "results"
    content = random_fixture.random_file(8)
    content["inputs"]["chapters/17-3xtf32-wgmma/kernel.cu"] = "0" * 64
    write(results_dir, content)
    text = build_page(sphinx_python, tmp_path, results_dir)
    assert text.count("Stale result") == 2
    assert "Seed 8: 24 of the 24" in text


@pytest.mark.parametrize("slug", list(rp.RANDOM_CHAPTERS))
def test_each_final_page_states_the_goal_the_random_problems_hold(slug):
    """The random problems judge a final kernel by the goal its page's
    {ladder-goals} list states first: the same % of the same cuBLAS."""
    page = (ROOT / "chapters" / slug / "chapter.md").read_text()
    block = re.search(r"```\{ladder-goals\} " + re.escape(slug) + r"\n(.*?)```", page, re.S)
    assert block, f"chapters/{slug}/chapter.md has no {{ladder-goals}} {slug} list"
    lines = [line for line in block.group(1).splitlines() if line and not line.startswith(":")]
    first = goals.parse_goal(lines[0])
    goal = rp.RANDOM_CHAPTERS[slug]
    assert first.percent == goal.percent
    assert goals.AGAINST[first.against] == goals.AGAINST[goal.against]
