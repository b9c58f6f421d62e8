"""The committed results pass the checks the measure command runs before it
writes them (code/ladder_tools/results/results_check.py), for every results/<gpu>/ folder:

- every chapter binary has a result (each chapter's own and its variants,
  as the built binaries describe them), unless
  tests/pending_measurement.txt says it is not measured yet;
- every size is correct;
- gflops, cublas_gflops and pct_cublas follow from the recorded median times
  (docs/results-schema.md), within what printing with %.9g can change;
- the GPU tests' summary shows none failed;
- every sanitizer verdict is clean, and every chapter binary has one per tool;
- the random problems' file, where there is one, reads, and the final
  kernels are correct on every problem with rates that follow from the times.

Each check is also shown to fail, on a copy of results/h200/ edited the way
a bad run would leave it; and the measure command's decision to refuse a
run (measure.refusal) is tested on such runs, in memory.
"""
import copy
import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import random_fixture
from common import ROOT, declared_binaries, load_command
from ladder_tools.analysis import binaries
from ladder_tools.results import pending, random_problems
from ladder_tools.results import results_check as rc

measure = load_command("measure")

RESULTS = ROOT / "results"
REFERENCE = RESULTS / "h200"
GPU_FOLDERS = sorted(p.name for p in RESULTS.iterdir()
                     if p.is_dir() and not p.name.startswith(".")) if RESULTS.is_dir() else []


@functools.cache
def expected() -> list[str]:
    """Every chapter binary (the tests that need it skip without every
    chapter built: common.declared_binaries)."""
    return declared_binaries()


def measured() -> list[str]:
    """Those the committed results must hold: the declared binaries less the
    ones tests/pending_measurement.txt says are not measured yet."""
    return pending.measured_binaries(ROOT, expected())


def problems(folder: Path, check: str) -> list[str]:
    """One check's problems for the results folder `folder`. The reference
    GPU's folder must hold every measured binary; another GPU's may hold
    some chapters only (measure.py --chapters on a reader's GPU, or on the
    GPU a session was lent), and each binary it holds must pass."""
    data = rc.load_folder(folder)

    def wanted() -> list[str]:  # the binaries it must hold (needs the build)
        return (measured() if folder.name == pending.REFERENCE_GPU
                else sorted(set(data["chapters"]) & set(expected())))
    return {
        "results": lambda: rc.missing_results(data["chapters"], wanted()),
        "correct": lambda: rc.incorrect_sizes(data["chapters"]),
        "rates": lambda: rc.identity_errors(data["chapters"]),
        "gpu-tests": lambda: rc.gpu_test_failures(data["gpu_tests"]),
        "sanitizer": lambda: rc.unclean_sanitizers(data["sanitizer"], wanted()),
        "random": lambda: rc.random_problems(data["random"]),
    }[check]()


def test_a_partial_folder_passes_on_another_gpu_only(edited, tmp_path):
    """A folder with some chapters only is complete for another GPU, and
    missing binaries for the reference GPU."""
    for path in (edited / "chapters").glob("*.json"):
        if not path.name.startswith("14-"):
            path.unlink()
    other = edited.rename(tmp_path / "h100")
    assert problems(other, "results") == []
    reference = other.rename(tmp_path / pending.REFERENCE_GPU)
    assert problems(reference, "results") != []


CHECKS = ["results", "correct", "rates", "gpu-tests", "sanitizer", "random"]


# -- The chapter binaries ----------------------------------------------------


def test_every_chapter_folder_declares_its_binary_and_the_variants_follow():
    chapters = sorted(p.name for p in (ROOT / "chapters").iterdir()
                      if (p / "kernel.cu").exists())
    assert chapters, "no chapter folders"
    assert set(chapters) <= set(expected())
    for name in set(expected()) - set(chapters):
        assert any(name.startswith(c + "-") for c in chapters), name


