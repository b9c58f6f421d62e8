"""The book: its results-reading functions, and whole builds with -W.

The pure tests call code/ladder_tools directly. The build tests run
docs/build_book.py against an empty results folder or a copy of
tests/fixtures/results/ (synthetic numbers, never shown in the real book)
and read the HTML it writes. The builds that other tests read too (the
fixture site, the book command's render) are read in test_book_site.py,
after CTest has built them; the builds here are this file's own, so CTest
starts it at once. They need Doxygen, and are skipped, with that reason,
only when it is missing. The Python packages come from the interpreter
running the tests when it has Sphinx (the book's virtual environment does),
else from the virtual environment that build_book.py makes in the build
folder.
"""

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import fixture_site
from common import declared_binaries
from ladder_tools import provenance
from ladder_tools.formatting import (
    format_error,
    format_gflops,
    format_ms,
    format_percent,
    format_size,
    format_time_range,
    parse_size,
)
from ladder_tools.results import (
    RESULTS_DIR_VARIABLE,
    ChapterResult,
    ResultsError,
    chapter_slugs,
    check_chapter_result,
    fastest_cublas_gflops,
    goals,
    gpu_folders,
    load_chapter_result,
    load_chapter_results,
    median_cublas_gflops,
    pending,
    results_root,
    staleness,
)
from ladder_tools.results.values import (
    BASELINE_KEYS,
    CHAPTER_KEYS,
    FP64_ERROR_KEYS,
    NOT_MEASURED,
    parse_value_request,
    resolve_value,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def chapter_json(slug: str, source: str, source_hash: str, sizes=None) -> dict:
    """A minimal valid chapter result (synthetic values), built from one file."""
    timed = {
        "M": 4096, "N": 4096, "K": 4096,
        "time_ms": {"median": 2.0, "min": 1.9, "max": 2.2},
        "cublas_time_ms": {"median": 1.0, "min": 0.9, "max": 1.1},
        "gflops": 1000.0, "cublas_gflops": 2000.0, "pct_cublas": 50.0,
        "max_rel_err": 1e-6, "rel_norm_err": 1e-7, "correct": True,
    }
    return {
        "schema": 1, "chapter": slug, "title": "Test",
        "provenance": {"gpu": "Test GPU", "source": source, "inputs": {source: source_hash}},
        "sizes": sizes if sizes is not None else [timed],
    }


@pytest.fixture
def tree(tmp_path):
    """A repository with one kernel file and a results folder for it."""
    repo = tmp_path / "repo"
    kernel = repo / "chapters" / "01-test" / "kernel.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("__global__ void k() {}\n")
    results = tmp_path / "results"
    path = results / "h200" / "chapters" / "01-test.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(chapter_json(
        "01-test", "chapters/01-test/kernel.cu", sha256_text(kernel.read_text()))))
    return repo, results, kernel


# -- Finding results ---------------------------------------------------------


def test_gpu_folders_put_the_reference_gpu_first(tmp_path):
    for name in ("a100", "rtx-4090", "h200", ".hidden"):
        (tmp_path / name).mkdir()
    (tmp_path / "notes.txt").write_text("")
    assert gpu_folders(tmp_path) == ["h200", "a100", "rtx-4090"]
    assert gpu_folders(tmp_path / "absent") == []


def test_results_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(RESULTS_DIR_VARIABLE, raising=False)
    assert results_root(tmp_path) == tmp_path / "results"
    monkeypatch.setenv(RESULTS_DIR_VARIABLE, str(tmp_path / "other"))
    assert results_root(tmp_path) == tmp_path / "other"


def test_chapter_slugs_are_the_chapter_folders_in_order():
    slugs = chapter_slugs(ROOT)
    assert slugs[0] == "01-naive"
    assert slugs == sorted(slugs)


# -- Staleness ---------------------------------------------------------------


def test_a_result_matching_its_source_is_fresh(tree):
    repo, results, _ = tree
    result = load_chapter_result(results, "h200", "01-test", repo)
    assert result is not None and result.stale is None


