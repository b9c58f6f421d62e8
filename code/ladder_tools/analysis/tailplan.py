"""Chapter 13's plans and schedules, from build/bin/tailplan.

tailplan (code/tools/tailplan.cu) includes chapters/13-tail/kernel.cuh and
calls its plan(), cost() and schedule functions: what each variant of the
chapter runs for a product, the count it was picked by, and every block's
segments. Nothing of the count is computed here. What tailplan needs of the
GPU, this module takes from what was measured and built:

* the SMs: the chapter result's provenance ``sm_count``;
* Big's blocks per SM: the result's ``resources.blocks_per_sm`` (the driver's
  answer for the kernel it measured, Big's exact path); without a result,
  computed as for Small;
* Small's blocks per SM: computed (ladder_tools.analysis.occupancy) from the
  registers and shared memory of Small's exact-path kernel in the built
  binary (cuobjdump) and its launch (threads, dynamic shared memory) from
  ``--describe``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ladder_tools import results
from ladder_tools.analysis.binaries import AnalysisError, find_variant, tool_json
from ladder_tools.analysis.resources import computed_occupancy, kernel_resources
from ladder_tools.formatting import DASH, format_percent

#: The chapter, and its variants as result names.
CHAPTER = "13-tail"
VARIANTS = ("default", "tiles", "split-k", "stream-k")
#: What --segments also draws: chapter 12's launch, Big's plain tiles.
BIG_TILES = "big-tiles"
SCHEMES = (*VARIANTS, BIG_TILES)


def result_slug(variant: str) -> str:
    """'13-tail' for the default variant, '13-tail-tiles' for "tiles"."""
    return CHAPTER if variant == "default" else f"{CHAPTER}-{variant}"


def parse_size(text: str) -> tuple[int, int, int]:
    """'3072' -> (3072, 3072, 3072); '512x512x16384' -> (512, 512, 16384)."""
    parts = text.strip().lower().split("x")
    if len(parts) not in (1, 3) or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise AnalysisError(f"a size is N or MxNxK, got {text!r}")
    m, n, k = (int(parts[0]),) * 3 if len(parts) == 1 else map(int, parts)
    return m, n, k


def size_text(size: tuple[int, int, int]) -> str:
    """'3072' for a cube, '512 \u00d7 512 \u00d7 16384' otherwise."""
    m, n, k = size
    return str(m) if m == n == k else f"{m} \u00d7 {n} \u00d7 {k}"


@dataclass(frozen=True)
class TailGpu:
    """The GPU's shape as the chapter's plan() takes it, and where it came from."""

    name: str  #: the GPU's name
    sms: int
    big_blocks: int
    small_blocks: int
    whence: str  #: one sentence: where each number came from

    def arguments(self) -> list[str]:
        return ["--sms", str(self.sms), "--big-blocks", str(self.big_blocks),
                "--small-blocks", str(self.small_blocks)]


def _tiling_arguments(c: dict, prefix: str) -> str:
    """The template arguments of ch12::Tiling, as c++filt writes them, from
    --describe's constants (prefix "" for Big, "SMALL_" for Small)."""
    names = ("BM", "BN", "BK", "WM", "WN", "WNITER", "TM", "TN", "NUM_THREADS", "MIN_BLOCKS",
             "GROUP_M")
    values = ", ".join(str(c[prefix + name]) for name in names)
    return f"ch12::Tiling<{values}, (ch12::ALayout){c[prefix + 'A_LAYOUT']}>"


