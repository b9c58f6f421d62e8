"""Where the issue slots go (results/<gpu>/issue.json, chapters 11 and 12).

For these chapters the measure command reads, with ncu, one launch of the
chapter's kernel and one of cuBLAS's in the same run: how often the
schedulers issue, how many instructions and FFMAs, and why warps stalled
(ladder_tools.results.metrics.ISSUE_COUNTERS and STALL_REASONS). The book sets the
two kernels side by side.
"""

from __future__ import annotations

import os
from pathlib import Path

from ladder_tools.analysis.kernels import KERNEL_PREFIX
from ladder_tools.formatting import DASH
from ladder_tools.results import load_chapters_file
from ladder_tools.results.metrics import ISSUE_COUNTERS, STALL_REASONS, stall_metric

#: The stall reasons the book shows, in this order (their meanings are
#: metrics.STALL_REASONS'): cycles per issued instruction that an average
#: warp spent stalled for each.
SHOWN_STALLS = ["not_selected", "dispatch_stall", "short_scoreboard", "wait", "barrier",
                "no_instruction", "long_scoreboard", "math_pipe_throttle", "mio_throttle"]


def issue_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / "issue.json"


def load_issue(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's issue.json, or None when it has none."""
    return load_chapters_file(issue_path(root, gpu))


def issue_kernels(entry: dict) -> tuple[tuple[str, dict], tuple[str, dict]] | None:
    """(the chapter's kernel, cuBLAS's kernel), each as (name, metrics), from
    one chapter's entry of issue.json; None when either is missing. Every
    chapter kernel is named sgemm_*; cuBLAS's is the other one."""
    kernels = entry.get("kernels") if isinstance(entry, dict) else None
    if not isinstance(kernels, dict):
        return None
    ours = [(n, m) for n, m in kernels.items() if KERNEL_PREFIX in n]
    theirs = [(n, m) for n, m in kernels.items() if KERNEL_PREFIX not in n]
    if len(ours) != 1 or len(theirs) != 1:
        return None
    return ours[0], theirs[0]


def issue_rows(ours: dict, theirs: dict) -> list[list[str]]:
    """The rows of the issue table: a quantity, then its value for the
    chapter's kernel and for cuBLAS's. A metric that is missing shows a dash."""

    def get(metrics: dict, name: str) -> float | None:
        value = metrics.get(name)
        return float(value) if isinstance(value, (int, float)) else None

    def fmt(value: float | None, spec: str, scale: float = 1.0) -> str:
        return DASH if value is None else format(value * scale, spec)

    def ffma_share(metrics: dict) -> float | None:
        ffma = get(metrics, ISSUE_COUNTERS["ffma_threads"].name)
        issued = get(metrics, ISSUE_COUNTERS["instructions"].name)
        return None if not ffma or not issued else 100.0 * ffma / 32.0 / issued

    def row(label: str, name: str, spec: str, scale: float = 1.0) -> list[str]:
        return [label, fmt(get(ours, name), spec, scale), fmt(get(theirs, name), spec, scale)]

    rows = [row(label, ISSUE_COUNTERS[key].name, spec, scale) for label, key, spec, scale in [
        ("registers per thread", "registers", ".0f", 1.0),
        ("threads per block", "block_size", ".0f", 1.0),
        ("blocks", "grid_size", ".0f", 1.0),
        ("time (ms)", "time", ".3f", 1e-6),
        ("SM clock during the kernel (GHz)", "sm_clock", ".3f", 1e-9),
        ("warp instructions issued (billions)", "instructions", ".3f", 1e-9),
    ]]
    rows.append(["FFMA share of the instructions (%)", fmt(ffma_share(ours), ".1f"),
                 fmt(ffma_share(theirs), ".1f")])
    rows.append(row("warps per scheduler", ISSUE_COUNTERS["warps_active"].name, ".2f"))
    rows.append(row("instructions issued per scheduler per cycle",
                    ISSUE_COUNTERS["issue_rate"].name, ".2f"))
    rows += [row(f"stall: {STALL_REASONS[reason]}", stall_metric(reason), ".2f")
             for reason in SHOWN_STALLS]
    return rows
