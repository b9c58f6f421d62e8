"""The measured results: finding, reading and checking them.

Plain functions of files and values, for the book (code/ladder_tools/sphinx), the figures
(code/ladder_tools/figures/) and the tests. The measure command writes, for every GPU it ran
on (see docs/results-schema.md)::

    results/<gpu>/chapters/<slug>.json   one chapter's sizes, times, errors
    results/<gpu>/baseline.json          the FP32 FMA peak, the copy bandwidth
    results/<gpu>/ncu.json, issue.json   one entry per chapter (load_chapters_file)
    results/<gpu>/random.json            the final kernels on random problems
                                         (load_random_result)

A result is *stale* when a file it was built from has changed since it was
measured: the numbers belong to other code. What a result was built from, and
the test, live in ladder_tools.provenance, shared with the measure and sweep
commands that record it. The checks a run must pass before it is written
are in ladder_tools.results.results_check.
"""

from __future__ import annotations

import json
import os
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from ladder_tools import provenance as provenance_tools
from ladder_tools.errors import ResultsError as ResultsError  # raised here, named here too
from ladder_tools.results import goals, random_problems

#: The GPU the book is written against; it comes first wherever GPUs are listed.
REFERENCE_GPU = "h200"
#: Seconds the measure command gives each size of a chapter: a size whose
#: 7 x 5 timed launches (and cuBLAS's) would take longer is not timed, and its
#: results file says so ("timing skipped", with the budget as config.budget_s).
TIME_BUDGET_S = 20
#: Environment variable that points the book at another results folder (tests).
RESULTS_DIR_VARIABLE = "LADDER_RESULTS_DIR"
#: The results schema this code reads.
SCHEMA_VERSION = 1
#: The size every chapter is compared at.
HEADLINE_SIZE = (4096, 4096, 4096)



# --------------------------------------------------------------------------
# Finding and reading results
# --------------------------------------------------------------------------


def results_root(repo_root: str | os.PathLike) -> Path:
    """The results folder: $LADDER_RESULTS_DIR when set, else <repo>/results."""
    override = os.environ.get(RESULTS_DIR_VARIABLE)
    return Path(override) if override else Path(repo_root) / "results"


def gpu_folders(root: str | os.PathLike) -> list[str]:
    """The GPU folders under ``root``: the reference GPU first, then by name."""
    root = Path(root)
    if not root.is_dir():
        return []
    names = sorted(
        entry.name
        for entry in root.iterdir()
        if entry.is_dir() and not entry.name.startswith((".", "_"))
    )
    return sorted(names, key=lambda name: name != REFERENCE_GPU)


def chapter_slugs(repo_root: str | os.PathLike) -> list[str]:
    """The chapters in the tree, in order: folders chapters/NN-slug/ that hold
    a kernel file or a chapter page."""
    chapters = Path(repo_root) / "chapters"
    if not chapters.is_dir():
        return []
    return sorted(
        entry.name
        for entry in chapters.iterdir()
        if re.fullmatch(r"\d\d-[a-z0-9-]+", entry.name)
        and ((entry / "kernel.cu").is_file() or (entry / "chapter.md").is_file())
    )


