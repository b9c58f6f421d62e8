#!/usr/bin/env python3
"""Draws one of the book's figures from the command line, as SVG.

    python figures/draw.py sizes 12-final --out sizes.svg
    python figures/draw.py ladder --out ladder.svg
    python figures/draw.py mix --out mix.svg
    python figures/draw.py bankmap transpose.32x32.tile-read --out bank.svg
    python figures/draw.py bankmap --stride 33 --width 4 --out bank.svg
    python figures/draw.py bankgrid ch09.a-store ch10.a-store --titles "unpadded; padded" \
        --out grid.svg
    python figures/draw.py sweep 09-autotuning --out sweep.svg
    python figures/draw.py tiling 12-final --out tiling.svg
    python figures/draw.py roofline --out roofline.svg
    python figures/draw.py stages 11-double-buffering --out stages.svg
    python figures/draw.py pipeline 16-wgmma --out pipeline.svg
    python figures/draw.py rounds 12-final --size 3072 --out rounds.svg
    python figures/draw.py cut --size 1536 --out cut.svg
    python figures/draw.py warp-access 01-naive 02-coalescing --out warp.svg
    python figures/draw.py fragments --show tiles --out fragments.svg
    python figures/draw.py tail-rounds 3072 --schemes tiles split-k stream-k --out tail.svg
    python figures/draw.py accuracy 14-tf32 15-3xtf32 15-3xtf32-in-core --out accuracy.svg
    python figures/draw.py tail-map --out map.svg

`python` is the book's environment's, build/venv/bin/python (or run
python -m figures.draw ...): it has matplotlib, and this repository's
packages (figures, ladder_tools) installed (pyproject.toml).

--mode dark draws the dark page's version. The data is the book's: results/
(or $LADDER_RESULTS_DIR) and the chapters built in build/ (or
$LADDER_BUILD_DIR), read through code/ladder_tools; the drawing is the
figure's module in figures/, as the docs extension calls it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from figures import (
    accuracy,
    bankgrid,
    bankmap,
    by_size,
    cut,
    fragments,
    ladder,
    mix,
    pipeline,
    roofline,
    rounds,
    stages,
    sweep,
    tail,
    tail_map,
    tiling,
    warp_access,
)
from ladder_tools import binaries, results, sweep_results, tailplan
from ladder_tools.bankmap import run_bankmap
from ladder_tools.formatting import parse_size
from ladder_tools.fragmap import run_fragmap
from ladder_tools.warpmap import chapter_accesses

ROOT = Path(__file__).resolve().parents[1]


def draw_sizes(args, mode: str) -> bytes:
    """GFLOP/s and % of cuBLAS by size for one chapter, every GPU."""
    found = results.load_chapter_results(results.results_root(ROOT), args.chapter, ROOT)
    gflops, cublas, pct = by_size.by_size_series(found)
    if not gflops:
        sys.exit(f"draw: no GPU has a timed result for {args.chapter}")
    return by_size.draw_by_size(gflops, cublas, pct, mode)


def draw_ladder(args, mode: str) -> bytes:
    """Every chapter at the headline size, every GPU."""
    slugs = results.chapter_slugs(ROOT)
    bars = ladder.every_gpu_bars(results.results_root(ROOT), ROOT, slugs, results.HEADLINE_SIZE)
    if not bars:
        sys.exit("draw: no GPU has results for any chapter")
    return ladder.draw_ladder([slug.replace("-", " ", 1) for slug in slugs], bars, mode)


def draw_mix(args, mode: str) -> bytes:
    """The K-loop mix of every chapter binary that is built."""
    build = binaries.build_dir(ROOT)
    bars = mix.mix_bars(binaries.chapter_binaries(ROOT, build))
    if not bars:
        sys.exit(f"draw: no chapter binary in {build / 'bin'}: build the chapters first")
    return mix.draw_mix(bars, mode)


def draw_bankmap(args, mode: str) -> bytes:
    """One access of bankmap: a named one, or lanes striding through a tile."""
    if (args.access is None) == (args.stride is None):
        sys.exit("draw: give an access name (bankmap --list) or --stride, not both")
    tool = binaries.require_binary(binaries.build_dir(ROOT), "bankmap")
    return bankmap.draw_bankmap(run_bankmap(tool, args.access, args.stride, args.width), mode)


def draw_bankgrid(args, mode: str) -> bytes:
    """Named accesses as bank grids: banks across, a row per wavefront."""
    titles = ([t.strip() for t in args.titles.split(";")] if args.titles else args.accesses)
    if len(titles) != len(args.accesses):
        sys.exit(f"draw: --titles has {len(titles)} titles for {len(args.accesses)} accesses")
    tool = binaries.require_binary(binaries.build_dir(ROOT), "bankmap")
    grids = [bankgrid.bank_grid(run_bankmap(tool, name), title)
             for name, title in zip(args.accesses, titles, strict=True)]
    return bankgrid.draw_bankgrid(grids, mode)


def draw_sweep(args, mode: str) -> bytes:
    """A chapter's sweep on one GPU, the committed configuration ringed."""
    found = sweep_results.load_sweep(results.results_root(ROOT), args.gpu, args.chapter)
    if found is None:
        sys.exit(f"draw: no sweep of {args.chapter} on {args.gpu}")
    _, variant = binaries.find_variant(ROOT, binaries.build_dir(ROOT), args.chapter)
    committed = sweep_results.committed_config(found, variant.get("constants"))
    return sweep.draw_sweep(*sweep.sweep_points(found, committed), mode)