def test_a_changed_source_makes_its_result_stale(tree):
    repo, results, kernel = tree
    kernel.write_text("__global__ void k() { /* changed */ }\n")
    result = load_chapter_result(results, "h200", "01-test", repo)
    assert result.stale == "chapters/01-test/kernel.cu has changed since it was measured"


def test_a_removed_source_makes_its_result_stale(tree):
    repo, results, kernel = tree
    kernel.unlink()
    result = load_chapter_result(results, "h200", "01-test", repo)
    assert result.stale == "chapters/01-test/kernel.cu is gone since it was measured"


def test_a_changed_header_makes_its_result_stale(tree):
    """Every recorded input counts, not only the kernel file: a harness
    header the chapter includes changes what was measured."""
    repo, _, kernel = tree
    header = repo / "code" / "include" / "ladder" / "runner.cuh"
    header.parent.mkdir(parents=True)
    header.write_text("// the runner\n")
    names = ["chapters/01-test/kernel.cu", "code/include/ladder/runner.cuh"]
    recorded = {"source": names[0], "inputs": provenance.hash_files(names, repo)}
    assert staleness(recorded, repo) is None
    header.write_text("// the runner, timing changed\n")
    assert staleness(recorded, repo) == (
        "code/include/ladder/runner.cuh has changed since it was measured")


def test_a_result_without_inputs_is_stale(tree):
    repo, _, _ = tree
    assert "records no inputs" in staleness({"source": "chapters/01-test/kernel.cu"}, repo)


def test_the_hash_is_compared_case_blind(tree):
    repo, _, kernel = tree
    recorded = {"inputs": {"chapters/01-test/kernel.cu": sha256_text(kernel.read_text()).upper()}}
    assert staleness(recorded, repo) is None


def test_inputs_are_what_nvcc_includes_and_the_build_files():
    """The measure command's inputs of a chapter: its files, the harness
    headers it includes (found by nvcc -M), and the build files."""
    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("nvcc is not installed")
    inputs = provenance.inputs_of(ROOT / "chapters" / "04-smem-tiling" / "kernel.cu")
    for name in ("chapters/04-smem-tiling/kernel.cu", "chapters/04-smem-tiling/CMakeLists.txt",
                 "code/include/ladder/runner.cuh", "code/include/ladder/accuracy.hpp",
                 "CMakeLists.txt", "cmake/Ladder.cmake"):
        assert name in inputs, name
    assert not any(name.startswith("/") or "cuda" in name.split("/")[0] for name in inputs)
    assert inputs == provenance.hash_files(inputs, ROOT)


KERNEL_WITH_CHOSEN = """// a kernel
// [chosen]
/// the one this chapter runs
using Chosen = Tiling<1, 2>;
// [end]
int main() {}
"""


def test_a_sweep_hash_leaves_out_only_the_chosen_block():
    assert provenance.without_chosen(KERNEL_WITH_CHOSEN) == "// a kernel\nint main() {}\n"
    assert provenance.without_chosen("int main() {}\n") == "int main() {}\n"
    with pytest.raises(ValueError, match="no '// \\[end\\]' line"):
        provenance.without_chosen("// [chosen]\nusing Chosen = T;\n")


def test_a_sweep_stays_fresh_when_only_its_chosen_block_changes(tmp_path):
    kernel = tmp_path / "chapters" / "09-x" / "kernel.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text(KERNEL_WITH_CHOSEN)
    name = "chapters/09-x/kernel.cu"
    sweep = {"inputs": provenance.hash_files([name], tmp_path, "chosen"),
             "inputs_exclude": "chosen"}
    whole_file = {"inputs": provenance.hash_files([name], tmp_path)}
    kernel.write_text(KERNEL_WITH_CHOSEN.replace("Tiling<1, 2>", "Tiling<3, 4>"))
    assert staleness(sweep, tmp_path) is None
    # A full-file hash (a chapter result) does see the change.
    assert "has changed" in staleness(whole_file, tmp_path)
    kernel.write_text(KERNEL_WITH_CHOSEN.replace("int main", "long main"))
    assert "has changed" in staleness(sweep, tmp_path)
    assert "unknown exclusion" in staleness({**sweep, "inputs_exclude": "other"}, tmp_path)


