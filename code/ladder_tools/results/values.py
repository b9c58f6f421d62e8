"""Single values for a page's text: the {ladder} role's requests.

A page quotes a measured number inline as ``[gpu/]slug:size:key`` (one
chapter at one size), ``[gpu/]baseline:field`` (the GPU's ceilings, and the
theoretical FMA peak derived from its SM count and clock),
``[gpu/]floor:size:key`` (the time a size cannot beat) or
``[gpu/]cublas:size``; this module parses such a request and resolves it
to the formatted text, and to the result it came from (to mark it stale).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ladder_tools import provenance
from ladder_tools.formatting import (
    format_count,
    format_error,
    format_gflops,
    format_ms,
    format_percent,
    format_ratio,
    parse_size,
)
from ladder_tools.results import (
    REFERENCE_GPU,
    ChapterResult,
    ResultsError,
    gpu_chapter_results,
    load_baseline,
    load_chapter_result,
    median_cublas_gflops,
    read_json,
)

#: What an inline value says when nothing was measured.
NOT_MEASURED = "(not measured)"

#: The values of one chapter at one size that a page may quote.
CHAPTER_KEYS: dict[str, Callable[[dict[str, Any]], str]] = {
    "time_ms": lambda e: f"{format_ms(e['time_ms']['median'])} ms",
    "cublas_time_ms": lambda e: f"{format_ms(e['cublas_time_ms']['median'])} ms",
    "gflops": lambda e: f"{format_gflops(e['gflops'])} GFLOP/s",
    "cublas_gflops": lambda e: f"{format_gflops(e['cublas_gflops'])} GFLOP/s",
    "pct_cublas": lambda e: format_percent(e["pct_cublas"]),
    "max_rel_err": lambda e: format_error(e["max_rel_err"]),
    "rel_norm_err": lambda e: format_error(e["rel_norm_err"]),
    "correct": lambda e: "correct" if e["correct"] else "incorrect",
    # Part II: cuBLAS on TF32, timed beside the kernel.
    "cublas_tf32_time_ms": lambda e: f"{format_ms(e['cublas_tf32_time_ms']['median'])} ms",
    "cublas_tf32_gflops": lambda e: f"{format_gflops(e['cublas_tf32_gflops'])} GFLOP/s",
    "pct_cublas_tf32": lambda e: format_percent(e["pct_cublas_tf32"]),
}

#: Part II: the error against the FP64 product of one method ("kernel",
#: "cublas", "cublas_tf32") for one input distribution ("uniform", "wide"):
#: fp64_<method>_<distribution> is the relative-norm error,
#: fp64max_<method>_<distribution> the worst element's relative error, and
#: fp64tol_<method>_<distribution> the tolerance that method's check held it
#: to (FP32's for cuBLAS SGEMM, TF32's for a TF32 method).
FP64_FIELDS = {"fp64": "rel_norm_err", "fp64max": "max_rel_err", "fp64tol": "tolerance"}
FP64_ERROR_KEYS = {
    f"{prefix}_{method}_{distribution}": (
        lambda e, m=method, d=distribution, f=field: format_error(e["fp64_error"][d][m][f]))
    for prefix, field in FP64_FIELDS.items()
    for method in ("kernel", "cublas", "cublas_tf32") for distribution in ("uniform", "wide")
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

#: FP32 lanes (FMA units) per SM by compute capability, from NVIDIA's CUDA
#: C++ Programming Guide (arithmetic instructions' throughput table).
FP32_LANES_PER_SM = {
    "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128,
    "9.0": 128, "10.0": 128, "12.0": 128,
}


def theoretical_fma_gflops(baseline: dict) -> float | None:
    """SMs x FP32 lanes x 2 FLOP per FMA x SM clock, from the baseline's
    provenance (the clock cudaGetDeviceProperties reports); None when a
    figure is missing or the compute capability is not in the table."""
    provenance = baseline.get("provenance") or {}
    lanes = FP32_LANES_PER_SM.get(str(provenance.get("compute_capability")))
    sms, mhz = provenance.get("sm_count"), provenance.get("sm_clock_mhz")
    if lanes is None or not isinstance(sms, int) or not isinstance(mhz, (int, float)):
        return None
    return sms * lanes * 2 * mhz * 1e6 / 1e9


#: Values derived from baseline.json: the theoretical FMA peak, and the
#: measured peak as a share of it.
BASELINE_DERIVED_KEYS = {
    "fma_theoretical_gflops": lambda b: (
        None if (t := theoretical_fma_gflops(b)) is None else f"{format_gflops(t)} GFLOP/s"),
    "fma_peak_pct_theoretical": lambda b: (
        None if (t := theoretical_fma_gflops(b)) is None
        or not isinstance(b.get("fma_peak_gflops"), (int, float))
        else format_percent(100.0 * b["fma_peak_gflops"] / t)),
}


#: The two floors of an M x N x K SGEMM on a GPU, from its baseline.json:
#: 2MNK operations at the FMA peak, and the fewest bytes (A and B read once,
#: C written once) at the copy bandwidth.
FLOOR_KEYS = {
    "fma_ms": lambda m, n, k, b: 2.0 * m * n * k / (b["fma_peak_gflops"] * 1e9) * 1e3,
    "memory_ms": lambda m, n, k, b: 4.0 * (m * k + k * n + m * n)
    / (b["copy_bandwidth_gbs"] * 1e9) * 1e3,
}


#: The differential fuzzer's run of one chapter, as the GPU tests' summary
#: (gpu-tests.json) records it: how many problems it tried and how many
#: failed, and its scale check: the powers of two it scaled A and B by, and
#: the worst error of a 3xTF32 variant against SGEMM's over them (a ratio).
FUZZ_KEYS = ("problems", "failed", "scales_from", "scales_to", "scale_error_ratio")


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
    """Parse '[gpu/]slug:size:key', '[gpu/]baseline:field', '[gpu/]cublas:size' or
    '[gpu/]fuzz:slug:problems|failed|scales_from|scales_to|scale_error_ratio'."""
    gpu, _, rest = text.strip().rpartition("/")
    gpu = gpu or REFERENCE_GPU
    parts = rest.split(":")
    if parts[0] == "baseline" and len(parts) == 2:
        if parts[1] not in BASELINE_KEYS and parts[1] not in BASELINE_DERIVED_KEYS:
            known = ", ".join([*BASELINE_KEYS, *BASELINE_DERIVED_KEYS])
            raise ResultsError(f"unknown baseline field {parts[1]!r}; known: {known}")
        return ValueRequest(gpu, "baseline", key=parts[1])
    if parts[0] == "floor" and len(parts) == 3:
        if parts[2] not in FLOOR_KEYS:
            raise ResultsError(f"unknown floor {parts[2]!r}; known: {', '.join(FLOOR_KEYS)}")
        return ValueRequest(gpu, "floor", size=parse_size(parts[1]), key=parts[2])
    if parts[0] == "fuzz" and len(parts) == 3:
        if parts[2] not in FUZZ_KEYS:
            raise ResultsError(f"unknown fuzz field {parts[2]!r}; known: {', '.join(FUZZ_KEYS)}")
        return ValueRequest(gpu, "fuzz", slug=parts[1], key=parts[2])
    if parts[0] == "cublas" and len(parts) == 2:
        return ValueRequest(gpu, "cublas", size=parse_size(parts[1]))
    if len(parts) != 3 or not re.fullmatch(r"\d\d-[a-z0-9-]+", parts[0]):
        raise ResultsError(
            f"{text!r} is not '[gpu/]NN-slug:size:key', '[gpu/]baseline:field' "
            "or '[gpu/]cublas:size'"
        )
    slug, size, key = parts
    if key not in CHAPTER_KEYS and key not in PEAK_KEYS and key not in FP64_ERROR_KEYS:
        known = ", ".join([*CHAPTER_KEYS, *PEAK_KEYS, *FP64_ERROR_KEYS])
        raise ResultsError(f"unknown key {key!r}; known: {known}")
    return ValueRequest(gpu, "chapter", slug=slug, size=parse_size(size), key=key)


@dataclass(frozen=True)
class Value:
    """A formatted value for the page and the result it came from, if any."""

    text: str
    source: ChapterResult | None = None
    #: Why a value that comes from no chapter result (the fuzzer's counts)
    #: is stale, or None.
    why_stale: str | None = None
    #: The file such a value comes from.
    path: Path | None = None

    @property
    def stale(self) -> str | None:
        return self.source.stale if self.source else self.why_stale


def resolve_value(
    request: ValueRequest, root: str | os.PathLike, repo_root: str | os.PathLike
) -> Value:
    """The formatted value a request names; NOT_MEASURED when there is none."""
    # What the parser sets for each kind (ValueRequest): the key for all but
    # "cublas", the size for "floor", "cublas" and "chapter", the slug for
    # "fuzz" and "chapter".
    if request.kind == "baseline":
        assert request.key is not None
        baseline = load_baseline(root, request.gpu)
        if request.key in BASELINE_DERIVED_KEYS:
            text = BASELINE_DERIVED_KEYS[request.key](baseline) if baseline else None
            return Value(NOT_MEASURED if text is None else text)
        value = baseline.get(request.key) if baseline else None
        if not isinstance(value, (int, float)):
            return Value(NOT_MEASURED)
        return Value(BASELINE_KEYS[request.key](value))
    if request.kind == "floor":
        assert request.key is not None and request.size is not None
        baseline = load_baseline(root, request.gpu)
        try:
            ms = FLOOR_KEYS[request.key](*request.size, baseline)
        except (TypeError, KeyError):
            return Value(NOT_MEASURED)
        return Value(f"{format_ms(ms)} ms")
    if request.kind == "fuzz":
        path = Path(root) / request.gpu / "gpu-tests.json"
        tests = read_json(path) if path.is_file() else {}
        run = tests.get("fuzz", {}).get(request.slug)
        if run is None:
            return Value(NOT_MEASURED)
        if request.key not in run:
            return Value(NOT_MEASURED)
        value = run[request.key]
        text = format_ratio(value) if request.key == "scale_error_ratio" else (
            format_count(value) if value >= 0 else f"−{format_count(-value)}")
        return Value(text, why_stale=provenance.staleness(tests, Path(repo_root)), path=path)
    if request.kind == "cublas":
        assert request.size is not None
        rate = median_cublas_gflops(
            gpu_chapter_results(root, request.gpu, repo_root), request.size
        )
        return Value(NOT_MEASURED if rate is None else f"{format_gflops(rate)} GFLOP/s")
    assert request.key is not None and request.size is not None and request.slug is not None
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
    if request.key in FP64_ERROR_KEYS:
        try:
            return Value(FP64_ERROR_KEYS[request.key](entry), result)
        except (KeyError, TypeError):
            return Value(NOT_MEASURED, result)
    if request.key not in entry:
        return Value(NOT_MEASURED, result)
    return Value(CHAPTER_KEYS[request.key](entry), result)