def draw_tiling(args, mode: str) -> bytes:
    """What a block, a warp and a thread of a chapter own of C, to scale."""
    found, _ = tiling.chapter_tiling(ROOT, binaries.build_dir(ROOT), args.chapter)
    return tiling.draw_tiling(found, mode)


def draw_roofline(args, mode: str) -> bytes:
    """A GPU's roofline with every chapter at 4096, at its tiles' intensity."""
    found, _, _ = roofline.roofline_data(ROOT, binaries.build_dir(ROOT), args.gpu)
    if found is None:
        sys.exit(f"draw: {args.gpu} has no baseline ceilings or no chapter measured at 4096")
    return roofline.draw_roofline(found, mode)


def draw_stages(args, mode: str) -> bytes:
    """A chapter's shared-memory stages over a few K-steps, in the code's order."""
    found, _ = stages.chapter_stages(ROOT, binaries.build_dir(ROOT), args.chapter)
    return stages.draw_stages(found, mode)


def draw_pipeline(args, mode: str) -> bytes:
    """Chapter 16's ring of stages between producer and consumers, in the code's order."""
    found, _ = pipeline.chapter_pipeline(ROOT, binaries.build_dir(ROOT), args.chapter)
    return pipeline.draw_pipeline(found, mode)


def draw_rounds(args, mode: str) -> bytes:
    """An N x N output's blocks in rounds across the GPU's SMs."""
    found, _, _ = rounds.chapter_rounds(ROOT, binaries.build_dir(ROOT), args.chapter,
                                        args.size, args.gpu)
    if found is None:
        sys.exit(f"draw: {args.gpu} has no result for {args.chapter}")
    return rounds.draw_rounds(found, mode)


def draw_cut(args, mode: str) -> bytes:
    """Chapter 17's last round, uncut and cut into slices, over the SMs in K-steps."""
    tool = binaries.require_binary(binaries.build_dir(ROOT), "lastround")
    found, _, _ = cut.chapter_cut(ROOT, tool, args.chapter, args.size, args.gpu)
    if found is None:
        sys.exit(f"draw: {args.gpu} has no result for {args.chapter}")
    return cut.draw_cut(found, mode)


def draw_warp_access(args, mode: str) -> bytes:
    """The addresses one warp touches in one step: chapters 01 and 02, or 07."""
    tool = binaries.require_binary(binaries.build_dir(ROOT), "warpmap")
    columns = [(slug, chapter_accesses(tool, slug, args.K, args.N)) for slug in args.chapters]
    return warp_access.draw_warp_access(columns, mode)


def draw_fragments(args, mode: str) -> bytes:
    """Chapter 14's mma tiles by lane and register, or its fragment loads in banks."""
    report = run_fragmap(binaries.require_binary(binaries.build_dir(ROOT), "fragmap"))
    if args.show == "tiles":
        return fragments.draw_fragments(fragments.fragment_tiles(report), mode)
    return fragments.draw_loads(fragments.load_grids(report), mode)


def draw_tail_rounds(args, mode: str) -> bytes:
    """Chapter 13's blocks over the SMs at one size, a panel per scheme."""
    build = binaries.build_dir(ROOT)
    size = tailplan.parse_size(args.size)
    found, _, _ = tail.chapter_tail_rounds(ROOT, build, binaries.require_binary(build, "tailplan"),
                                           size, args.schemes, args.gpu)
    if found is None:
        sys.exit(f"draw: {args.gpu} has no result to take its SMs from")
    return tail.draw_tail_rounds(found, mode)


def draw_tail_map(args, mode: str) -> bytes:
    """Chapter 13's % of cuBLAS over M x N and over K, beside cuBLAS's GFLOP/s."""
    found, _ = tail_map.chapter_tail_map(ROOT, args.gpu)
    if found is None:
        sys.exit(f"draw: {args.gpu} has no result for {tail_map.CHAPTER}")
    if found.missing():
        print(f"draw: {tail_map.missing_words(found)}", file=sys.stderr)
    return tail_map.draw_tail_map(found, mode)