def test_committed_results_are_valid_and_fresh_or_pending(build_dir):
    """Every result in results/ reads, and belongs to the code in the tree;
    every measurement (sweeps, the transpose, the GPU tests' summary, the
    sanitizer, ncu and issue entries too) is stale once a file it was built
    from changes. What is stale or missing must be said in
    tests/pending_measurement.txt, and every line there must still be needed."""
    results = ROOT / "results"
    for gpu in gpu_folders(results):
        for path in sorted((results / gpu / "chapters").glob("*.json")):
            assert load_chapter_result(results, gpu, path.stem, ROOT) is not None
    assert pending.problems(ROOT, declared_binaries()) == []


def pending_tree(tree, declared: list[str], lines: str) -> list[str]:
    """pending.problems for the `tree` fixture, whose chapter binaries are
    `declared` (as the built chapters would describe them), with a pending
    file of `lines`."""
    repo, results, _ = tree
    (repo / pending.PENDING_FILE).parent.mkdir(exist_ok=True)
    (repo / pending.PENDING_FILE).write_text(lines)
    return pending.problems(repo, declared, results)


def test_a_stale_result_must_be_said_pending(tree):
    kernel = tree[2]
    declared = ["01-test"]
    assert pending_tree(tree, declared, "") == []
    kernel.write_text("__global__ void k2() {}\n")
    found = pending_tree(tree, declared, "")
    assert len(found) == 1 and "chapters/01-test/kernel.cu has changed" in found[0]
    assert pending_tree(tree, declared, "stale chapters/01-test/kernel.cu | edited\n") == []
    # A line that explains nothing is itself a problem.
    found = pending_tree(tree, declared, "stale chapters/01-test/kernel.cu | edited\n"
                                        "stale code/other.cuh | nothing built from it\n")
    assert found == [f"{pending.PENDING_FILE}: 'stale code/other.cuh': no measurement is "
                     "stale through it; remove the line"]


def test_a_missing_result_must_be_said_pending(tree):
    declared = ["01-test", "01-test-fast"]
    found = pending_tree(tree, declared, "")
    assert len(found) == 1 and found[0].startswith("01-test-fast: no result on the h200")
    assert pending_tree(tree, declared, "missing 01-test-fast | new variant\n") == []
    found = pending_tree(tree, declared, "missing 01-test-fast | new variant\n"
                                        "missing 01-test | measured already\n"
                                        "missing 09-gone | no such chapter\n")
    assert found == [
        f"{pending.PENDING_FILE}: 'missing 01-test': it has a result now; remove the line",
        f"{pending.PENDING_FILE}: 'missing 09-gone': no chapter declares it; remove the line"]


def test_a_malformed_pending_line_is_an_error(tree):
    with pytest.raises(ValueError, match="expected 'stale <path> | why'"):
        pending_tree(tree, [], "stale chapters/01-test/kernel.cu\n")


# -- Reading and checking ----------------------------------------------------


def test_missing_results_are_none_and_not_measured(tree):
    repo, results, _ = tree
    assert load_chapter_result(results, "h200", "02-absent", repo) is None
    assert load_chapter_results(results, "02-absent", repo) == []
    for spec in ("02-absent:4096:gflops", "01-test:1024:gflops",
                 "baseline:fma_peak_gflops", "rtx-4090/01-test:4096:gflops",
                 "cublas:1024"):
        value = resolve_value(parse_value_request(spec), results, repo)
        assert value.text == NOT_MEASURED, spec


def test_a_broken_results_file_is_an_error(tree):
    repo, results, _ = tree
    path = results / "h200" / "chapters" / "01-test.json"
    path.write_text("{ not json")
    with pytest.raises(ResultsError, match="cannot read it as JSON"):
        load_chapter_result(results, "h200", "01-test", repo)


def test_check_chapter_result_names_what_is_wrong():
    good = chapter_json("01-test", "k.cu", "0" * 64)
    assert check_chapter_result(good, "01-test") == []
    assert "chapter is '01-test', expected '02-other'" in check_chapter_result(good, "02-other")
    bad = chapter_json("01-test", "k.cu", "0" * 64)
    bad["sizes"][0]["gflops"] = True  # a boolean is not a number
    del bad["sizes"][0]["time_ms"]["max"]
    problems = check_chapter_result(bad, "01-test")
    assert "sizes[0].gflops is missing or of the wrong type" in problems
    assert "sizes[0].time_ms needs median, min and max" in problems