def fake_binary(path: Path, slugs: list[str]) -> None:
    """A program that answers --describe as a chapter binary with these variants."""
    described = {"variants": [{"slug": slug} for slug in slugs]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{json.dumps(described)}'\n")
    path.chmod(0o755)


def test_declared_binaries_are_what_each_chapter_binary_describes(tmp_path):
    repo, build = tmp_path / "repo", tmp_path / "build"
    for folder in ("01-a", "02-b"):
        (repo / "chapters" / folder).mkdir(parents=True)
        (repo / "chapters" / folder / "kernel.cu").write_text("")
    fake_binary(build / "bin" / "01-a", ["01-a"])
    fake_binary(build / "bin" / "02-b", ["02-b", "02-b-swizzled", "02-b-rows"])
    assert binaries.declared_binaries(repo, build) == [
        "01-a", "02-b", "02-b-rows", "02-b-swizzled"]
    # A chapter whose binary is not built stops the list: it must not shrink.
    (repo / "chapters" / "03-c").mkdir()
    (repo / "chapters" / "03-c" / "kernel.cu").write_text("")
    with pytest.raises(binaries.AnalysisError, match="03-c does not exist"):
        binaries.declared_binaries(repo, build)


def test_the_declared_binaries_are_what_measure_measures(build_dir):
    """The book's list of the chapter binaries (ladder_tools.analysis.binaries) and the
    measure command's (its chapter_programs) name the same results."""
    programs = sorted(p.name for p in measure.chapter_programs(build_dir, []))
    assert programs == sorted(expected())
    assert measure.declared_binaries(build_dir) == expected()


# -- The committed results ---------------------------------------------------


def test_the_reference_gpu_has_results():
    assert "h200" in GPU_FOLDERS


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("gpu", GPU_FOLDERS)
def test_committed_results_pass(gpu, check):
    found = problems(RESULTS / gpu, check)
    assert found == [], f"results/{gpu}: " + "\n".join(found)


# -- Each check fails on a results folder a bad run would leave ---------------


@pytest.fixture
def edited(tmp_path) -> Path:
    """A copy of results/h200/ to edit."""
    return Path(shutil.copytree(REFERENCE, tmp_path / "h200"))


def edit_json(path: Path, change) -> None:
    content = json.loads(path.read_text())
    change(content)
    path.write_text(json.dumps(content))


def first_timed(result: dict) -> dict:
    return next(s for s in result["sizes"] if "gflops" in s)


@pytest.mark.parametrize("name", ["01-naive", "the last measured"])
def test_a_missing_chapter_result_fails(edited, name):
    if name == "the last measured":
        name = measured()[-1]
    (edited / "chapters" / f"{name}.json").unlink()
    assert problems(edited, "results") == [f"{name}: no result (chapters/{name}.json)"]


def test_a_result_under_another_chapter_name_fails(edited):
    edit_json(edited / "chapters" / "02-coalescing.json",
              lambda r: r.update(chapter="01-naive"))
    assert problems(edited, "results") == [
        "02-coalescing: the file records chapter '01-naive'"]


def test_an_incorrect_size_fails(edited):
    edit_json(edited / "chapters" / "07-vectorized.json",
              lambda r: r["sizes"][-1].update(correct=False))
    found = problems(edited, "correct")
    assert len(found) == 1 and found[0].startswith("07-vectorized: ")
    assert "is not correct" in found[0]


def test_a_result_with_no_sizes_fails(edited):
    edit_json(edited / "chapters" / "03-flat-block.json", lambda r: r.update(sizes=[]))
    assert problems(edited, "correct") == ["03-flat-block: no sizes"]


@pytest.mark.parametrize("key", ["gflops", "cublas_gflops", "pct_cublas"])
def test_a_rate_that_does_not_follow_from_the_times_fails(edited, key):
    edit_json(edited / "chapters" / "05-1d-register-tiling.json",
              lambda r: first_timed(r).update({key: first_timed(r)[key] * 1.25}))
    found = problems(edited, "rates")
    assert len(found) == 1 and found[0].startswith("05-1d-register-tiling: ")
    assert f"records {key} " in found[0]


def test_a_rate_off_by_ten_times_the_rounding_fails(edited):
    """The tolerance is tight: ten times what %.9g can change is caught."""
    edit_json(edited / "chapters" / "12-final.json",
              lambda r: first_timed(r).update(
                  pct_cublas=first_timed(r)["pct_cublas"] * (1 + 10 * rc.ROUNDING)))
    assert len(problems(edited, "rates")) == 1


def test_a_changed_median_time_fails(edited):
    """Editing a time, not a rate, breaks both of its identities."""
    def slower(r):
        first_timed(r)["time_ms"]["median"] *= 1.1
    edit_json(edited / "chapters" / "08-warp-tiling.json", slower)
    found = problems(edited, "rates")
    assert [f.split(" records ")[1].split()[0] for f in found] == ["gflops", "pct_cublas"]


def test_rates_recomputed_and_printed_with_9_digits_pass(edited):
    """What the harness would write from these times passes: recompute each
    rate from the recorded times, print it with %.9g, read it back."""
    def rewrite(r):
        for s in r["sizes"]:
            if "gflops" in s:
                flops = 2.0 * s["M"] * s["N"] * s["K"]
                s["gflops"] = float("%.9g" % (flops / (s["time_ms"]["median"] * 1e-3) / 1e9))
                s["pct_cublas"] = float(
                    "%.9g" % (100.0 * s["cublas_time_ms"]["median"] / s["time_ms"]["median"]))
    for path in (edited / "chapters").glob("*.json"):
        edit_json(path, rewrite)
    assert problems(edited, "rates") == []


def test_failed_gpu_tests_fail(edited):
    def failed(t):
        t.update(returncode=8, summary="94% tests passed, 1 tests failed out of 17",
                 failed=["9 - gpu.10-padding (Failed)"])
    edit_json(edited / "gpu-tests.json", failed)
    found = problems(edited, "gpu-tests")
    assert len(found) == 3
    assert "GPU tests failed: 9 - gpu.10-padding (Failed)" in found


def test_a_fuzz_run_with_a_failure_or_no_problems_fails(edited):
    def fuzzed(t):
        t["fuzz"] = {"14-tf32": {"seeds": ["1"], "problems": 48, "failed": 0},
                     "16-wgmma": {"seeds": ["1"], "problems": 96, "failed": 2},
                     "01-naive": {"seeds": [], "problems": 0, "failed": 0}}
    edit_json(edited / "gpu-tests.json", fuzzed)
    assert sorted(problems(edited, "gpu-tests")) == [
        "the fuzzer of 01-naive records no problems or no seeds",
        "the fuzzer of 16-wgmma records 2 failed problems"]


def test_a_missing_gpu_test_summary_fails(edited):
    (edited / "gpu-tests.json").unlink()
    assert problems(edited, "gpu-tests") == ["no GPU test summary (gpu-tests.json)"]


def test_an_unclean_sanitizer_verdict_fails(edited):
    edit_json(edited / "sanitizer.json",
              lambda s: s["chapters"]["11-double-buffering"]["racecheck"].update(clean=False))
    found = problems(edited, "sanitizer")
    assert len(found) == 1 and found[0].startswith("11-double-buffering: racecheck is not clean")


def test_a_chapter_binary_with_no_sanitizer_verdict_fails(edited):
    edit_json(edited / "sanitizer.json", lambda s: s["chapters"].pop("10-padding-rows"))
    assert problems(edited, "sanitizer") == [
        f"10-padding-rows: no {tool} verdict" for tool in rc.SANITIZER_TOOLS]


def test_every_check_passes_on_the_unedited_copy(edited):
    assert rc.folder_problems(edited, measured()) == []


# -- The measure command refuses a run that fails them ------------------------


@pytest.fixture
def good_run() -> dict:
    """The arguments of measure.refusal for a run that passed, taken from
    the committed reference results."""
    data = rc.load_folder(REFERENCE)
    return {
        "tests": {k: data["gpu_tests"][k] for k in ("returncode", "summary", "failed")},
        "status": {name: {"returncode": 0} for name in [*measured(), "transpose"]},
        "chapters": copy.deepcopy(data["chapters"]),
        "expected": list(measured()),
        "sanitizer": {name: {t: v for t, v in tools.items() if t in rc.SANITIZER_TOOLS}
                      for name, tools in data["sanitizer"]["chapters"].items()},
        "sanitized": list(measured()),
    }


def test_a_run_that_passed_is_written(good_run):
    assert measure.refusal(**good_run) == []


def test_a_run_without_the_sanitizer_needs_no_verdicts(good_run):
    assert measure.refusal(**{**good_run, "sanitizer": {}, "sanitized": []}) == []


def test_a_run_whose_gpu_tests_failed_is_refused(good_run):
    good_run["tests"].update(returncode=8, failed=["9 - gpu.10-padding (Failed)"])
    assert "GPU tests failed: 9 - gpu.10-padding (Failed)" in measure.refusal(**good_run)


def test_a_run_whose_chapter_exited_non_zero_is_refused(good_run):
    good_run["status"]["04-smem-tiling"] = {"returncode": 1}
    assert measure.refusal(**good_run) == ["04-smem-tiling exited with 1"]


def test_a_run_with_an_incorrect_size_is_refused(good_run):
    good_run["chapters"]["06-2d-register-tiling"]["sizes"][0]["correct"] = False
    found = measure.refusal(**good_run)
    assert len(found) == 1 and "06-2d-register-tiling: " in found[0]


def test_a_run_with_a_missing_result_is_refused(good_run):
    del good_run["chapters"]["12-final-swizzled"]
    assert measure.refusal(**good_run) == [
        "12-final-swizzled: no result (chapters/12-final-swizzled.json)"]


def test_a_run_with_an_unclean_sanitizer_is_refused(good_run):
    good_run["sanitizer"]["09-autotuning"]["memcheck"] = {
        "clean": False, "returncode": 99, "tail": ["========= ERROR SUMMARY: 3 errors"]}
    assert measure.refusal(**good_run) == [
        "09-autotuning: memcheck is not clean (========= ERROR SUMMARY: 3 errors)"]


def run_ctest(project: Path, tests: dict[str, int]) -> subprocess.CompletedProcess:
    """ctest's own output for a project of tests that exit with the given
    codes (77 is a skip, as for the GPU tests)."""
    project.mkdir()
    lines = ["cmake_minimum_required(VERSION 3.25)", "project(probe NONE)", "enable_testing()"]
    for name, code in tests.items():
        lines += [f'add_test(NAME {name} COMMAND "{sys.executable}" -c "raise SystemExit({code})")',
                  f"set_tests_properties({name} PROPERTIES SKIP_RETURN_CODE 77)"]
    (project / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    subprocess.run(["cmake", "-S", str(project), "-B", str(project / "build")],
                   check=True, capture_output=True, timeout=120)
    return subprocess.run(["ctest", "--test-dir", str(project / "build"), "-j", "2"],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("ctest") is None, reason="no ctest on the PATH")
def test_the_gpu_tests_summary_is_read_from_ctest_output(tmp_path, good_run):
    done = run_ctest(tmp_path / "mixed", {"gpu.passes": 0, "gpu.skips": 77, "gpu.fails": 1})
    tests = measure.ctest_summary(done.returncode, done.stdout)
    assert tests["failed"] == ["gpu.fails (Failed)"]
    assert tests["skipped"] == ["gpu.skips (Skipped)"]
    found = measure.refusal(**{**good_run, "tests": tests})
    assert f"ctest -L gpu exited with {done.returncode}" in found
    assert "GPU tests failed: gpu.fails (Failed)" in found
    assert "GPU tests skipped: gpu.skips (Skipped)" in found

    done = run_ctest(tmp_path / "passing", {"gpu.passes": 0, "gpu.passes-too": 0})
    tests = measure.ctest_summary(done.returncode, done.stdout)
    assert (tests["failed"], tests["skipped"]) == ([], [])
    assert measure.refusal(**{**good_run, "tests": tests}) == []


# -- The measure command's whole run, its GPU work replaced by fakes ----------


def program(build_dir: Path, name: str):
    """The measure command's Program for a result name: a chapter, or a
    variant of the chapter whose folder starts the name."""
    chapter = binaries.chapter_folder(ROOT, name)
    flags = () if name == chapter else ("--variant", name[len(chapter) + 1:])
    return measure.Program(name, chapter, (str(build_dir / "bin" / chapter), *flags))


@pytest.fixture
def fake_measure(tmp_path, monkeypatch):
    """measure.main() with everything that needs a GPU faked: its chapter
    binaries 'write' the committed reference results, the GPU tests and the
    sanitizer report what the test sets in `run`; results/ is tmp_path's."""
    root = tmp_path / "root"
    for kernel in (ROOT / "chapters").glob("*/kernel.cu"):
        (root / "chapters" / kernel.parent.name).mkdir(parents=True)
    run = {"tests": {"returncode": 0, "summary": "100% tests passed, 0 tests failed out of 3",
                     "failed": [], "skipped": []},
           "edit": lambda name, result: None, "clean": True, "silent": set()}

    def benchmark(program, out, sizes, extras=True, limit=None, warmup_ms=None):
        if program.name in run["silent"]:  # a program that exits 0 and writes nothing
            return {"returncode": 0}
        committed = REFERENCE / "chapters" / f"{program.name}.json"
        if not committed.exists():  # not measured yet: another chapter's numbers
            committed = REFERENCE / "chapters" / f"{measured()[0]}.json"
        result = json.loads(committed.read_text())
        result["chapter"] = program.name
        run["edit"](program.name, result)
        out.write_text(json.dumps(result))
        return {"returncode": 0}

    def sanitize(command, sizes):
        return {tool: {"clean": run["clean"], "returncode": 0 if run["clean"] else 99,
                       "size": " ".join(sizes), "tail": []} for tool in rc.SANITIZER_TOOLS}

    real_which = shutil.which
    monkeypatch.setattr(measure, "ROOT", root)
    monkeypatch.setattr(measure.shutil, "which",
                        lambda name, *a, **k: "/fake/nvidia-smi" if name == "nvidia-smi"
                        else None if name == "ncu" else real_which(name, *a, **k))
    def fake_run(cmd, **kw):
        # A final kernel's binary on the random problems (measure.random_pass):
        # its JSON for the sizes asked, each at twice its goal unless the test
        # says otherwise (run["random"]: {chapter: pct(index)}).
        if "--seed" in cmd and "--json" in cmd:
            slug = Path(cmd[0]).name
            asked = cmd[cmd.index("--sizes") + 1:cmd.index("--budget-s")]
            problems = [dict(zip("MNK", measure.dims(size), strict=True)) for size in asked]
            goal = random_problems.RANDOM_CHAPTERS[slug].percent
            written = random_fixture.binary_output(
                slug, problems, run["random"].get(slug, lambda i: 2 * goal),
                int(cmd[cmd.index("--seed") + 1]))
            Path(cmd[cmd.index("--json") + 1]).write_text(json.dumps(written))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    run["random"] = {}
    run["built"] = []
    monkeypatch.setattr(measure, "run", fake_run)
    monkeypatch.setattr(measure, "build",
                        lambda build_dir, targets=None: run["built"].append(targets))
    monkeypatch.setattr(measure, "chapter_programs",
                        lambda build_dir, wanted: [program(build_dir, name) for name in expected()])
    monkeypatch.setattr(measure, "gpu_tests", lambda build_dir: run["tests"])
    monkeypatch.setattr(measure, "baseline", lambda build_dir, out: None)
    monkeypatch.setattr(measure, "benchmark", benchmark)
    monkeypatch.setattr(measure, "transpose_exercise", lambda build_dir, out: {})
    monkeypatch.setattr(measure, "smallest_accepted", lambda binary: "256")
    monkeypatch.setattr(measure, "sanitize", sanitize)
    # What each program was built from is hashed from the real tree (nvcc -M
    # on the fake root would find no sources); cached per source as in a run.
    monkeypatch.setattr(measure, "inputs_of",
                        lambda source: {source: "0" * 64,
                                        "code/include/ladder/runner.cuh": "1" * 64})
    monkeypatch.setattr(sys, "argv", ["measure.py", "--build-dir", str(tmp_path / "build"),
                                      "--seed", "4242"])
    return root, run


def test_measure_writes_a_run_that_passes(fake_measure, capsys):
    root, _ = fake_measure
    assert measure.main() == 0
    written = root / "results" / "h200"
    assert sorted(p.stem for p in (written / "chapters").glob("*.json")) == expected()
    assert rc.folder_problems(written, expected()) == []
    assert "refusing" not in capsys.readouterr().out
    # Every result, and every entry of the files that gather chapters, says
    # what its program was built from.
    for path in (written / "chapters").glob("*.json"):
        recorded = json.loads(path.read_text())["provenance"]
        main_file = f"chapters/{program(Path('build'), path.stem).chapter}/kernel.cu"
        assert recorded["inputs"][main_file] == "0" * 64, path.name
    sanitizer = json.loads((written / "sanitizer.json").read_text())["chapters"]
    assert all("runner.cuh" in name for entry in sanitizer.values()
               for name in entry["measured"]["inputs"] if name.startswith("code/"))
    tests = json.loads((written / "gpu-tests.json").read_text())
    assert "code/include/ladder/runner.cuh" in tests["inputs"]


def test_measure_refuses_a_run_that_missed_a_described_variant(fake_measure, capsys):
    """A variant its binary describes that wrote no result is a missing result."""
    root, run = fake_measure
    chapters = sorted(p.name for p in (ROOT / "chapters").iterdir() if (p / "kernel.cu").exists())
    run["silent"] = set(expected()) - set(chapters)
    assert run["silent"], "no chapter has a variant"
    assert measure.main() == 1
    assert not (root / "results").exists()
    out = capsys.readouterr().out
    for variant in run["silent"]:
        assert f"measure: {variant}: no result (chapters/{variant}.json)" in out


@pytest.mark.parametrize("failure", ["incorrect", "gpu-tests", "sanitizer"])
def test_measure_refuses_a_run_that_failed_and_writes_nothing(fake_measure, capsys, failure):
    root, run = fake_measure
    if failure == "incorrect":
        run["edit"] = lambda name, result: (
            result["sizes"][0].update(correct=False) if name == "03-flat-block" else None)
    elif failure == "gpu-tests":
        run["tests"] = {"returncode": 8, "summary": "67% tests passed, 1 tests failed out of 3",
                        "failed": ["gpu.03-flat-block (Failed)"], "skipped": []}
    else:
        run["clean"] = False
    assert measure.main() == 1
    assert not (root / "results").exists()
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("measure: refusing to write results/h200/: ")


# -- The random problems in the measure command's run --------------------------


def test_measure_writes_the_random_problems_of_its_seed(fake_measure, capsys):
    """A run of every chapter draws the random problems of its seed (here
    --seed 4242), times the three final kernels on them, and writes
    random.json: the seed, the problems, each kernel's sizes and goal, and
    the inputs of all three (stale when any changes)."""
    root, _ = fake_measure
    assert measure.main() == 0
    out = capsys.readouterr().out
    assert "random problems, seed 4242" in out
    assert "24 of 24 at least 200% of cuBLAS SGEMM" in out
    written = json.loads((root / "results" / "h200" / "random.json").read_text())
    assert written["seed"] == 4242
    assert written["problems"] == random_problems.draw(4242)
    assert sorted(written["chapters"]) == sorted(random_problems.RANDOM_CHAPTERS)
    for slug in random_problems.RANDOM_CHAPTERS:
        assert f"chapters/{slug}/kernel.cu" in written["inputs"]
        assert written["chapters"][slug]["provenance"]["config"]["seed"] == 4242
    assert written["chapters"]["16-wgmma"]["goal"] == {"percent": 95.0, "against": "cuBLAS TF32"}
    assert rc.folder_problems(root / "results" / "h200", expected()) == []


def test_measure_refuses_a_random_problem_that_is_not_correct(fake_measure, capsys):
    root, run = fake_measure
    real = random_fixture.size_entry

    def wrong_once(m, n, k, pct, slug, correct=True):
        return real(m, n, k, pct, slug, correct=(m, n, k) != tuple(
            random_problems.draw(4242)[3][d] for d in "MNK"))
    random_fixture.size_entry, saved = wrong_once, real
    try:
        assert measure.main() == 1
    finally:
        random_fixture.size_entry = saved
    assert not (root / "results").exists()
    out = capsys.readouterr().out
    assert "measure: random 13-tail: " in out and "is not correct" in out


def test_measure_chapters_random_alone_writes_random_json_only(fake_measure, monkeypatch):
    """--chapters random times the final kernels on the random problems and
    measures no chapter's own sizes."""
    root, _ = fake_measure
    monkeypatch.setattr(measure, "chapter_programs", lambda build_dir, wanted: [
        program(build_dir, name) for name in expected()
        if not wanted or binaries.chapter_folder(ROOT, name) in wanted])
    monkeypatch.setattr(sys, "argv", [*sys.argv, "--chapters", "random"])
    assert measure.main() == 0
    written = root / "results" / "h200"
    assert (written / "random.json").exists()
    assert not list((written / "chapters").glob("*.json"))


def test_a_quick_run_builds_its_binaries_draws_nothing_and_writes_nothing(
        fake_measure, monkeypatch, capsys):
    """--quick builds the binaries it runs alone, runs no GPU tests and no
    random problems, and leaves its partial results out of results/."""
    root, run = fake_measure
    # The real tree's chapters (the fake root holds no kernel.cu).
    folders = sorted(p.name for p in (ROOT / "chapters").iterdir() if (p / "kernel.cu").exists())
    monkeypatch.setattr(measure, "chapter_folders", lambda: folders)
    asked = []
    monkeypatch.setattr(measure, "gpu_tests", lambda build_dir: asked.append("tests"))
    monkeypatch.setattr(sys, "argv", [*sys.argv, "--quick"])
    assert measure.main() == 0
    assert asked == []
    assert not (root / "results").exists()
    out = capsys.readouterr().out
    assert "random problems" not in out and "--quick writes nothing to results/" in out
    (targets,) = run["built"]
    assert targets[0] == "baseline" and "bin/13-tail" in targets and "transpose" in targets
    assert not any(t.startswith("fuzz") for t in targets)