def draw_accuracy(args, mode: str) -> bytes:
    """Part II's error against FP64 and TFLOP/s at one size, a point per method."""
    size = parse_size(args.size)
    found, _, _ = accuracy.accuracy_data(ROOT, args.results, size, args.gpu)
    if found is None:
        sys.exit(f"draw: {args.gpu} has no error against FP64 at {args.size} for "
                 f"{', '.join(args.results)}")
    if found.missing:
        print(f"draw: no point for {', '.join(found.missing)}", file=sys.stderr)
    return accuracy.draw_accuracy(found, mode)


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    figures = main.add_subparsers(dest="figure", required=True, metavar="FIGURE")
    for name, draw in (("sizes", draw_sizes), ("ladder", draw_ladder), ("mix", draw_mix),
                       ("bankmap", draw_bankmap), ("bankgrid", draw_bankgrid),
                       ("sweep", draw_sweep),
                       ("tiling", draw_tiling), ("roofline", draw_roofline),
                       ("stages", draw_stages), ("pipeline", draw_pipeline),
                       ("rounds", draw_rounds), ("cut", draw_cut),
                       ("warp-access", draw_warp_access), ("fragments", draw_fragments),
                       ("tail-rounds", draw_tail_rounds), ("accuracy", draw_accuracy),
                       ("tail-map", draw_tail_map)):
        # argparse formats help with %: a docstring's "% of cuBLAS" must be %%.
        figure = figures.add_parser(name, help=(draw.__doc__ or "").replace("%", "%%"))
        figure.set_defaults(draw=draw)
        figure.add_argument("--out", type=Path, required=True, help="the SVG file to write")
        figure.add_argument("--mode", choices=["light", "dark"], default="light",
                            help="the page mode it is drawn for (default light)")
        if name in ("sizes", "sweep"):
            figure.add_argument("chapter", help="a chapter folder's name, e.g. 12-final")
        if name in ("tiling", "stages", "pipeline", "rounds"):
            figure.add_argument("chapter", help="a chapter folder's name, e.g. 12-final, or "
                                                "a variant's result name, e.g. 12-final-swizzled")
        if name == "rounds":
            figure.add_argument("--size", type=int, default=3072,
                                help="N of the N x N output (default 3072)")
        if name == "cut":
            figure.add_argument("chapter", nargs="?", default="17-3xtf32-wgmma",
                                help="the result whose GPU gives the SMs (default "
                                     "17-3xtf32-wgmma)")
            figure.add_argument("--size", type=int, default=1536,
                                help="N of the N x N x N product (default 1536)")
        if name == "tail-rounds":
            figure.add_argument("size", help="N or MxNxK, e.g. 3072 or 512x512x16384")
            figure.add_argument("--schemes", nargs="+", default=["tiles", "split-k", "stream-k"],
                                choices=tailplan.SCHEMES,
                                help="a panel each (default: tiles split-k stream-k)")
        if name == "accuracy":
            figure.add_argument("results", nargs="+",
                                help="result names, e.g. 14-tf32 15-3xtf32 15-3xtf32-in-core")
            figure.add_argument("--size", default="4096", help="N or MxNxK (default 4096)")
        if name in ("sweep", "roofline", "rounds", "cut", "tail-rounds", "accuracy", "tail-map"):
            figure.add_argument("--gpu", default=results.REFERENCE_GPU,
                                help=f"the GPU's folder under results/ (default "
                                     f"{results.REFERENCE_GPU})")
        if name == "warp-access":
            figure.add_argument("chapters", nargs="+",
                                help="01-naive and/or 02-coalescing, or 07-vectorized")
            figure.add_argument("--K", type=int, default=64, help="floats per row of A")
            figure.add_argument("--N", type=int, default=64, help="floats per row of B and C")
        if name == "fragments":
            figure.add_argument("--show", choices=["tiles", "loads"], default="tiles",
                                help="the mma tiles by lane and register (default), or the "
                                     "fragment loads as bank grids, unpadded and padded")
        if name == "bankgrid":
            figure.add_argument("accesses", nargs="+", help="access names (bankmap --list)")
            figure.add_argument("--titles", help="a title per access, separated by ';'")
        if name == "bankmap":
            figure.add_argument("access", nargs="?", help="an access name (bankmap --list)")
            figure.add_argument("--stride", type=int, help="lane i reads word i * STRIDE")
            figure.add_argument("--width", type=int, default=4, help="bytes per lane: 4, 8, 16")
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.out.write_bytes(args.draw(args, args.mode))
    except (results.ResultsError, binaries.AnalysisError) as error:
        sys.exit(f"draw: {error}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