def test_an_untimed_size_is_valid_and_reads_not_measured(tree):
    repo, results, kernel = tree
    untimed = {"M": 8192, "N": 8192, "K": 8192, "timing_skipped": "over budget",
               "max_rel_err": 1e-6, "correct": True}
    content = chapter_json("01-test", "chapters/01-test/kernel.cu",
                           sha256_text(kernel.read_text()), [untimed])
    (results / "h200" / "chapters" / "01-test.json").write_text(json.dumps(content))
    request = parse_value_request("01-test:8192:gflops")
    assert resolve_value(request, results, repo).text == NOT_MEASURED
    request = parse_value_request("01-test:8192:correct")
    assert resolve_value(request, results, repo).text == "correct"


# -- Inline values -------------------------------------------------------------


def test_goals_parse_sizes_ranges_and_shapes():
    goal = goals.parse_goal("95 | Shapes and squares | 512x512x16384 1024..1536:256 768")
    assert goal.percent == 95.0 and goal.label == "Shapes and squares"
    assert goal.sizes == ((512, 512, 16384), (1024,) * 3, (1280,) * 3, (1536,) * 3, (768,) * 3)
    for bad in ("95 | no sizes", "x | Squares | 512", "90 | Squares | 512..1024",
                "90 | Squares | 512..1024:0"):
        with pytest.raises(ResultsError):
            goals.parse_goal(bad)


def test_a_goal_is_judged_from_the_result(tree):
    """The sizes below a goal, and those not timed, follow from the numbers:
    the same goal flips when the result does."""
    repo, results, _ = tree
    path = results / "h200" / "chapters" / "01-test.json"
    content = json.loads(path.read_text())
    first = content["sizes"][0]
    content["sizes"] = [first, {**first, "M": 1024, "N": 1024, "K": 1024, "pct_cublas": 101.0}]
    path.write_text(json.dumps(content))
    result = load_chapter_result(results, "h200", "01-test", repo)
    goal = goals.parse_goal("100 | Squares | 1024 2048 4096")
    verdict = goals.judge(goal, result.timed_at)
    assert verdict.measured == {(1024,) * 3: 101.0, (4096,) * 3: 50.0}
    assert verdict.below == {(4096,) * 3: 50.0}
    assert verdict.unmeasured == ((2048,) * 3,)
    assert goals.judge(goals.parse_goal("50 | Squares | 4096"), result.timed_at).below == {}


def test_a_goal_is_held_against_the_fastest_cublas_run(tree):
    """A kernel that beats a slow cuBLAS run beside it still misses a goal
    that cuBLAS's fastest run of that size, in another chapter's process,
    puts out of reach; a faster run beside the kernel itself counts too."""
    repo, results, _ = tree
    path = results / "h200" / "chapters" / "01-test.json"
    content = json.loads(path.read_text())
    mine = {**content["sizes"][0], "M": 512, "N": 512, "K": 512, "gflops": 1100.0,
            "cublas_gflops": 1000.0, "pct_cublas": 110.0}
    content["sizes"] = [mine]
    path.write_text(json.dumps(content))
    other = {**content, "chapter": "02-other",
             "sizes": [{**mine, "gflops": 900.0, "cublas_gflops": 1500.0, "pct_cublas": 60.0}]}
    (results / "h200" / "chapters" / "02-other.json").write_text(json.dumps(other))
    every = [load_chapter_result(results, "h200", slug, repo) for slug in ("01-test", "02-other")]
    fastest = lambda size, field: fastest_cublas_gflops(every, size, field)  # noqa: E731
    goal = goals.parse_goal("90 | Squares | 512")
    assert goals.judge(goal, every[0].timed_at).below == {}
    verdict = goals.judge(goal, every[0].timed_at, fastest)
    assert verdict.below == {(512,) * 3: pytest.approx(100.0 * 1100.0 / 1500.0)}
    assert goals.judge(goal, every[1].timed_at, lambda size, field: 1000.0).measured == {
        (512,) * 3: pytest.approx(60.0)}


