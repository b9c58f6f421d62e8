"""The book's measured numbers: finding, checking and formatting them.

Everything here is a plain function of files and values, with no Sphinx in
it, so that the tests can call it directly. ``ladder_results.py`` turns what
these functions return into tables, figures and inline text.

The measure command writes, for every GPU it ran on (see
docs/results-schema.md)::

    results/<gpu>/chapters/<slug>.json   one chapter's sizes, times, errors
    results/<gpu>/baseline.json          the FP32 FMA peak, the copy bandwidth

A result is *stale* when a file it was built from has changed since it was
measured: the numbers belong to other code. What a result was built from, and
the test, live in code/ladder_tools/provenance.py, shared with the measure
and sweep commands that record it.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "code"))
from ladder_tools import provenance as provenance_tools  # noqa: E402

#: The GPU the book is written against; it comes first wherever GPUs are listed.
REFERENCE_GPU = "h200"
#: Environment variable that points the book at another results folder (tests).
RESULTS_DIR_VARIABLE = "LADDER_RESULTS_DIR"
#: The results schema this code reads.
SCHEMA_VERSION = 1
#: The size every chapter is compared at.
HEADLINE_SIZE = (4096, 4096, 4096)
#: What an inline value says when nothing was measured.
NOT_MEASURED = "(not measured)"


class ResultsError(ValueError):
    """A results file, or a request for a value, that the book cannot use."""


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
_SIZE_FIELDS = {"M": int, "N": int, "K": int, "max_rel_err": _NUMBER, "correct": bool}
_TIMED_FIELDS = {"time_ms": dict, "cublas_time_ms": dict, "gflops": _NUMBER,
                 "cublas_gflops": _NUMBER, "pct_cublas": _NUMBER}


def is_timed(entry: dict) -> bool:
    """Whether a size of a chapter result was timed."""
    return "time_ms" in entry


def _has_type(value, kind) -> bool:
    """isinstance, except that true and false are not numbers."""
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, kind)


def _check_size(entry, where: str) -> list[str]:
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
        if not isinstance(provenance.get("inputs"), dict):
            problems.append("provenance.inputs is missing")
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

    def at(self, size: tuple[int, int, int]) -> dict | None:
        """The measurement at one M x N x K, or None if that size was not run."""
        for entry in self.data["sizes"]:
            if (entry["M"], entry["N"], entry["K"]) == tuple(size):
                return entry
        return None


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


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------


def format_gflops(value: float) -> str:
    """A rate with thousands separators and no decimals: 12,345."""
    return f"{round(value):,}"


def format_percent(value: float) -> str:
    """A share with one decimal: 87.3%."""
    return f"{value:.1f}%"


def time_decimals(value: float) -> int:
    """Decimals that give a time four significant digits (at least none)."""
    if value <= 0 or not math.isfinite(value):
        return 3
    return max(0, 3 - math.floor(math.log10(value)))


def format_ms(value: float, decimals: int | None = None) -> str:
    """A time in milliseconds to four significant digits: 1.234, 512.3."""
    return f"{value:.{time_decimals(value) if decimals is None else decimals}f}"


def format_time_range(times: dict) -> str:
    """The median with its spread, all to the median's precision: 1.234 [1.230–1.240]."""
    decimals = time_decimals(times["median"])
    low, mid, high = (format_ms(times[key], decimals) for key in ("min", "median", "max"))
    return f"{mid} [{low}\u2013{high}]"


