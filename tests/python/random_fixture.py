"""Synthetic random problems' runs for the tests: what a final kernel's
binary would write (--json) for the problems of a seed, and the random.json
the measure command would make of three such runs. Numbers made up, never
shown in the real book; the rates follow from the times as the harness
writes them (results_check.identity_errors passes).
"""
from __future__ import annotations

from pathlib import Path

from ladder_tools import provenance
from ladder_tools.results import random_problems

ROOT = Path(__file__).resolve().parents[2]

FIXTURE_GPU = "Fixture GPU A (h200 folder)"
#: The chapters whose binaries time cuBLAS on TF32 beside SGEMM.
TF32 = {"16-wgmma", "17-3xtf32-wgmma"}


def size_entry(m: int, n: int, k: int, pct: float | None, slug: str,
               correct: bool = True) -> dict:
    """One size of chapter `slug` as the harness writes it: timed at `pct` %
    of the cuBLAS its goal is held against (random_problems.RANDOM_CHAPTERS),
    untimed when None. cuBLAS on TF32 (timed by Part II's chapters) is twice
    as fast as its SGEMM."""
    entry = {"M": m, "N": n, "K": k}
    if pct is not None:
        flops = 2.0 * m * n * k
        median = 1e-9 * flops  # ms: 1,000 GFLOP/s
        reference = median * pct / 100.0
        if random_problems.RANDOM_CHAPTERS[slug].against == "cuBLAS TF32":
            sgemm, tf32 = 2 * reference, reference
        else:
            sgemm, tf32 = reference, reference / 2
        times = lambda t: {"median": t, "min": t * 0.99, "max": t * 1.01}  # noqa: E731
        entry.update(time_ms=times(median), gflops=flops / (median * 1e-3) / 1e9,
                     cublas_time_ms=times(sgemm), cublas_gflops=flops / (sgemm * 1e-3) / 1e9,
                     pct_cublas=100.0 * sgemm / median)
        if slug in TF32:
            entry.update(cublas_tf32_time_ms=times(tf32),
                         cublas_tf32_gflops=flops / (tf32 * 1e-3) / 1e9,
                         pct_cublas_tf32=100.0 * tf32 / median)
    else:
        entry["timing_skipped"] = "timing would take about 30 s, over the 10 s budget"
    entry.update(max_rel_err=1e-6, tolerance=1e-4, correct=correct)
    return entry


def binary_output(slug: str, problems: list, pct=lambda index: 120.0, seed: int = 1) -> dict:
    """What bin/<slug> --sizes <problems> --json writes: `pct(index)` is the
    % of the relevant cuBLAS at each problem (None: not timed)."""
    sizes = [size_entry(p["M"], p["N"], p["K"], pct(i), slug)
             for i, p in enumerate(problems)]
    return {"schema": 1, "chapter": slug, "title": slug,
            "provenance": {"gpu": FIXTURE_GPU, "gpu_slug": "h200", "compute_capability": "9.0",
                           "sm_count": 132,
                           "driver": "0.0", "cuda_runtime": "0.0", "cublas": "0.0.0",
                           "date": "2000-01-01T00:00:00Z", "git_commit": "0000000fixture",
                           "source": f"chapters/{slug}/kernel.cu",
                           "config": {"seed": seed, "budget_s": 10}},
            "sizes": sizes}


def constant(value: float):
    """pct(index) that is `value` for every problem."""
    return lambda index: value


def random_file(seed: int = 12345, pcts: dict | None = None) -> dict:
    """A random.json for `seed` whose inputs match the tree now (fresh);
    `pcts` maps a chapter to its pct(index) (default: every problem at
    twice what every goal asks)."""
    pcts = pcts or {}
    problems = random_problems.draw(seed)
    sources = [f"chapters/{slug}/kernel.cu" for slug in random_problems.RANDOM_CHAPTERS]
    chapters = {}
    for slug, goal in random_problems.RANDOM_CHAPTERS.items():
        written = binary_output(slug, problems, pcts.get(slug, constant(2 * goal.percent)),
                                seed)
        written["provenance"]["inputs"] = provenance.hash_files(
            [f"chapters/{slug}/kernel.cu"], ROOT)
        chapters[slug] = {"goal": {"percent": goal.percent, "against": goal.against},
                          "sizes": written["sizes"], "provenance": written["provenance"]}
    return {"schema": 1, "gpu": FIXTURE_GPU, "gpu_slug": "h200",
            "date": "2000-01-01T00:00:00Z", "git_commit": "0000000fixture", "seed": seed,
            "budget_s": random_problems.RANDOM_BUDGET_S, "problems": problems,
            "inputs": provenance.hash_files(sources, ROOT), "chapters": chapters}