def test_a_goal_can_be_held_against_cublas_on_tf32(tree):
    """A goal line's fourth field holds it against cuBLAS TF32's rate (its
    fastest run too); a result without a TF32 rate leaves the size
    unmeasured, and an unknown name is refused."""
    repo, results, _ = tree
    path = results / "h200" / "chapters" / "01-test.json"
    content = json.loads(path.read_text())
    mine = {**content["sizes"][0], "M": 512, "N": 512, "K": 512, "gflops": 1100.0,
            "cublas_gflops": 100.0, "pct_cublas": 1100.0, "cublas_tf32_gflops": 1000.0,
            "pct_cublas_tf32": 110.0}
    plain = {k: v for k, v in mine.items() if "tf32" not in k}
    content["sizes"] = [mine, {**plain, "M": 1024, "N": 1024, "K": 1024}]
    path.write_text(json.dumps(content))
    other = {**content, "chapter": "02-other",
             "sizes": [{**mine, "gflops": 900.0, "cublas_tf32_gflops": 1500.0}]}
    (results / "h200" / "chapters" / "02-other.json").write_text(json.dumps(other))
    every = [load_chapter_result(results, "h200", slug, repo) for slug in ("01-test", "02-other")]
    goal = goals.parse_goal("90 | TF32 | 512 1024 | cuBLAS TF32")
    assert goal.against == "cuBLAS TF32"
    verdict = goals.judge(goal, every[0].timed_at)
    assert verdict.measured == {(512,) * 3: 110.0} and verdict.unmeasured == ((1024,) * 3,)
    fastest = lambda size, field: fastest_cublas_gflops(every, size, field)  # noqa: E731
    assert goals.judge(goal, every[0].timed_at, fastest).below == {
        (512,) * 3: pytest.approx(100.0 * 1100.0 / 1500.0)}
    # Against SGEMM the same entry is far above 90%.
    assert goals.judge(goals.parse_goal("90 | SGEMM | 512"), every[0].timed_at, fastest).below == {}
    assert goals.parse_goal("90 | SGEMM | 512 | cuBLAS SGEMM").against == "cuBLAS SGEMM"
    assert goals.judge(goals.parse_goal("90 | SGEMM | 512 | cuBLAS SGEMM"),
                       every[0].timed_at).measured == {(512,) * 3: 1100.0}
    with pytest.raises(ResultsError):
        goals.parse_goal("90 | TF32 | 512 | cuBLAS FP16")


def test_value_requests_parse():
    request = parse_value_request("01-naive:4096:gflops")
    assert (request.gpu, request.kind, request.slug, request.size, request.key) == (
        "h200", "chapter", "01-naive", (4096, 4096, 4096), "gflops")
    request = parse_value_request("rtx-4090/02-coalescing:4096x2048x1024:pct_cublas")
    assert (request.gpu, request.size) == ("rtx-4090", (4096, 2048, 1024))
    assert parse_value_request("baseline:fma_peak_gflops").kind == "baseline"
    assert parse_value_request("cublas:4096").size == (4096, 4096, 4096)


@pytest.mark.parametrize("spec", [
    "01-naive:4096:gflop",          # unknown key
    "baseline:peak",                # unknown baseline field
    "01-naive:4096",                # no key
    "naive:4096:gflops",            # not a chapter slug
    "01-naive:4096x4096:gflops",    # not a size
])
def test_bad_value_requests_are_errors(spec):
    with pytest.raises(ResultsError):
        parse_value_request(spec)