def small_blocks_per_sm(binary: Path, variant: dict) -> tuple[int, dict]:
    """Blocks of Small's exact-path kernel one SM holds, computed from its
    registers and shared memory in ``binary``, and that kernel's resources.

    Small's kernel is found by its name: --describe names Big's (the one the
    variant's resources are of); its tiling's template arguments, rebuilt from
    Big's constants, must be in that name, and the same built from Small's
    constants name Small's."""
    c = variant["constants"]
    kernels = kernel_resources(binary)
    big_name = variant["kernel"]["name"]
    big = [k for k in kernels if k["mangled"] == big_name]
    if not big or _tiling_arguments(c, "") not in big[0]["name"]:
        raise AnalysisError(f"{binary}: cannot find Big's kernel {big_name} as its constants "
                            "describe it, so not Small's either")
    small_name = big[0]["name"].replace(_tiling_arguments(c, ""), _tiling_arguments(c, "SMALL_"))
    small = [k for k in kernels if k["name"] == small_name]
    if len(small) != 1:
        raise AnalysisError(f"{binary}: no kernel {small_name}")
    occ = computed_occupancy(small[0], c["SMALL_NUM_THREADS"], c["SMALL_SMEM_BYTES"])
    return occ["blocks_per_sm"], small[0]


def tail_gpu(repo_root: Path, build: Path, gpu: str = results.REFERENCE_GPU,
             sms: int | None = None
             ) -> tuple[TailGpu | None, list[Path], results.ChapterResult | None]:
    """The TailGpu of ``gpu``, the files read, and the 13-tail result (None
    when the GPU has none: then the SMs come from another chapter's result of
    the GPU, or else from ``sms``, the caller's, and Big's blocks per SM are
    computed like Small's). None for TailGpu when neither gives the SMs."""
    binary, variant = find_variant(repo_root, build, CHAPTER)
    root = results.results_root(repo_root)
    found = results.load_chapter_result(root, gpu, CHAPTER, repo_root)
    read = [binary]
    small, small_kernel = small_blocks_per_sm(binary, variant)
    small_words = (f"Small's {small} per SM computed from its kernel's "
                   f"{small_kernel['registers']} registers and "
                   f"{variant['constants']['SMALL_SMEM_BYTES']} B of shared memory")
    if found is not None:
        read.append(found.path)
        big = (found.data.get("resources") or {}).get("blocks_per_sm")
        sms = found.provenance.get("sm_count")
        if not big or not sms:
            raise AnalysisError(f"{found.path}: no provenance sm_count or resources "
                                "blocks_per_sm")
        whence = (f"{sms} SMs and Big's {big} block{'s' if big > 1 else ''} per SM, as "
                  f"{CHAPTER}'s run on it reported them; {small_words}")
        return (TailGpu(found.provenance.get("gpu", gpu), sms, big, small, whence), read,
                found)
    others = results.gpu_chapter_results(root, gpu, repo_root)
    with_sms = [r for r in others if r.provenance.get("sm_count")]
    if not with_sms and sms is None:
        return None, read, None
    name, whose = gpu, "the caller gave them"
    if with_sms:
        other = with_sms[-1]
        read.append(other.path)
        sms, name = other.provenance["sm_count"], other.provenance.get("gpu", gpu)
        whose = "another chapter's run on it reported them"
    big_kernel = [k for k in kernel_resources(binary) if k["mangled"] == variant["kernel"]["name"]]
    launch = variant["kernel"]
    big = computed_occupancy(big_kernel[0], launch["threads_per_block"],
                             launch["dynamic_smem_bytes"])["blocks_per_sm"]
    assert sms is not None  # from another chapter's result or the caller
    whence = (f"{sms} SMs, as {whose} ({CHAPTER} is not measured yet); "
              f"Big's {big} per SM and {small_words}")
    return TailGpu(name, sms, big, small, whence), read, None


def _run(tool: Path, arguments: list[str]) -> dict:
    return tool_json(tool, arguments)


def run_plans(tool: Path, gpu: TailGpu, sizes: list[tuple[int, int, int]]) -> dict:
    """``tailplan --json`` for ``sizes``: per size, every variant's plan and
    Big's plain tiles ("big_tiles"), cached."""
    return _run(tool, [*gpu.arguments(), "--sizes", *(f"{m}x{n}x{k}" for m, n, k in sizes)])


