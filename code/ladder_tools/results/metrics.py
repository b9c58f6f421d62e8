"""The Nsight Compute (ncu) metrics the project reads, each named once here.

The measure command asks ncu for them (code/measure.py) and records their
names in results/<gpu>/ncu.json and issue.json; the book reads the values
back by the same names (ladder_tools.results.ncu, ladder_tools.results.issue). Each metric
has a short key, ncu's name and what it counts.
"""
from __future__ import annotations

from typing import NamedTuple


class Metric(NamedTuple):
    """One ncu metric: its name in ncu and what it counts, in a few words."""

    name: str
    meaning: str


#: The shared-memory and global-load counters of every chapter's kernel
#: (ncu.json), by the book's key.
COUNTERS = {
    "ld_conflicts": Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                           "shared-load bank conflicts: wavefronts beyond one per request"),
    "st_conflicts": Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                           "shared-store bank conflicts: wavefronts beyond one per request"),
    "ld_wavefronts": Metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                            "wavefronts the shared loads took"),
    "st_wavefronts": Metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                            "wavefronts the shared stores took"),
    "ld_instructions": Metric("smsp__inst_executed_op_shared_ld.sum",
                              "shared-load warp instructions executed"),
    "st_instructions": Metric("smsp__inst_executed_op_shared_st.sum",
                              "shared-store warp instructions executed"),
    "global_requests": Metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                              "global-load requests"),
    "global_sectors": Metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                             "32-byte sectors the global loads read"),
}
#: The book's key -> ncu's name, of the counters.
METRIC = {key: metric.name for key, metric in COUNTERS.items()}
#: What the measure command asks ncu for, for every chapter.
NCU_METRICS = list(METRIC.values())

#: Where the issue slots go, for the chapters of issue.json (11 and 12) and
#: for cuBLAS's kernel beside each, by the book's key.
ISSUE_COUNTERS = {
    "registers": Metric("launch__registers_per_thread", "registers per thread"),
    "block_size": Metric("launch__block_size", "threads per block"),
    "grid_size": Metric("launch__grid_size", "blocks in the grid"),
    "time": Metric("gpu__time_duration.sum", "the kernel's time, in ns"),
    "sm_clock": Metric("sm__cycles_elapsed.avg.per_second",
                       "the SM clock during the kernel, in Hz"),
    "instructions": Metric("smsp__inst_executed.sum", "warp instructions issued"),
    "ffma_threads": Metric("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                           "FFMAs executed, counted per thread (32 per warp instruction)"),
    "issue_rate": Metric("smsp__issue_active.avg.per_cycle_active",
                         "instructions issued per scheduler per cycle"),
    "warps_active": Metric("smsp__warps_active.avg.per_cycle_active", "warps per scheduler"),
    "warps_per_issue": Metric("smsp__average_warps_active_per_issue_active.ratio",
                              "warps per scheduler per issued instruction"),
}

#: Why a warp was not issued, as ncu names the reason, with what it means.
#: ncu reads each as cycles per issued instruction that an average warp
#: spent stalled for it (stall_metric).
STALL_REASONS = {
    "barrier": "waiting at __syncthreads() (barrier)",
    "dispatch_stall": "held back at dispatch (dispatch stall)",
    "long_scoreboard": "waiting for a global load (long scoreboard)",
    "math_pipe_throttle": "FMA pipe busy (math pipe throttle)",
    "mio_throttle": "shared-memory queue full (MIO throttle)",
    "no_instruction": "no instruction fetched (no instruction)",
    "not_selected": "another warp was issued instead (not selected)",
    "selected": "issued (selected)",
    "short_scoreboard": "waiting for a shared-memory load (short scoreboard)",
    "wait": "waiting a fixed latency (wait)",
    "lg_throttle": "global-memory queue full (LG throttle)",
    "branch_resolving": "waiting for a branch to resolve (branch resolving)",
}


def stall_metric(reason: str) -> str:
    """ncu's name of the stall metric of one reason of STALL_REASONS."""
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


#: What the measure command asks ncu for, for a chapter of issue.json.
ISSUE_METRICS = ([metric.name for metric in ISSUE_COUNTERS.values()]
                 + [stall_metric(reason) for reason in STALL_REASONS])