def test_values_are_formatted_with_units(tree):
    repo, results, kernel = tree
    baseline = {"fma_peak_gflops": 61234.5, "copy_bandwidth_gbs": 4012.0}
    (results / "h200" / "baseline.json").write_text(json.dumps(baseline))

    def value(spec):
        return resolve_value(parse_value_request(spec), results, repo)

    assert value("01-test:4096:gflops").text == "1,000 GFLOP/s"
    assert value("01-test:4096:cublas_gflops").text == "2,000 GFLOP/s"
    assert value("01-test:4096:pct_cublas").text == "50.0%"
    assert value("01-test:4096:time_ms").text == "2.000 ms"
    assert value("01-test:4096:max_rel_err").text == "1.0 \u00d7 10\u207b\u2076"
    assert value("cublas:4096").text == "2,000 GFLOP/s"
    assert value("baseline:fma_peak_gflops").text == "61,234 GFLOP/s"
    assert value("baseline:copy_bandwidth_gbs").text == "4,012 GB/s"
    assert value("01-test:4096:gflops").stale is None
    kernel.write_text("changed\n")
    assert value("01-test:4096:gflops").stale is not None


def test_the_fuzzers_counts_come_from_the_gpu_tests_and_go_stale_with_them(tree):
    repo, results, kernel = tree
    tests = {"inputs": {"chapters/01-test/kernel.cu": sha256_text(kernel.read_text())},
             "fuzz": {"01-test": {"seeds": ["1"], "problems": 21600, "failed": 0,
                                  "scales_from": -123, "scales_to": 123,
                                  "scale_error_ratio": 0.974744761}}}
    (results / "h100").mkdir()
    (results / "h100" / "gpu-tests.json").write_text(json.dumps(tests))

    def value(spec):
        return resolve_value(parse_value_request(spec), results, repo)

    assert value("h100/fuzz:01-test:problems").text == "21,600"
    assert value("h100/fuzz:01-test:failed").text == "0"
    assert value("h100/fuzz:01-test:scales_from").text == "−123"
    assert value("h100/fuzz:01-test:scale_error_ratio").text == "0.97"
    assert value("h100/fuzz:01-test:problems").stale is None
    assert value("fuzz:01-test:problems").text == NOT_MEASURED  # no such file on the h200
    assert value("h100/fuzz:02-other:problems").text == NOT_MEASURED
    with pytest.raises(ResultsError):
        parse_value_request("fuzz:01-test:seeds")
    kernel.write_text("changed\n")
    assert value("h100/fuzz:01-test:problems").stale is not None


def test_the_theoretical_fma_peak_is_derived_from_the_baselines_provenance(tree):
    repo, results, _ = tree
    path = results / "h200" / "baseline.json"

    def value(spec):
        return resolve_value(parse_value_request(spec), results, repo).text

    provenance = {"compute_capability": "9.0", "sm_count": 132, "sm_clock_mhz": 1980}
    path.write_text(json.dumps({"fma_peak_gflops": 64000.0, "provenance": provenance}))
    # 132 SMs x 128 lanes x 2 FLOP x 1.98 GHz = 66,908.16 GFLOP/s.
    assert value("baseline:fma_theoretical_gflops") == "66,908 GFLOP/s"
    assert value("baseline:fma_peak_pct_theoretical") == "95.7%"
    # A GPU whose lanes per SM the table does not know: nothing is guessed.
    path.write_text(json.dumps({"fma_peak_gflops": 1.0,
                                "provenance": {**provenance, "compute_capability": "5.0"}}))
    assert value("baseline:fma_theoretical_gflops") == NOT_MEASURED
    path.write_text(json.dumps({"fma_peak_gflops": 1.0}))
    assert value("baseline:fma_peak_pct_theoretical") == NOT_MEASURED
    with pytest.raises(ResultsError):
        parse_value_request("baseline:fma_theoretical")


def test_the_appendix_lists_every_key():
    appendix = (DOCS / "appendix.md").read_text(encoding="utf-8")
    for key in [*CHAPTER_KEYS, *BASELINE_KEYS]:
        assert f"`{key}`" in appendix or f"baseline:{key}`" in appendix, key