_SUPERSCRIPT = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def format_error(value: float) -> str:
    """A relative error in scientific notation: 3.1 × 10⁻⁶."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def format_size(size: tuple[int, int, int]) -> str:
    """An M x N x K problem size: 4096 × 4096 × 4096."""
    return " \u00d7 ".join(str(dimension) for dimension in size)


def parse_size(text: str) -> tuple[int, int, int]:
    """'4096' (square) or '4096x2048x1024' (M x N x K) as (M, N, K)."""
    if re.fullmatch(r"\d+", text):
        return (int(text),) * 3
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not match:
        raise ResultsError(f"size {text!r} is neither N nor MxNxK")
    return tuple(int(group) for group in match.groups())


def provenance_line(result: ChapterResult) -> str:
    """GPU, versions, date and commit of one measurement, for under its table."""
    p = result.provenance
    parts = [p["gpu"]]
    for label, field in (("CUDA", "cuda_runtime"), ("cuBLAS", "cublas"), ("driver", "driver")):
        if p.get(field):
            parts.append(f"{label} {p[field]}")
    if p.get("date"):
        parts.append(f"measured {p['date'][:10]}")
    if p.get("git_commit"):
        parts.append(f"commit {p['git_commit']}")
    return " \u00b7 ".join(parts)


# --------------------------------------------------------------------------
# Single values for inline text: {ladder}`[gpu/]slug:size:key`
# --------------------------------------------------------------------------

#: The values of one chapter at one size that a page may quote.
CHAPTER_KEYS = {
    "time_ms": lambda e: f"{format_ms(e['time_ms']['median'])} ms",
    "cublas_time_ms": lambda e: f"{format_ms(e['cublas_time_ms']['median'])} ms",
    "gflops": lambda e: f"{format_gflops(e['gflops'])} GFLOP/s",
    "cublas_gflops": lambda e: f"{format_gflops(e['cublas_gflops'])} GFLOP/s",
    "pct_cublas": lambda e: format_percent(e["pct_cublas"]),
    "max_rel_err": lambda e: format_error(e["max_rel_err"]),
    "rel_norm_err": lambda e: format_error(e["rel_norm_err"]),
    "correct": lambda e: "correct" if e["correct"] else "incorrect",
}

#: Values of one chapter at one size read against the GPU's measured FMA
#: peak (baseline.json): the share of the arithmetic ceiling reached.
PEAK_KEYS = {
    "pct_peak": "gflops",
    "cublas_pct_peak": "cublas_gflops",
}

#: The fields of baseline.json that a page may quote, with their units.
BASELINE_KEYS = {
    "fma_peak_gflops": lambda v: f"{format_gflops(v)} GFLOP/s",
    "copy_bandwidth_gbs": lambda v: f"{format_gflops(v)} GB/s",
}


#: The two floors of an M x N x K SGEMM on a GPU, from its baseline.json:
#: 2MNK operations at the FMA peak, and the fewest bytes (A and B read once,
#: C written once) at the copy bandwidth.
FLOOR_KEYS = {
    "fma_ms": lambda m, n, k, b: 2.0 * m * n * k / (b["fma_peak_gflops"] * 1e9) * 1e3,
    "memory_ms": lambda m, n, k, b: 4.0 * (m * k + k * n + m * n)
    / (b["copy_bandwidth_gbs"] * 1e9) * 1e3,
}


@dataclass(frozen=True)
class ValueRequest:
    """A parsed {ladder} reference.

    ``kind`` is "chapter" (slug, size and key set), "baseline" (key set) or
    "cublas" (size set: cuBLAS GFLOP/s at that size, the median over every
    chapter measured on the GPU, the same line the ladder figure draws)."""

    gpu: str
    kind: str
    slug: str | None = None
    size: tuple[int, int, int] | None = None
    key: str | None = None


def parse_value_request(text: str) -> ValueRequest:
    """Parse '[gpu/]slug:size:key', '[gpu/]baseline:field' or '[gpu/]cublas:size'."""
    gpu, _, rest = text.strip().rpartition("/")
    gpu = gpu or REFERENCE_GPU
    parts = rest.split(":")
    if parts[0] == "baseline" and len(parts) == 2:
        if parts[1] not in BASELINE_KEYS:
            raise ResultsError(
                f"unknown baseline field {parts[1]!r}; known: {', '.join(BASELINE_KEYS)}"
            )
        return ValueRequest(gpu, "baseline", key=parts[1])
    if parts[0] == "floor" and len(parts) == 3:
        if parts[2] not in FLOOR_KEYS:
            raise ResultsError(f"unknown floor {parts[2]!r}; known: {', '.join(FLOOR_KEYS)}")
        return ValueRequest(gpu, "floor", size=parse_size(parts[1]), key=parts[2])
    if parts[0] == "cublas" and len(parts) == 2:
        return ValueRequest(gpu, "cublas", size=parse_size(parts[1]))
    if len(parts) != 3 or not re.fullmatch(r"\d\d-[a-z0-9-]+", parts[0]):
        raise ResultsError(
            f"{text!r} is not '[gpu/]NN-slug:size:key', '[gpu/]baseline:field' "
            "or '[gpu/]cublas:size'"
        )
    slug, size, key = parts
    if key not in CHAPTER_KEYS and key not in PEAK_KEYS:
        known = ", ".join([*CHAPTER_KEYS, *PEAK_KEYS])
        raise ResultsError(f"unknown key {key!r}; known: {known}")
    return ValueRequest(gpu, "chapter", slug=slug, size=parse_size(size), key=key)


def median_cublas_gflops(
    results: list[ChapterResult], size: tuple[int, int, int]
) -> float | None:
    """cuBLAS GFLOP/s at ``size``, the median over the chapters that ran it."""
    entries = (result.at(size) for result in results)
    rates = [entry["cublas_gflops"] for entry in entries if entry and is_timed(entry)]
    return statistics.median(rates) if rates else None


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


@dataclass(frozen=True)
class Value:
    """A formatted value for the page and the result it came from, if any."""

    text: str
    source: ChapterResult | None = None

    @property
    def stale(self) -> str | None:
        return self.source.stale if self.source else None


def resolve_value(
    request: ValueRequest, root: str | os.PathLike, repo_root: str | os.PathLike
) -> Value:
    """The formatted value a request names; NOT_MEASURED when there is none."""
    if request.kind == "baseline":
        baseline = load_baseline(root, request.gpu)
        value = baseline.get(request.key) if baseline else None
        if not isinstance(value, (int, float)):
            return Value(NOT_MEASURED)
        return Value(BASELINE_KEYS[request.key](value))
    if request.kind == "floor":
        baseline = load_baseline(root, request.gpu)
        try:
            ms = FLOOR_KEYS[request.key](*request.size, baseline)
        except (TypeError, KeyError):
            return Value(NOT_MEASURED)
        return Value(f"{format_ms(ms)} ms")
    if request.kind == "cublas":
        rate = median_cublas_gflops(
            gpu_chapter_results(root, request.gpu, repo_root), request.size
        )
        return Value(NOT_MEASURED if rate is None else f"{format_gflops(rate)} GFLOP/s")
    result = load_chapter_result(root, request.gpu, request.slug, repo_root)
    entry = result.at(request.size) if result else None
    if entry is None:
        return Value(NOT_MEASURED)
    if request.key in PEAK_KEYS:
        baseline = load_baseline(root, request.gpu)
        peak = baseline.get("fma_peak_gflops") if baseline else None
        rate = entry.get(PEAK_KEYS[request.key])
        if not isinstance(peak, (int, float)) or not isinstance(rate, (int, float)):
            return Value(NOT_MEASURED, result)
        return Value(format_percent(100.0 * rate / peak) + " of the FMA peak", result)
    if request.key not in entry:
        return Value(NOT_MEASURED, result)
    return Value(CHAPTER_KEYS[request.key](entry), result)