def read_json(path: Path) -> dict:
    """The JSON object in ``path``; a file that is not one is an error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ResultsError(f"{path}: cannot read it as JSON: {error}") from error
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: holds a JSON {type(data).__name__}, not an object")
    return data


_NUMBER = (int, float)
#: Fields every size has, and the fields a timed size has besides (a size can
#: be checked without being timed: --check-only, or over the time budget).
FieldType = type | tuple[type, ...]
_SIZE_FIELDS: dict[str, FieldType] = {"M": int, "N": int, "K": int, "max_rel_err": _NUMBER,
                                      "correct": bool}
_TIMED_FIELDS: dict[str, FieldType] = {"time_ms": dict, "cublas_time_ms": dict, "gflops": _NUMBER,
                                       "cublas_gflops": _NUMBER, "pct_cublas": _NUMBER}


def is_timed(entry: dict) -> bool:
    """Whether a size of a chapter result was timed."""
    return "time_ms" in entry


def _has_type(value: object, kind: FieldType) -> bool:
    """isinstance, except that true and false are not numbers."""
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, kind)


def _check_size(entry: object, where: str) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where} is not an object"]
    wanted = {**_SIZE_FIELDS, **(_TIMED_FIELDS if is_timed(entry) else {})}
    problems = [f"{where}.{field} is missing or of the wrong type"
                for field, kind in wanted.items() if not _has_type(entry.get(field), kind)]
    for field in ("time_ms", "cublas_time_ms"):
        times = entry.get(field)
        if is_timed(entry) and isinstance(times, dict) and not all(
            isinstance(times.get(key), _NUMBER) for key in ("median", "min", "max")
        ):
            problems.append(f"{where}.{field} needs median, min and max")
    return problems


def check_chapter_result(data: dict, slug: str) -> list[str]:
    """What is wrong with a chapter result, one sentence each; empty if usable."""
    problems = []
    if data.get("schema") != SCHEMA_VERSION:
        problems.append(f"schema is {data.get('schema')!r}, this book reads {SCHEMA_VERSION}")
    if data.get("chapter") != slug:
        problems.append(f"chapter is {data.get('chapter')!r}, expected {slug!r}")
    provenance = data.get("provenance")
    if not isinstance(provenance, dict):
        problems.append("provenance is missing")
    else:
        for field in ("gpu", "source"):
            if not isinstance(provenance.get(field), str):
                problems.append(f"provenance.{field} is missing")
    sizes = data.get("sizes")
    if not isinstance(sizes, list) or not sizes:
        problems.append("sizes is missing or empty")
        return problems
    for index, entry in enumerate(sizes):
        problems += _check_size(entry, f"sizes[{index}]")
    return problems


def staleness(provenance: dict, repo_root: str | os.PathLike) -> str | None:
    """Why a result no longer matches the tree, or None when it still does
    (see ladder_tools.provenance)."""
    return provenance_tools.staleness(provenance, Path(repo_root))


@dataclass(frozen=True)
class ChapterResult:
    """One chapter measured on one GPU."""

    gpu: str  #: the GPU's folder name under results/, e.g. "h200"
    path: Path  #: the JSON file it came from
    data: dict  #: the file's content, checked by check_chapter_result
    stale: str | None  #: why it is stale, None when it matches the tree

    @property
    def provenance(self) -> dict:
        return self.data["provenance"]

    @property
    def title(self) -> str:
        return self.data.get("title") or self.data["chapter"]

    @property
    def label(self) -> str:
        """How a caption names the result: its chapter number and its title
        (15 · 3xTF32 on mma.sync), never its file's slug."""
        return f"{self.data['chapter'][:2]} \u00b7 {self.title}"

    def at(self, size: tuple[int, int, int]) -> dict | None:
        """The measurement at one M x N x K, or None if that size was not run."""
        for entry in self.data["sizes"]:
            if (entry["M"], entry["N"], entry["K"]) == tuple(size):
                return entry
        return None

    def timed_at(self, size: tuple[int, int, int]) -> dict | None:
        """The measurement at one M x N x K if that size was timed, else None."""
        entry = self.at(size)
        return entry if entry is not None and is_timed(entry) else None


def chapter_result_path(root: str | os.PathLike, gpu: str, slug: str) -> Path:
    return Path(root) / gpu / "chapters" / f"{slug}.json"


def load_chapter_result(
    root: str | os.PathLike, gpu: str, slug: str, repo_root: str | os.PathLike
) -> ChapterResult | None:
    """One GPU's result for one chapter; None when it has none."""
    path = chapter_result_path(root, gpu, slug)
    if not path.is_file():
        return None
    data = read_json(path)
    problems = check_chapter_result(data, slug)
    if problems:
        raise ResultsError(f"{path}: " + "; ".join(problems))
    return ChapterResult(gpu, path, data, staleness(data["provenance"], repo_root))


def load_chapter_results(
    root: str | os.PathLike, slug: str, repo_root: str | os.PathLike
) -> list[ChapterResult]:
    """Every GPU's result for one chapter, the reference GPU first."""
    found = (load_chapter_result(root, gpu, slug, repo_root) for gpu in gpu_folders(root))
    return [result for result in found if result is not None]


def baseline_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / "baseline.json"


