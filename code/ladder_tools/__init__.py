"""The book's Python tools, one package for the commands (code/measure.py,
code/sweep.py, cli/), the tests and the book, in five subpackages:
results/, analysis/, figures/, sphinx/ and cli/. The book's
environment has it installed (pyproject.toml); the commands in code/ import
it from their own folder, so they run with a bare python3. Standard library
only, but for figures/ (matplotlib) and sphinx/ (Sphinx, docutils), which
nothing else here imports. At the top, errors (the two error types),
process (running a command), formatting (how the book writes numbers,
times, errors, sizes and counts) and provenance (what a measurement was
built from, and whether the tree has moved on from it: a stale result;
code/sweep.py, an input of the committed sweeps, imports it here) serve
them all.

results/, the results as the measure and sweep commands write them under
results/<gpu>/ (the package itself is the reader every tool uses):
  (__init__)     finding, reading and checking chapter results and baselines
  results_check  the checks a run must pass before it is written or committed
  pending        what awaits the measure command: the stale and missing
                 results tests/pending_measurement.txt explains
  values         the {ladder} role's inline values: parsing and resolving them
  goals          a chapter's goals and the sizes that miss them
  random_problems the measure command's random problems and their seed
  metrics        the ncu metrics measured (counters, issue rate, stall reasons)
  ncu            ncu.json: shared-memory and global-load counters per kernel
  issue          issue.json: a chapter's kernel beside cuBLAS's, issue and stalls
  sweep_results  sweep-<chapter>.json: every configuration of a sweep
  transpose      transpose.json: chapter 10's transpose exercise

analysis/, the built chapters (no GPU):
  binaries       the build folder, its binaries, cuobjdump (cached)
  kernels        which functions are the chapters' kernels, their names
  sass_mix       the instruction mix of each kernel's K-loop, from its SASS
  mix            that mix grouped for the book's table and figure
  occupancy      resident blocks per SM and occupancy from a kernel's resources
  resources      registers, shared memory and occupancy per chapter kernel
  bankmap        lane-to-bank maps, from build/bin/bankmap
  fragmap        chapter 14's fragments and chapter 16's accumulators, from
                 build/bin/fragmap
  warpmap        one warp's global addresses, from build/bin/warpmap
  tailplan       chapter 13's plans per size, from build/bin/tailplan
  misses         each random miss's count and cause
  archs          the architectures the book names, from build/bin/archs

figures/, the drawing (matplotlib): one module per figure, each declared once
(figures/registry.py); `python -m ladder_tools.figures.draw` draws one alone.

sphinx/, the book's Sphinx extensions, which docs/conf.py names.

cli/, the commands, one module each (its __init__ says where the sweep and
the figures' command are):
  measure        the measure command (code/measure.py starts it)
  occupancy      resident blocks per SM and occupancy of a binary's kernels
  sass_mix       the instruction mix of a binary's kernels
"""
