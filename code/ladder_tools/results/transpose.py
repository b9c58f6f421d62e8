"""Chapter 10's transpose exercise (results/<gpu>/transpose.json).

bin/transpose times each variant (a copy, the naive transpose, and the
tiled one with a 32x32, a padded 32x33 and a swizzled tile) beside
cudaMemcpy; the measure command adds ncu's shared-load counters of each
variant's kernel to ncu.json under "transpose".
"""

from __future__ import annotations

import os
from pathlib import Path

from ladder_tools.formatting import (
    DASH,
    format_count,
    format_percent,
    format_ratio,
    format_time_range,
)
from ladder_tools.results import ResultsError, read_json
from ladder_tools.results.ncu import entry_kernels

TRANSPOSE_FILE = "transpose.json"
#: Which kernel of the transpose binary each variant runs (a part of its name).
TRANSPOSE_KERNELS = {
    "copy": "copy_tiles",
    "naive": "transpose_naive",
    "tiled_32x32": "Layout32x32",
    "tiled_32x33": "Layout32x33",
    "tiled_swizzled": "LayoutSwizzled",
}


def transpose_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / TRANSPOSE_FILE


def load_transpose(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's transpose.json, checked, or None when it has none."""
    path = transpose_path(root, gpu)
    if not path.is_file():
        return None
    content = read_json(path)
    sizes = content.get("sizes")
    if not isinstance(sizes, list) or not sizes:
        raise ResultsError(f"{path}: sizes is missing or empty")
    for index, size in enumerate(sizes):
        if not (isinstance(size, dict) and isinstance(size.get("rows"), int)
                and isinstance(size.get("cols"), int) and isinstance(size.get("variants"), dict)):
            raise ResultsError(f"{path}: sizes[{index}] needs rows, cols and variants")
    return content


TRANSPOSE_HEADER = ["variant", "ms: median [min\u2013max]", "GB/s", "% of cudaMemcpy", "correct"]


def transpose_rows(size: dict) -> list[list[str]]:
    """One size's table: every variant, then cudaMemcpy."""
    rows = []
    for name, variant in size["variants"].items():
        timed = isinstance(variant.get("time_ms"), dict)
        correct = "yes" if variant.get("correct") else "NO"
        if variant.get("mismatches"):
            correct += f" ({format_count(variant['mismatches'])} differ)"
        rows.append([
            name,
            format_time_range(variant["time_ms"]) if timed else "not timed",
            f"{variant['gbs']:,.0f}" if timed else DASH,
            format_percent(variant["pct_memcpy"]) if timed else DASH,
            correct,
        ])
    memcpy = size.get("memcpy")
    if isinstance(memcpy, dict) and isinstance(memcpy.get("time_ms"), dict):
        rows.append(["cudaMemcpy", format_time_range(memcpy["time_ms"]),
                     f"{memcpy['gbs']:,.0f}", format_percent(100.0), ""])
    return rows


def transpose_counter_rows(entry: dict, variants: list[str]) -> list[list[str]]:
    """Per variant, the shared-load counters of the kernel it runs."""
    kernels = entry_kernels(entry, only_chapter_kernels=False)
    rows = []
    for variant in variants:
        part = TRANSPOSE_KERNELS.get(variant, variant)
        kernel = next((k for k in kernels if part in k.name), None)
        if kernel is None:
            rows.append([variant, DASH, DASH, DASH, DASH])
            continue
        counts = [kernel.get(key) for key in ("ld_instructions", "ld_wavefronts", "ld_conflicts")]
        shown = [DASH if value is None else format_count(value) for value in counts]
        rows.append([variant, shown[0], shown[1], format_ratio(kernel.per_instruction("ld")),
                     shown[2]])
    return rows


# --------------------------------------------------------------------------