def test_fp64_keys_read_their_own_fields():
    """fp64_, fp64max_ and fp64tol_ read the norm-wise error, the worst
    element and the tolerance of the named method and inputs, not another's."""
    def check(norm, worst, tolerance):
        return {"rel_norm_err": norm, "max_rel_err": worst, "tolerance": tolerance}
    entry = {"fp64_error": {
        "uniform": {"kernel": check(1e-6, 2e-6, 3e-6), "cublas": check(4e-6, 5e-6, 6e-6),
                    "cublas_tf32": check(7e-6, 8e-6, 9e-6)},
        "wide": {"kernel": check(1e-5, 2e-5, 3e-5), "cublas": check(4e-5, 5e-5, 6e-5),
                 "cublas_tf32": check(7e-5, 8e-5, 9e-5)}}}
    for distribution, scale in (("uniform", 1e-6), ("wide", 1e-5)):
        for method, first in (("kernel", 1), ("cublas", 4), ("cublas_tf32", 7)):
            for offset, prefix in enumerate(("fp64", "fp64max", "fp64tol")):
                key = f"{prefix}_{method}_{distribution}"
                assert FP64_ERROR_KEYS[key](entry) == format_error((first + offset) * scale), key


def test_formatting():
    assert format_gflops(12345.6) == "12,346"
    assert format_gflops(987.4) == "987"
    assert format_percent(87.26) == "87.3%"
    assert format_ms(1.23456) == "1.235"
    assert format_ms(512.34) == "512.3"
    assert format_ms(0.051234) == "0.05123"
    assert format_ms(1234.5) == "1234"
    assert format_time_range({"median": 1.2345, "min": 1.2, "max": 1.3}) == (
        "1.234 [1.200\u20131.300]")
    assert format_error(3.14e-6) == "3.1 \u00d7 10\u207b\u2076"
    assert format_error(0) == "0"
    assert format_size((4096, 2048, 1024)) == "4096 \u00d7 2048 \u00d7 1024"
    assert parse_size("256") == (256, 256, 256)


def test_cublas_median_is_over_timed_chapters():
    def result(rate, timed=True):
        entry = {"M": 64, "N": 64, "K": 64, "max_rel_err": 0.0, "correct": True}
        if timed:
            entry["cublas_gflops"] = rate
            entry["time_ms"] = {}
        return ChapterResult("h200", Path("x"), {"sizes": [entry]}, None)

    results = [result(10.0), result(30.0), result(20.0), result(99.0, timed=False)]
    assert median_cublas_gflops(results, (64, 64, 64)) == 20.0
    assert median_cublas_gflops(results, (32, 32, 32)) is None


# -- Whole builds ----------------------------------------------------------------


def build(book_python, tmp_path, results: Path, *extra: str) -> subprocess.CompletedProcess:
    return fixture_site.build_book(book_python, tmp_path, results, *extra, timeout=1200)


html = fixture_site.page_html


def test_book_builds_with_no_results(book_python, tmp_path):
    empty = tmp_path / "results"
    empty.mkdir()
    done = build(book_python, tmp_path, empty)
    assert done.returncode == 0, done.stdout + done.stderr
    # The note names no command; it links to the appendix, which does.
    fixture_site.assert_boxes_link_to_the_appendix(
        html(tmp_path, "chapters/01-naive/chapter.html"), "Not measured yet",
        "how to measure them", "where-numbers-come-from")
    assert NOT_MEASURED in html(tmp_path, "preface.html")
    assert json.loads(html(tmp_path, "ladder-stale.json")) == []


def test_a_stale_result_fails_the_build_when_asked(book_python, tmp_path):
    """Sphinx stops at the first warning: the first stale result is enough."""
    done = build(book_python, tmp_path, fixture_site.fixture_results(tmp_path / "results"),
                 "--fail-on-stale", "--stop-at-first-warning")
    assert done.returncode != 0
    assert "stale result" in done.stdout + done.stderr


def test_an_unknown_key_fails_a_strict_build(book_python, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        "extensions = ['myst_parser', 'ladder_tools.sphinx.ladder_results']\n"
        f"ladder_repo_root = {str(ROOT)!r}\n")
    (source / "index.md").write_text("# Test\n\n{ladder}`01-naive:4096:speed`\n")
    done = subprocess.run(
        [book_python, "-m", "sphinx", "-E", "-W", "-q", "--no-color", "-b", "html",
         str(source), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, LADDER_RESULTS_DIR=str(tmp_path / "no-results")),
    )
    assert done.returncode != 0
    assert "unknown key 'speed'" in done.stderr
