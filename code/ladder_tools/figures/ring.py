"""The model under chapter 16's ring of stages ({ladder-pipeline} draws it,
pipeline.py; handshake.py and split.py share it).

The data: a variant's ``--describe`` constants (STAGES, BK, BM, BN,
A_TILES, COPY_FLOATS, STAGE_FLOATS, PRODUCTS, CONSUMERS, WARPGROUP), turned
by pipeline_of() into a Pipeline. schedule() is the order the kernel's
barriers impose on a product of 2 · STAGES K-steps (sgemm_wgmma,
consume_tf32, consume_3xtf32), each task one column long and started in
the first column that all it waits for allows:

- the producer's one thread copies step k into stage k mod STAGES with TMA,
  in order, once that stage is *empty* (the consumers have finished step
  k - STAGES; a fresh stage is free); the copy completes *full*. On 3xTF32
  (PRODUCTS = 3) it brings A's small part too (A_TILES = 2), written before
  the product (convert_a()); A's own tile is its big part;
- after *full* the consumers multiply step k with wgmma, in order, then
  arrive on *empty*.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ladder_tools.analysis.binaries import AnalysisError, describe, find_variant
from ladder_tools.figures.style import GPU_COLOURS

#: What each kind of task is drawn with: colour and opacity.
FILLS = {"copy": (GPU_COLOURS[1], 0.4), "mma": (GPU_COLOURS[0], 0.6)}
#: The barrier each kind of task completes, and its line style.
COMPLETES = {"copy": "full", "mma": "empty"}
LINE_STYLES = {"full": "-", "empty": (0, (2.2, 1.4))}
TIMES = "\u00d7"
NEEDED = ("STAGES", "BK", "BM", "BN", "A_TILES", "COPY_FLOATS", "STAGE_FLOATS", "PRODUCTS",
          "CONSUMERS", "WARPGROUP")


@dataclass(frozen=True)
class Pipeline:
    chapter: str
    stages: int
    bk: int
    bm: int
    bn: int
    copy_floats: int   #: floats the copies bring per stage: A's tiles and B's
    stage_floats: int  #: floats of one stage: all the copies bring
    products: int      #: 1 (TF32) or 3 (3xTF32, whose copies bring A's small part too)
    consumer_threads: int  #: the arrivals that complete "empty"

    @property
    def split(self) -> bool:
        return self.products == 3

    @property
    def steps(self) -> int:
        """The K-steps drawn: each stage filled, emptied and refilled once."""
        return 2 * self.stages

    @property
    def part_floats(self) -> int:
        """The floats of A's small part in a stage (3xTF32), 0 on TF32."""
        return self.copy_floats - (self.bm + self.bn) * self.bk


@dataclass(frozen=True)
class Task:
    kind: str    #: "copy" (TMA) or "mma" (wgmma)
    step: int    #: the K-step whose tiles it copies or multiplies
    stage: int
    start: int   #: its column; it ends where the next begins

    @property
    def end(self) -> int:
        return self.start + 1

    @property
    def barrier(self) -> str:
        """The barrier it completes, at its end."""
        return COMPLETES[self.kind]


def pipeline_of(chapter: str, constants: dict) -> Pipeline:
    missing = [n for n in NEEDED if n not in constants]
    if missing:
        raise AnalysisError(f"{chapter}: its --describe constants have no {', '.join(missing)}")
    c = constants
    if c["STAGES"] < 2:
        raise AnalysisError(f"{chapter}: STAGES = {c['STAGES']}, nothing overlaps")
    if c["PRODUCTS"] not in (1, 3):
        raise AnalysisError(f"{chapter}: PRODUCTS = {c['PRODUCTS']}, not 1 or 3")
    a_tiles = 2 if c["PRODUCTS"] == 3 else 1  # A's tile, and on 3xTF32 its small part
    if c["A_TILES"] != a_tiles:
        raise AnalysisError(f"{chapter}: A_TILES = {c['A_TILES']}, not {a_tiles} for "
                            f"PRODUCTS = {c['PRODUCTS']}")
    if c["COPY_FLOATS"] != (a_tiles * c["BM"] + c["BN"]) * c["BK"]:
        raise AnalysisError(f"{chapter}: COPY_FLOATS = {c['COPY_FLOATS']} is not "
                            f"({a_tiles} BM + BN) {TIMES} BK, A's tiles and B's")
    if c["STAGE_FLOATS"] != c["COPY_FLOATS"]:
        raise AnalysisError(f"{chapter}: STAGE_FLOATS = {c['STAGE_FLOATS']} is not the "
                            f"copies' {c['COPY_FLOATS']} floats")
    return Pipeline(chapter, c["STAGES"], c["BK"], c["BM"], c["BN"], c["COPY_FLOATS"],
                    c["STAGE_FLOATS"], c["PRODUCTS"], c["CONSUMERS"] * c["WARPGROUP"])


def chapter_pipeline(repo_root: Path, build: Path, slug: str) -> tuple[Pipeline, list[Path]]:
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    return pipeline_of(slug, variant["constants"]), [path, *sources]


def schedule(p: Pipeline) -> list[Task]:
    """Each step's copy and multiply, each in the first column its
    barriers and its role's order allow."""
    tasks: list[Task] = []
    copies: dict[int, Task] = {}
    mmas: dict[int, Task] = {}
    for k in range(p.steps):
        stage = k % p.stages
        # The producer's thread issues the copies in order; it waits for
        # "empty" of the step the stage held (a fresh stage is free).
        start = copies[k - 1].start if k else 0
        if k >= p.stages:
            start = max(start, mmas[k - p.stages].end)
        copies[k] = Task("copy", k, stage, start)
        # The consumers wait for "full", one step after another.
        mmas[k] = Task("mma", k, stage, max(copies[k].end, mmas[k - 1].end if k else 0))
        tasks += [copies[k], mmas[k]]
    return tasks


def columns(tasks: list[Task]) -> int:
    return max(t.end for t in tasks)
