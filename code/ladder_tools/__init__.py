"""The book's Python tools, one package for the commands (code/measure.py,
code/sweep.py, code/analysis/), the tests, the docs extension (code/ladder_tools/sphinx),
and the figures (the subpackage figures/, which draws with matplotlib). The
book's environment has it installed (pyproject.toml); the commands in code/
import it from their own folder, so they run with a bare python3. Standard
library only, but for figures/, which nothing else here imports.

Results, as the measure and sweep commands write them under results/<gpu>/:
  provenance     what a measurement was built from, and whether the tree has
                 moved on from it (a stale result)
  results        finding, reading and checking chapter results and baselines
  results_check  the checks a run must pass before it is written or committed
  pending        what awaits the measure command: the stale and missing
                 results tests/pending_measurement.txt explains
  values         the {ladder} role's inline values: parsing and resolving them
  formatting     how the book writes numbers, times, errors, sizes, counts
  metrics        the ncu metrics measured (counters, issue rate, stall reasons)
  ncu            ncu.json: shared-memory and global-load counters per kernel
  issue          issue.json: a chapter's kernel beside cuBLAS's, issue and stalls
  sweep_results  sweep-<chapter>.json: every configuration of a sweep
  transpose      transpose.json: chapter 10's transpose exercise

Analysis of the built chapters (no GPU):
  binaries       the build folder, its binaries, cuobjdump (cached)
  kernels        which functions are the chapters' kernels, their names
  sass_mix       the instruction mix of each kernel's K-loop, from its SASS
  mix            that mix grouped for the book's table and figure
  occupancy      resident blocks per SM and occupancy from a kernel's resources
  resources      registers, shared memory and occupancy per chapter kernel
  bankmap        lane-to-bank maps, from build/bin/bankmap

Drawing (matplotlib), in the subpackage figures: one module per figure, each
declared once (figures/registry.py); figures/draw.py draws one alone.
"""