def run_segments(tool: Path, gpu: TailGpu, scheme: str, size: tuple[int, int, int]) -> dict:
    """``tailplan --segments`` of one variant (or big-tiles) at one size: its
    plan and every block's segments in the order the block runs them."""
    if scheme not in SCHEMES:
        raise AnalysisError(f"no scheme {scheme!r}: {', '.join(SCHEMES)}")
    m, n, k = size
    return _run(tool, [*gpu.arguments(), "--segments", scheme, "--sizes", f"{m}x{n}x{k}"])


# -- The plan table ({ladder-tail-plans}) ----------------------------------------

TILING_WORDS = {"big": "Big", "small": "Small"}


def scheme_words(plan: dict) -> str:
    """'tiles', 'split-K, 4 slices', 'stream-K'; ', packed' after a plan
    that runs on packed copies of the matrices."""
    if plan["scheme"] == "split-k":
        words = f"split-K, {plan['slices']} slices"
    else:
        words = {"tiles": "tiles", "stream-k": "stream-K"}[plan["scheme"]]
    return words + (", packed" if plan.get("packed") else "")


def blocks_words(plan: dict) -> str:
    """'128', '384 = 128 \u00d7 3' for split-K."""
    if plan["scheme"] == "split-k":
        return f"{plan['blocks']:,} = {plan['tiles']:,} \u00d7 {plan['slices']}"
    return f"{plan['blocks']:,}"


def median_ms(entry: dict | None) -> float | None:
    if entry is None or not results.is_timed(entry):
        return None
    return entry["time_ms"]["median"]


PLANS_HEADER = ["size", "tiling", "scheme", "blocks", "predicted \u00f7 tiles",
                "measured \u00f7 tiles", "% of cuBLAS"]


def plans_rows(plans: dict, chapter: results.ChapterResult | None,
               tiles: results.ChapterResult | None) -> list[list[str]]:
    """The {ladder-tail-plans} table: per size, the plan of the chapter's own
    variant, the count's time over that of the "tiles" variant's plan (a
    prediction; Small's count times its slowdown, as plan() compares them),
    the measured time of 13-tail over that of 13-tail-tiles and 13-tail's %
    of cuBLAS (a dash where not measured)."""
    rows = []
    for entry in plans["sizes"]:
        size = (entry["M"], entry["N"], entry["K"])
        own, plain = entry["variants"]["default"], entry["variants"]["tiles"]
        timed = chapter.timed_at(size) if chapter else None
        ours, theirs = median_ms(timed), median_ms(tiles.timed_at(size) if tiles else None)
        rows.append([
            size_text(size), TILING_WORDS[own["tiling"]], scheme_words(own), blocks_words(own),
            f"{own['weighted_cost'] / plain['weighted_cost']:.2f}",
            f"{ours / theirs:.2f}" if ours and theirs else DASH,
            format_percent(timed["pct_cublas"]) if timed else DASH,
        ])
    return rows


def tiles_words(plans: dict) -> str:
    """Which tiling the "tiles" variant runs at each size: the ratios' base."""
    by_tiling: dict[str, list[str]] = {}
    for entry in plans["sizes"]:
        plan = entry["variants"]["tiles"]
        by_tiling.setdefault(TILING_WORDS[plan["tiling"]], []).append(
            size_text((entry["M"], entry["N"], entry["K"])))
    return "; ".join(f"{tiling} at {', '.join(sizes)}" for tiling, sizes in by_tiling.items())


_SIZE_WORD = re.compile(r"^\d+(x\d+x\d+)?$")


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """A list of sizes separated by spaces or commas."""
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    if not words or not all(_SIZE_WORD.match(w.lower()) for w in words):
        raise AnalysisError(f"sizes are N or MxNxK, separated by spaces, got {text!r}")
    return [parse_size(w) for w in words]