def load_baseline(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's baseline.json, or None when it has none."""
    path = baseline_path(root, gpu)
    return read_json(path) if path.is_file() else None


def gpu_chapter_results(
    root: str | os.PathLike, gpu: str, repo_root: str | os.PathLike
) -> list[ChapterResult]:
    """Every chapter result of one GPU, in chapter order."""
    folder = Path(root) / gpu / "chapters"
    if not folder.is_dir():
        return []
    slugs = sorted(path.stem for path in folder.glob("*.json"))
    found = (load_chapter_result(root, gpu, slug, repo_root) for slug in slugs)
    return [result for result in found if result is not None]


def median_cublas_gflops(
    results: list[ChapterResult], size: tuple[int, int, int]
) -> float | None:
    """cuBLAS GFLOP/s at ``size``, the median over the chapters that ran it."""
    entries = (result.at(size) for result in results)
    rates = [entry["cublas_gflops"] for entry in entries if entry and is_timed(entry)]
    return statistics.median(rates) if rates else None


def fastest_cublas_gflops(
    results: list[ChapterResult], size: tuple[int, int, int], field: str = "cublas_gflops"
) -> float | None:
    """cuBLAS GFLOP/s at ``size`` (``field``: cuBLAS's SGEMM, or
    ``cublas_tf32_gflops``), the fastest of the chapters' runs of it.
    At small sizes cuBLAS's time varies from process to process far more than
    a chapter's kernel does; a goal held against this rate cannot be met by a
    slow cuBLAS run."""
    entries = (result.at(size) for result in results)
    rates = [entry[field] for entry in entries if entry and is_timed(entry) and field in entry]
    return max(rates) if rates else None


def provenance_line(result: ChapterResult | RandomResult) -> str:
    """What a reader needs under a chapter's table: the GPU, the CUDA,
    cuBLAS and driver versions, and the date measured. The commit and the
    hashes of the inputs stay in the results file (see the appendix)."""
    p = result.provenance
    parts = [p["gpu"]]
    for label, field in (("CUDA", "cuda_runtime"), ("cuBLAS", "cublas"), ("driver", "driver")):
        if p.get(field):
            parts.append(f"{label} {p[field]}")
    if p.get("date"):
        parts.append(f"measured {p['date'][:10]}")
    return " \u00b7 ".join(parts)


def load_chapters_file(path: Path) -> dict | None:
    """A results file of per-chapter entries written by the measure command
    (ncu.json, issue.json), or None when there is none."""
    if not path.is_file():
        return None
    content = read_json(path)
    if not isinstance(content.get("chapters", {}), dict):
        raise ResultsError(f"{path}: chapters is not an object")
    return content


# --------------------------------------------------------------------------
# The random problems (results/<gpu>/random.json, ladder_tools.results.random_problems)
# --------------------------------------------------------------------------


def random_result_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / "random.json"


def _check_problem(problem: object, where: str) -> list[str]:
    if not isinstance(problem, dict):
        return [f"{where} is not an object"]
    return [f"{where}.{field} is missing or not a positive whole number"
            for field in ("M", "N", "K")
            if not (_has_type(problem.get(field), int) and problem[field] > 0)]


def check_random_result(data: dict) -> list[str]:
    """What is wrong with a random.json, one sentence each; empty if usable:
    the schema, the seed, the problems, and for each of the three final
    chapters (random_problems.RANDOM_CHAPTERS) its goal and one checked size
    per problem, in the problems' order, each timed one with the % of the
    cuBLAS its goal is held against."""
    problems = []
    if data.get("schema") != SCHEMA_VERSION:
        problems.append(f"schema is {data.get('schema')!r}, this book reads {SCHEMA_VERSION}")
    if not (_has_type(data.get("seed"), int) and data["seed"] >= 0):
        problems.append("seed is missing or not a whole number")
    for field in ("gpu", "date"):
        if not isinstance(data.get(field), str):
            problems.append(f"{field} is missing")
    inputs = data.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        problems.append("inputs is missing or empty")
    drawn = data.get("problems")
    if not isinstance(drawn, list) or not drawn:
        return problems + ["problems is missing or empty"]
    for index, problem in enumerate(drawn):
        problems += _check_problem(problem, f"problems[{index}]")
    if problems:
        return problems
    wanted = [(p["M"], p["N"], p["K"]) for p in drawn]
    chapters = data.get("chapters")
    if not isinstance(chapters, dict):
        return problems + ["chapters is missing or not an object"]
    for slug in random_problems.RANDOM_CHAPTERS:
        entry = chapters.get(slug)
        where = f"chapters.{slug}"
        if not isinstance(entry, dict):
            problems.append(f"{where} is missing")
            continue
        goal = entry.get("goal")
        if not (isinstance(goal, dict) and _has_type(goal.get("percent"), _NUMBER)
                and goal.get("against") in goals.AGAINST):
            problems.append(f"{where}.goal needs a percent and what it is against "
                            f"({', '.join(goals.AGAINST)})")
            continue
        if not isinstance(entry.get("provenance"), dict):
            problems.append(f"{where}.provenance is missing")
        sizes = entry.get("sizes")
        if not isinstance(sizes, list):
            problems.append(f"{where}.sizes is missing")
            continue
        found = []
        for index, size in enumerate(sizes):
            problems += _check_size(size, f"{where}.sizes[{index}]")
            if isinstance(size, dict):
                found.append((size.get("M"), size.get("N"), size.get("K")))
        if found != wanted:
            problems.append(f"{where}.sizes are not the problems, one each in order")
            continue
        field = random_problems.RandomGoal(goal["percent"], goal["against"]).field
        problems += [f"{where}.sizes[{index}].{field} is missing"
                     for index, size in enumerate(sizes)
                     if is_timed(size) and not _has_type(size.get(field), _NUMBER)]
    return problems


@dataclass(frozen=True)
class RandomVerdict:
    """One final chapter's goal on a GPU's random problems."""

    slug: str
    percent: float  #: the goal: at least this % ...
    against: str  #: ... of this cuBLAS (a key of ladder_tools.results.goals.AGAINST)
    met: int  #: problems timed, correct and at or over the goal
    misses: tuple  #: ((M, N, K), % or None, why) for every other problem
    total: int  #: how many problems were drawn


@dataclass(frozen=True)
class RandomResult:
    """One GPU's random.json, checked by check_random_result."""

    gpu: str  #: the GPU's folder name under results/
    path: Path
    data: dict
    stale: str | None  #: why it is stale (any of the three chapters' inputs changed)

    @property
    def seed(self) -> int:
        return self.data["seed"]

    @property
    def problems(self) -> list[tuple[int, int, int]]:
        return [(p["M"], p["N"], p["K"]) for p in self.data["problems"]]

    def verdict(self, slug: str) -> RandomVerdict:
        """How chapter `slug` did against its goal on every problem: a
        problem meets it when it was timed, is correct and reaches the goal's
        % of its cuBLAS; every other one is a miss, with its % (None when
        not timed) and why."""
        from ladder_tools.results import random_problems

        entry = self.data["chapters"][slug]
        goal = random_problems.RandomGoal(entry["goal"]["percent"], entry["goal"]["against"])
        met, misses = 0, []
        for size in entry["sizes"]:
            dims = (size["M"], size["N"], size["K"])
            pct = size.get(goal.field) if is_timed(size) else None
            if not size["correct"]:
                misses.append((dims, pct, "not correct"))
            elif pct is None:
                misses.append((dims, None, "not timed"))
            elif pct < goal.percent:
                misses.append((dims, pct, "below the goal"))
            else:
                met += 1
        return RandomVerdict(slug, goal.percent, goal.against, met, tuple(misses),
                             len(entry["sizes"]))

    @property
    def provenance(self) -> dict:
        """The provenance of the first chapter's run (the GPU, the versions)."""
        first = next(iter(self.data["chapters"].values()))
        return {**first.get("provenance", {}), "gpu": self.data["gpu"],
                "date": self.data["date"]}


def load_random_result(
    root: str | os.PathLike, gpu: str, repo_root: str | os.PathLike
) -> RandomResult | None:
    """One GPU's random.json, checked; None when it has none."""
    path = random_result_path(root, gpu)
    if not path.is_file():
        return None
    data = read_json(path)
    problems = check_random_result(data)
    if problems:
        raise ResultsError(f"{path}: " + "; ".join(problems))
    return RandomResult(gpu, path, data, staleness({"inputs": data["inputs"]}, repo_root))


def load_random_results(
    root: str | os.PathLike, repo_root: str | os.PathLike
) -> list[RandomResult]:
    """Every GPU's random.json, the reference GPU first."""
    found = (load_random_result(root, gpu, repo_root) for gpu in gpu_folders(root))
    return [result for result in found if result is not None]
