"""What a results folder must show before it is written or committed.

One set of checks, used twice: code/measure.py runs them on a run's results
(in memory and in its staging folder) and refuses to write results/<gpu>/
when any fails; tests/python/test_results.py runs them on every committed
results/<gpu>/ folder. Each check returns a list of problems, one line each,
empty when there is none.

- every chapter binary has a result (the binaries are those the built
  chapters describe: each chapter's own and its variants, the slugs of its
  --describe, ladder_tools.analysis.binaries.declared_binaries);
- every measured size is correct;
- gflops, cublas_gflops and pct_cublas follow from the recorded median times
  (docs/results-schema.md);
- the GPU tests' summary shows none failed or skipped;
- every sanitizer verdict is clean, and every chapter binary has one from
  every tool;
- the random problems' file (random.json), where there is one, is one the
  book can read (results.check_random_result), and each of its final
  kernels is correct on every problem, with numbers that follow from its
  times, as a chapter's sizes are.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ladder_tools.results import check_random_result, read_json

SANITIZER_TOOLS = ["memcheck", "racecheck", "synccheck"]

# The harness writes every number with printf's %.9g (code/include/ladder/
# json.hpp), which rounds it by at most half a unit in its 9th significant
# digit: a relative error of at most 5e-9. A recomputed ratio such as
# pct_cublas = 100 * cublas median / median meets three rounded numbers (two
# times and the recorded value), so it differs from the recorded one by at
# most about 1.5e-8; the tolerance leaves a little room over that and none
# for a real disagreement (the smallest a wrong formula or a value copied
# from another size would give is far larger).
ROUNDING = 0.5e-8
REL_TOL = 4 * ROUNDING

def load_folder(folder: Path) -> dict:
    """A results/<gpu>/ folder in memory: {"chapters": {name: result},
    "gpu_tests": ..., "sanitizer": ...}; a file that is not there is None."""
    def read(name: str) -> Any:
        path = folder / name
        return read_json(path) if path.exists() else None
    chapters = {path.stem: read_json(path)
                for path in sorted((folder / "chapters").glob("*.json"))}
    return {"chapters": chapters, "gpu_tests": read("gpu-tests.json"),
            "sanitizer": read("sanitizer.json"), "random": read("random.json")}


def missing_results(chapters: dict, expected: list[str]) -> list[str]:
    """A binary in `expected` with no result, or a result not named after the
    chapter it records."""
    problems = [f"{name}: no result (chapters/{name}.json)"
                for name in expected if name not in chapters]
    problems += [f"{name}: the file records chapter {result.get('chapter')!r}"
                 for name, result in chapters.items() if result.get("chapter") != name]
    return problems


def _size(entry: dict) -> str:
    return f"{entry.get('M')} x {entry.get('N')} x {entry.get('K')}"


def incorrect_sizes(chapters: dict) -> list[str]:
    """Every size of every result must say correct: true (and a result must
    have sizes)."""
    problems = []
    for name, result in chapters.items():
        sizes = result.get("sizes") or []
        if not sizes:
            problems.append(f"{name}: no sizes")
        problems += [f"{name}: {_size(s)} is not correct (max_rel_err {s.get('max_rel_err')}, "
                     f"tolerance {s.get('tolerance')})"
                     for s in sizes if s.get("correct") is not True]
    return problems


def _differs(recorded: object, recomputed: float, rel_tol: float) -> bool:
    if not isinstance(recorded, (int, float)):
        return True
    return abs(recorded - recomputed) > rel_tol * abs(recomputed)


def identity_errors(chapters: dict, rel_tol: float = REL_TOL) -> list[str]:
    """gflops = 2*M*N*K / median time / 1e9 (the same for cuBLAS), and
    pct_cublas = 100 * cuBLAS's median / the median, within rel_tol (and in
    Part II the same for cuBLAS on TF32). A size
    whose timing was skipped (timing_skipped) has none of these to check."""
    problems = []
    for name, result in chapters.items():
        for s in result.get("sizes") or []:
            if "timing_skipped" in s and "time_ms" not in s:
                continue
            try:
                flops = 2.0 * s["M"] * s["N"] * s["K"]
                median = s["time_ms"]["median"]
                cublas = s["cublas_time_ms"]["median"]
                expected = {"gflops": flops / (median * 1e-3) / 1e9,
                            "cublas_gflops": flops / (cublas * 1e-3) / 1e9,
                            "pct_cublas": 100.0 * cublas / median}
                if "cublas_tf32_time_ms" in s:  # Part II: cuBLAS on TF32 too
                    tf32 = s["cublas_tf32_time_ms"]["median"]
                    expected["cublas_tf32_gflops"] = flops / (tf32 * 1e-3) / 1e9
                    expected["pct_cublas_tf32"] = 100.0 * tf32 / median
            except (KeyError, TypeError, ZeroDivisionError) as error:
                problems.append(f"{name}: {_size(s)} has no usable times ({error!r})")
                continue
            for key, value in expected.items():
                if _differs(s.get(key), value, rel_tol):
                    problems.append(f"{name}: {_size(s)} records {key} {s.get(key)}, "
                                    f"its times give {value:.9g}")
    return problems


def gpu_test_failures(gpu_tests: dict | None) -> list[str]:
    """The GPU tests' summary (gpu-tests.json, or the same dict in memory)
    must show that ctest exited 0, that none failed and none was skipped,
    and that 100% passed."""
    if gpu_tests is None:
        return ["no GPU test summary (gpu-tests.json)"]
    problems = []
    if gpu_tests.get("returncode") != 0:
        problems.append(f"ctest -L gpu exited with {gpu_tests.get('returncode')}")
    if gpu_tests.get("failed"):
        problems.append(f"GPU tests failed: {'; '.join(gpu_tests['failed'])}")
    if gpu_tests.get("skipped"):
        problems.append(f"GPU tests skipped: {'; '.join(gpu_tests['skipped'])}")
    summary = gpu_tests.get("summary", "")
    if not re.match(r"100% tests passed\b", summary):
        problems.append(f"the GPU tests' summary is {summary!r}, not 100% passed")
    # The differential fuzzer's runs, where the summary records them: each
    # chapter's tried problems, and none failed.
    for chapter, run in gpu_tests.get("fuzz", {}).items():
        if not run.get("problems") or not run.get("seeds"):
            problems.append(f"the fuzzer of {chapter} records no problems or no seeds")
        if run.get("failed") != 0:
            problems.append(f"the fuzzer of {chapter} records {run.get('failed')} failed problems")
    return problems


def unclean_sanitizers(sanitizer: dict | None, expected: list[str]) -> list[str]:
    """Every verdict in sanitizer.json (or its "chapters" dict in memory)
    must be clean, and every binary in `expected` must have one from every
    tool."""
    if sanitizer is None:
        return ["no sanitizer verdicts (sanitizer.json)"] if expected else []
    entries = sanitizer.get("chapters", sanitizer)
    problems = []
    for name in expected:
        tools = entries.get(name, {})
        problems += [f"{name}: no {tool} verdict" for tool in SANITIZER_TOOLS
                     if tool not in tools]
    for name, tools in entries.items():
        for tool, verdict in tools.items():
            if tool in SANITIZER_TOOLS and not (isinstance(verdict, dict)
                                                and verdict.get("clean") is True):
                tail = " / ".join(verdict.get("tail", [])) if isinstance(verdict, dict) else ""
                problems.append(f"{name}: {tool} is not clean ({tail})")
    return problems


def random_problems(random: dict | None) -> list[str]:
    """A random.json (or the same dict in memory), where there is one: the
    reader's checks (results.check_random_result), then, for each final
    kernel's run, incorrect_sizes and identity_errors, named "random
    <chapter>"."""
    if random is None:
        return []
    problems = [f"random.json: {p}" for p in check_random_result(random)]
    if problems:
        return problems
    runs = {f"random {slug}": entry for slug, entry in random["chapters"].items()}
    return incorrect_sizes(runs) + identity_errors(runs)


def folder_problems(folder: Path, expected: list[str]) -> list[str]:
    """Every check on one results/<gpu>/ folder."""
    data = load_folder(folder)
    return (missing_results(data["chapters"], expected)
            + incorrect_sizes(data["chapters"])
            + identity_errors(data["chapters"])
            + gpu_test_failures(data["gpu_tests"])
            + unclean_sanitizers(data["sanitizer"], expected)
            + random_problems(data["random"]))
