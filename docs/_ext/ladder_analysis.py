"""Sphinx glue that puts the analysis of the chapters on the book's pages.

Computed at build time from the chapters' binaries (the build folder is
$LADDER_BUILD_DIR, default <repo>/build; a missing binary fails the build):

A <slug> names a result (a chapter, or one of its variants: 10-padding-rows):
the binary is bin/<chapter folder>, and the variant's kernels are the one its
``--describe`` names and the other paths of the same tiling
(ladder_tools.binaries.find_variant, ladder_tools.kernels.variant_kernels);
``:kernel:`` keeps those whose demangled name contains it.

``{ladder-resources} <slug>``  option ``:kernel:``
    per kernel of the variant: registers, shared memory, spills, and the
    occupancy they allow (ladder_tools.occupancy) when launched as
    ``--describe`` says (threads per block, dynamic shared memory); under
    the variant's own kernel, a row per GPU whose result reports its
    resources, and whether that agrees.
``{ladder-sass} <slug>``  options ``:kernel:``, ``:inner-trips:``
    the instruction mix of the K-loop of the variant's one kernel
    (ladder_tools.sass_mix); with ``:inner-trips: N`` also per K-tile.
``{ladder-mix-figure}``
    the K-loop mix of every chapter binary present (each chapter's own
    kernel), as stacked bars.
``{ladder-bankmap} <access>``  or ``:stride: S`` [``:width: 4|8|16``]; ``:figure:``
    a lane-to-bank table from build/bin/bankmap and its wavefronts.
``{ladder-bankgrid} <access> [<access> ...]``  option ``:titles: a; b; c``; body: the caption
    each access as a bank grid, 32 banks across and one row per wavefront,
    each lane's word in its bank, conflicted banks coloured (figures/bankgrid.py).
``{ladder-tiling} <slug>``  body: the caption
    which part of C a block, a warp and a thread own, to scale, drawn from
    the variant's ``--describe`` constants (figures/tiling.py).
``{ladder-warp-access} <slug> [<slug>]``  body: the caption
    the global addresses warp 0 touches in one step, as 32-byte sectors and
    128-byte lines, from build/bin/warpmap (the chapters' own index
    functions): 01-naive and/or 02-coalescing side by side, or 07-vectorized
    with its float4 copy of A into the transposed As (figures/warp_access.py).
``{ladder-fragments}``  option ``:show: tiles|loads`` (default tiles); body: the caption
    chapter 14's mma.sync.m16n8k8 tiles, each element labelled with the
    lane and register that hold it (tiles), or the bank grids of its A and
    B fragment loads, unpadded, padded and swizzled (loads); from build/bin/fragmap,
    the chapter's own fragment functions (figures/fragments.py).
``{ladder-roofline}``  option ``:gpu:``; body: the caption
    the GPU's roofline (baseline.json's ceilings) with every chapter at its
    GFLOP/s at 4096 and the intensity of its ``--describe`` tile constants
    (figures/roofline.py); a note when the GPU has no baseline or results.
``{ladder-stages} <slug>``  body: the caption
    the variant's shared-memory stages as lanes over a few K-steps, in the
    order the code imposes (figures/stages.py).
``{ladder-pipeline} <slug>``  body: the caption
    chapter 16's ring of stages as lanes over a few K-steps: the producer's
    TMA copies (on 3xTF32 they bring A's parts too) and the consumers'
    wgmma, and the barrier each completes (full, empty), in the order the
    code imposes (figures/pipeline.py); then, as a second figure, the
    handshake: the producer and the consumer warpgroups over STAGES + 2
    K-steps, each barrier completion with its pass and parity and an arrow
    to the work that waits on it (figures/handshake.py), its caption
    computed from the constants.
``{ladder-split} <slug>``  body: the caption
    chapter 17's split, from a 3xTF32 variant's constants: A split once by
    split_a(), a stage's tiles and their bytes, B's fragment split in
    registers, each step's three wgmma and the sums they write
    (figures/split.py).
``{ladder-rounds} <slug>``  options ``:size: N`` (required), ``:gpu:``; body: the caption
    the N x N output's blocks (--describe's BM, BN) in rounds over the SMs
    (the result's sm_count and blocks_per_sm; figures/rounds.py).
``{ladder-tail-rounds} <N or MxNxK>``  options ``:schemes:``, ``:gpu:``; body: the caption
    chapter 13's blocks over the SMs at that size, a panel per scheme
    (``:schemes:`` among default, tiles, split-k, stream-k, the variants, and
    big-tiles, chapter 12's launch; default ``tiles split-k stream-k``; two
    that run the same plan share a panel): the plans and segments from
    build/bin/tailplan, the SMs and blocks per SM from the 13-tail result and
    the binary (ladder_tools.tailplan, figures/tail.py).
``{ladder-tail-plans}``  options ``:sizes:`` (required), ``:gpu:``
    per size, the plan chapter 13 picks, its count's time over the "tiles"
    variant's plan (a prediction), and, where measured, the time of 13-tail
    over 13-tail-tiles and its % of cuBLAS.
``{ladder-tail-map}``  option ``:gpu:``; body: the caption
    chapter 13's % of cuBLAS over M x N at one K (a heat map, cuBLAS's
    GFLOP/s in each cell) and over K at one M = N, from the 13-tail result;
    sizes not measured are grey cells and gaps, and a note counts them
    (figures/tail_map.py).

``{ladder-gpus} [<chapter>]``
    per architecture the book names (build/bin/archs, ladder/arch.hpp), its
    GPUs and what runs the chapter there: its own variant, the variant its
    launcher picks where the own one's block does not fit, or why nothing
    does (ladder_tools.archs); without a chapter, one row per chapter built.

Read from results/<gpu>/ (or $LADDER_RESULTS_DIR); when the file is absent
the directive shows a note, not a warning:

``{ladder-ncu} <slug> [<slug> ...]``  options ``:predicted-ld:``, ``:predicted-st:``
    ncu's shared-memory and global-load counters per chapter kernel; a
    prediction (a number, or a bankmap access name whose wavefronts are the
    model; one for all chapters or one per chapter) adds a model column.
``{ladder-sweep} <chapter>``
    the autotuning sweep: every configuration as a point, the ten fastest;
    ``:compare: NAME`` adds what a two-valued parameter does across the
    configurations that differ in it alone.
``{ladder-transpose}``
    chapter 10's transpose exercise, per size, with ncu's counters if any.
``{ladder-issue} <slug>``
    where the issue slots go (results/<gpu>/issue.json): the chapter's kernel
    beside cuBLAS's, instructions, FFMA share, issue rate, stall reasons.

A sweep or transpose file whose source has changed is marked stale and
listed in ladder-stale.json, like a chapter result. Computing lives in
code/ladder_tools (one module per topic), drawing in figures/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from figures import bankgrid as bankgrid_figure
from figures import bankmap as bankmap_figure
from figures import cut as cut_figure
from figures import fragments as fragments_figure
from figures import handshake as handshake_figure
from figures import mix as mix_figure
from figures import pipeline as pipeline_figure
from figures import roofline as roofline_figure
from figures import rounds as rounds_figure
from figures import split as split_figure
from figures import stages as stages_figure
from figures import sweep as sweep_figure
from figures import tail as tail_figure
from figures import tail_map as tail_map_figure
from figures import tiling as tiling_figure
from figures import warp_access as warp_access_figure
from ladder_base import (
    LadderMixin,
    not_measured_box,
    provenance_paragraph,
    stale_notice,
    stale_result_box,
)
from ladder_nodes import figure, paragraph, table, with_phone_drawing
from ladder_tools import archs as archs_tools
from ladder_tools import results, tailplan
from ladder_tools.bankmap import bank_rows, bank_summary, run_bankmap
from ladder_tools.binaries import (
    AnalysisError,
    chapter_binaries,
    describe,
    find_variant,
    require_binary,
    tool_json,
)
from ladder_tools.formatting import DASH, format_gflops, format_size
from ladder_tools.fragmap import run_fragmap
from ladder_tools.issue import issue_kernels, issue_path, issue_rows, load_issue
from ladder_tools.kernels import (
    KERNEL_PREFIX,
    folded_name,
    pick_kernel,
    select_kernels,
    short_name,
    variant_kernels,
)
from ladder_tools.mix import kernel_mix, mix_table, per_k_tile_sum
from ladder_tools.ncu import (
    entry_kernels,
    load_ncu,
    ncu_entry,
    ncu_header,
    ncu_path,
    ncu_row,
    parse_model,
)
from ladder_tools.resources import (
    RESOURCES_HEADER,
    Launch,
    ReportedResources,
    arch_of_capability,
    kernel_resources,
    resources_rows,
)
from ladder_tools.sweep_results import (
    Sweep,
    committed_config,
    load_sweep,
    sweep_pairs,
    sweep_path,
    sweep_rows,
)
from ladder_tools.transpose import (
    TRANSPOSE_HEADER,
    load_transpose,
    transpose_counter_rows,
    transpose_path,
    transpose_rows,
)
from ladder_tools.warpmap import chapter_accesses


class _AnalysisDirective(LadderMixin, SphinxDirective):
    """Binaries from the build folder, freshness of results files, and
    errors as -W failures."""

    def binary(self, name: str) -> Path:
        """build/bin/<name>; a missing one fails the build with how to make it."""
        try:
            path = require_binary(self.build_dir, name)
        except AnalysisError as error:
            raise self.error(f"{self.name}: {error}") from error
        self.track(path)
        return path

    def variant(self, slug: str) -> tuple[Path, dict]:
        """The binary that measures result ``slug`` and its --describe entry
        for that variant; the binary is tracked, so a rebuild re-reads it."""
        path, variant = find_variant(self.repo_root, self.build_dir, slug)
        self.track(path)
        return path, variant

    def run(self) -> list[nodes.Node]:
        try:
            return self.render()
        except (AnalysisError, results.ResultsError) as error:
            raise self.error(f"{self.name}: {error}") from error

    def render(self) -> list[nodes.Node]:
        raise NotImplementedError

    def check_fresh(self, gpu: str, path: Path, content: dict, what: str) -> nodes.Node | None:
        """A warning box when a results file (a sweep, the transpose) was
        measured on other code than the tree's, recorded in the stale report
        like a stale chapter result; None when it is fresh."""
        provenance = content.get("provenance") or {}
        for name in provenance.get("inputs") or {}:
            self.track(self.repo_root / name)
        stale = results.staleness(provenance, self.repo_root)
        if stale is None:
            return None
        self.record_stale(gpu, content.get("chapter") or content.get("program"), path, stale)
        return stale_notice(self.env, f"Stale {what}", provenance.get("gpu", gpu))

    def entry_freshness(self, gpu: str, path: Path, content: dict, slug: str,
                        what: str) -> list[nodes.Node]:
        """check_fresh() for one chapter's entry of a file that gathers
        chapters (ncu.json, issue.json): each entry records the inputs of its
        own program. Nothing when the chapter has no entry."""
        entry = (content.get("chapters") or {}).get(slug)
        if not isinstance(entry, dict):
            return []
        recorded = {**(entry.get("measured") or {}), "gpu": content.get("gpu", gpu)}
        box = self.check_fresh(gpu, path, {"provenance": recorded, "chapter": slug},
                               f"{what} of {slug}")
        return [box] if box is not None else []

    def gpu_block(self, title: str) -> nodes.container:
        block = nodes.container(classes=["ladder-analysis"])
        block += nodes.rubric(title, title)
        return block


# --------------------------------------------------------------------------
# {ladder-resources} <slug>
# --------------------------------------------------------------------------


class ResourcesDirective(_AnalysisDirective):
    """Registers, shared memory, spills and occupancy of a chapter's kernels."""

    required_arguments = 1
    option_spec = {"kernel": directives.unchanged_required}

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        path, variant = self.variant(slug)
        part = self.options.get("kernel")
        kernels = select_kernels(variant_kernels(kernel_resources(path), variant), part)
        if not kernels:
            raise AnalysisError(f"{path} has no {KERNEL_PREFIX}* kernel of {slug} whose name "
                                f"contains {part!r}")
        reported = self.reported(slug, variant, kernels)
        rows = resources_rows(kernels, Launch.of(variant), [r for r, _ in reported])
        for row in rows:
            row[0] = folded_name(row[0])
        output: list[nodes.Node] = [table([RESOURCES_HEADER], rows,
                                          classes=["ladder-table", "ladder-resources"])]
        for _, result in reported:
            if result.stale:
                output.insert(0, stale_result_box(self.env, result))
                self.note_stale(result)
        output.append(provenance_paragraph(
            self.env,
            "Computed: registers and shared memory as the compiler reports them, and the "
            "blocks per SM they allow with the threads per block and dynamic shared memory "
            f"that {slug} launches the kernel with. Reported: the same numbers as the CUDA "
            "runtime reports them on the GPU, blocks per SM from its occupancy query."
            + _workspace_words(variant, self.variant_results(slug))))
        return output

    def variant_results(self, slug: str) -> list[results.ChapterResult]:
        """Every GPU's result of the variant `slug`."""
        return results.load_chapter_results(self.results_root, slug, self.repo_root)

    def reported(self, slug: str, variant: dict,
                 kernels: list[dict]) -> list[tuple[ReportedResources, results.ChapterResult]]:
        """Every GPU result of the variant that has "resources": those of its
        own kernel, so none when the table leaves that kernel out."""
        for gpu in results.gpu_folders(self.results_root):
            self.track(results.chapter_result_path(self.results_root, gpu, slug))
        kernel = variant["kernel"]["name"]
        if all(k["mangled"] != kernel for k in kernels):
            return []
        found = []
        for result in results.load_chapter_results(self.results_root, slug, self.repo_root):
            resources = result.data.get("resources")
            if isinstance(resources, dict) and isinstance(resources.get("threads_per_block"), int):
                arch = arch_of_capability(result.provenance.get("compute_capability"))
                found.append((ReportedResources(result.provenance["gpu"], arch, resources,
                                                kernel), result))
        return found


def _workspace_words(variant: dict, measured: list[results.ChapterResult]) -> str:
    """' Besides, a workspace ...' when --describe says the variant asks the
    harness for one (chapter 13's copies and slices), with the largest each
    GPU's result recorded and at which size; else ''."""
    if not variant.get("workspace"):
        return ""
    words = (" Besides, the launcher asks the harness for a workspace in global memory, "
             "as large as its plan for each product needs.")
    for result in measured:
        used = [e for e in result.data["sizes"] if e.get("workspace_bytes")]
        if not used:
            words += f" On the {result.provenance['gpu']}, no measured size used one."
            continue
        largest = max(used, key=lambda e: e["workspace_bytes"])
        size = int(largest["workspace_bytes"])
        words += (f" On the {result.provenance['gpu']}, {len(used)} of the "
                  f"{len(result.data['sizes'])} measured sizes used one, the largest "
                  f"{size / 2**20:,.1f} MiB ({size:,} bytes) at "
                  f"{largest['M']} × {largest['N']} × {largest['K']}.")
    return words


# --------------------------------------------------------------------------
# {ladder-sass} <slug> and {ladder-mix-figure}
# --------------------------------------------------------------------------


class SassDirective(_AnalysisDirective):
    """The K-loop's instruction mix of a chapter's kernel."""

    required_arguments = 1
    option_spec = {"kernel": directives.unchanged_required, "inner-trips": directives.positive_int}

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        path, variant = self.variant(slug)
        trips = self.options.get("inner-trips")
        kernel = pick_kernel(variant_kernels(kernel_mix(path, trips), variant),
                             self.options.get("kernel"), path)
        loop = kernel["loop"]
        name = short_name(kernel["name"])
        if loop is None:
            return [paragraph(f"`{name}` has no loop in its SASS ({kernel['arch']}).")]
        if trips is not None and "per_k_tile" not in loop:
            raise AnalysisError(
                f":inner-trips: {trips} given, but the K-loop of {name} has no inner loop")
        header, rows = mix_table(loop)
        inner = len(loop["inner_loops"])
        where = (f"The K-loop of `{name}` in {slug}, {kernel['arch']} SASS: static counts, "
                 "each instruction of the body once")
        where += (f"; it holds {inner} inner loop{'s' if inner > 1 else ''}" if inner else "")
        where += per_k_tile_sum(loop) + "."
        return [table([header], rows, classes=["ladder-table", "ladder-sass"]),
                provenance_paragraph(self.env, where)]


class MixFigureDirective(_AnalysisDirective):
    """Every chapter binary's K-loop mix as stacked horizontal bars."""

    def render(self) -> list[nodes.Node]:
        found = chapter_binaries(self.repo_root, self.build_dir)
        for _, path in found:
            self.track(path)
        bars = mix_figure.mix_bars(found)
        if not bars:
            raise AnalysisError(
                f"no chapter binary in {self.build_dir / 'bin'}: build the chapters first")
        alt = "Instructions in each chapter's K-loop body, by kind"
        node = figure(lambda mode: mix_figure.draw_mix(bars, mode), alt=alt,
                      caption="The K-loop body of each chapter's kernel, sm_90 SASS: "
                              "instructions by kind (static counts), and the FFMA share.")
        # On a phone, a narrow drawing with the key under the bars.
        return [with_phone_drawing(node, lambda mode: mix_figure.draw_mix(bars, mode, True),
                                   alt)]


# --------------------------------------------------------------------------
# {ladder-bankmap} <access>
# --------------------------------------------------------------------------


class BankmapDirective(_AnalysisDirective):
    """A lane-to-bank table of one warp-wide shared access, from bankmap."""

    optional_arguments = 1
    option_spec = {"stride": directives.nonnegative_int, "width": directives.positive_int,
                   "figure": directives.flag}

    def render(self) -> list[nodes.Node]:
        tool = self.binary("bankmap")
        name = self.arguments[0] if self.arguments else None
        if name is not None and "stride" in self.options:
            raise AnalysisError("give an access name or :stride:, not both")
        if name is None and "stride" not in self.options:
            raise AnalysisError(
                "give an access name (bankmap --list) or :stride: S [:width: W]")
        if "width" in self.options and name is not None:
            raise AnalysisError(":width: goes with :stride:, a named access has its own")
        report = run_bankmap(tool, name, self.options.get("stride"), self.options.get("width", 4))
        summary = nodes.paragraph(classes=["ladder-bank-summary"])
        summary += nodes.strong(bank_summary(report), bank_summary(report))
        summary += nodes.Text(f": {report['what']}; {report['width_bytes']}-byte access.")
        output: list[nodes.Node] = [
            table([[("lane \u2192 bank", 8)]], bank_rows(report),
                  classes=["ladder-table", "ladder-bankmap"]),
            summary]
        if "figure" in self.options:
            output.append(figure(
                lambda mode: bankmap_figure.draw_bankmap(report, mode),
                alt=f"Lane-to-bank map of {report['what']}",
                caption=f"{report['what']}: the bank each lane of a warp accesses; "
                        f"{bank_summary(report)}."))
        return output


# --------------------------------------------------------------------------
# {ladder-bankgrid} <access> [<access> ...]
# --------------------------------------------------------------------------


class BankgridDirective(_AnalysisDirective):
    """Warp-wide shared accesses as bank grids, from bankmap; ``:titles:``
    names each panel's layout (separated by ``;``), the body is the caption."""

    required_arguments = 1
    optional_arguments = 5
    has_content = True
    option_spec = {"titles": directives.unchanged_required}

    def render(self) -> list[nodes.Node]:
        tool = self.binary("bankmap")
        names = self.arguments
        titles = ([t.strip() for t in self.options["titles"].split(";")]
                  if "titles" in self.options else names)
        if len(titles) != len(names):
            raise AnalysisError(f":titles: has {len(titles)} titles for {len(names)} accesses")
        grids = [bankgrid_figure.bank_grid(run_bankmap(tool, name), title)
                 for name, title in zip(names, titles, strict=True)]
        caption = " ".join(line.strip() for line in self.content if line.strip()) or (
            "Each lane's word in its bank, one row per wavefront.")
        output = natural_figure(lambda mode: bankgrid_figure.draw_bankgrid(grids, mode),
                                bankgrid_figure.alt_text(grids), caption, self.state,
                                self.lineno)
        # 32 cells across stay legible only near the natural width: a column
        # narrower than that (a phone) scrolls the figure sideways instead.
        figure_of(output)["classes"].append("ladder-scroll")
        return output


# --------------------------------------------------------------------------
# {ladder-tiling} <slug>
# --------------------------------------------------------------------------


class _ConstantsFigureDirective(_AnalysisDirective):
    """A figure drawn from a chapter's --describe constants alone, its
    directive's body the caption: `load(repo_root, build_dir, slug)` gives
    the figure's data and the files it read, `draw(data, mode)` the SVG,
    `alt(data)` its text, `default_caption(slug)` the caption when the body
    is empty."""

    required_arguments = 1
    has_content = True
    # What a subclass gives (static methods, mostly the figure module's own).
    load: Callable[[Path, Path, str], tuple[Any, list[Path]]]
    draw: Callable[[Any, str], bytes]
    alt: Callable[[Any], str]
    default_caption: Callable[[str], str]

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        found, read = self.load(self.repo_root, self.build_dir, slug)
        for path in read:
            self.track(path)
        caption = " ".join(line.strip() for line in self.content if line.strip()) or (
            self.default_caption(slug))
        return natural_figure(lambda mode: self.draw(found, mode), self.alt(found), caption,
                              self.state, self.lineno)


class TilingDirective(_ConstantsFigureDirective):
    """What a block, a warp and a thread own of C, drawn from the constants
    the chapter's binary reports."""

    load = staticmethod(tiling_figure.chapter_tiling)
    draw = staticmethod(tiling_figure.draw_tiling)
    alt = staticmethod(tiling_figure.alt_text)

    @staticmethod
    def default_caption(slug: str) -> str:
        return f"What a block, a warp and a thread of {slug} compute of C, to scale."


# --------------------------------------------------------------------------
# {ladder-warp-access} <slug> [<slug>]
# --------------------------------------------------------------------------


class WarpAccessDirective(_AnalysisDirective):
    """The global addresses one warp touches in one step, drawn from what
    warpmap computes with the chapters' index functions; the body is the
    caption."""

    required_arguments = 1
    optional_arguments = 1
    has_content = True

    def render(self) -> list[nodes.Node]:
        tool = self.binary("warpmap")
        columns = [(slug, chapter_accesses(tool, slug)) for slug in self.arguments]
        caption = " ".join(line.strip() for line in self.content if line.strip()) or (
            "The addresses one warp touches in one step, in 32-byte sectors.")
        return natural_figure(lambda mode: warp_access_figure.draw_warp_access(columns, mode),
                              warp_access_figure.alt_text(columns), caption, self.state,
                              self.lineno)


# --------------------------------------------------------------------------
# {ladder-fragments}
# --------------------------------------------------------------------------


class FragmentsDirective(_AnalysisDirective):
    """Chapter 14's mma fragments (``:show: tiles``) or the bank grids of the
    loads that feed them (``:show: loads``), from what fragmap computes with
    the chapter's fragment functions; the body is the caption."""

    has_content = True
    option_spec = {"show": lambda text: directives.choice(text, ("tiles", "loads"))}

    def render(self) -> list[nodes.Node]:
        report = run_fragmap(self.binary("fragmap"))
        caption = " ".join(line.strip() for line in self.content if line.strip())
        if self.options.get("show", "tiles") == "tiles":
            tiles = fragments_figure.fragment_tiles(report)
            output = natural_figure(lambda mode: fragments_figure.draw_fragments(tiles, mode),
                                    fragments_figure.alt_text(tiles),
                                    caption or "Which lane holds each element of the mma tiles.",
                                    self.state, self.lineno)
            # 17 cells across, each with a register's name in its corner: a
            # phone scrolls the figure rather than shrink those to 6 px.
            figure_of(output)["classes"].append("ladder-scroll")
            return output
        grids = fragments_figure.load_grids(report)
        output = natural_figure(lambda mode: fragments_figure.draw_loads(grids, mode),
                                bankgrid_figure.alt_text(grids),
                                caption or "The fragment loads in banks, one row per wavefront.",
                                self.state, self.lineno)
        # As {ladder-bankgrid}: 32 cells across.
        figure_of(output)["classes"].append("ladder-scroll")
        return output


# --------------------------------------------------------------------------
# {ladder-roofline}
# --------------------------------------------------------------------------


class RooflineDirective(_AnalysisDirective):
    """The GPU's roofline with every chapter on it; the directive's body is
    the caption, to which the figure adds how the intensity is counted."""

    has_content = True
    option_spec = {"gpu": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        gpu = self.options.get("gpu", results.REFERENCE_GPU)
        found, read, used = roofline_figure.roofline_data(self.repo_root, self.build_dir, gpu)
        for path in read:
            self.track(path)
        for result in used:
            if result.stale:
                self.note_stale(result)
        if found is None:
            return [not_measured_box(self.env, "Not measured yet",
                                     f"No roofline: {gpu} has no baseline ceilings or no chapter "
                                     "measured at 4096.")]
        body = " ".join(line.strip() for line in self.content if line.strip()) or (
            f"The roofline of the {found.gpu} with every chapter on it.")
        stale = [r.label for r in used if r.stale]
        caption = f"{body} {roofline_figure.INTENSITY_NOTE}" + (
            f" Stale: {', '.join(stale)}." if stale else "")
        return natural_figure(lambda mode: roofline_figure.draw_roofline(found, mode),
                              roofline_figure.alt_text(found), caption, self.state, self.lineno)


def figure_of(output: list[nodes.Node]) -> nodes.figure:
    """The figure that natural_figure's output starts with."""
    node = output[0]
    assert isinstance(node, nodes.figure)
    return node


def natural_figure(draw_svg, alt: str, caption: str, state, lineno) -> list[nodes.Node]:
    """A light and dark figure shown at its natural width where the column is
    wider (the theme's max-width: 100% shrinks it on a phone), so that its
    text is the size of the prose, with its caption's inline markup (code,
    roles) parsed as in the prose."""
    drawings = {}

    def draw(mode: str) -> bytes:
        drawings[mode] = draw_svg(mode)
        return drawings[mode]

    node = figure(draw, alt=alt, caption=caption)
    width = tiling_figure.natural_width_px(drawings["light"])
    for image in node.findall(nodes.image):
        image["width"] = f"{width}px"
        image["classes"].append("align-center")
    parsed, messages = state.inline_text(caption, lineno)
    node[-1] = nodes.caption(caption, "", *parsed)
    return [node, *messages]


# --------------------------------------------------------------------------
# {ladder-stages} <slug>
# --------------------------------------------------------------------------


class StagesDirective(_ConstantsFigureDirective):
    """A chapter's shared-memory stages over a few K-steps."""

    load = staticmethod(stages_figure.chapter_stages)
    draw = staticmethod(stages_figure.draw_stages)
    alt = staticmethod(stages_figure.alt_text)

    @staticmethod
    def default_caption(slug: str) -> str:
        return f"The shared-memory stages of {slug}, in the order the code imposes."


# --------------------------------------------------------------------------
# {ladder-pipeline} <slug>
# --------------------------------------------------------------------------


class PipelineDirective(_ConstantsFigureDirective):
    """Chapter 16's stages between the producer and the consumers over a few
    K-steps; with ``:handshake:``, a second figure of the barriers each side
    waits on and arrives at (figures/handshake.py)."""

    option_spec = {"handshake": directives.flag}

    load = staticmethod(pipeline_figure.chapter_pipeline)
    draw = staticmethod(pipeline_figure.draw_pipeline)
    alt = staticmethod(pipeline_figure.alt_text)

    @staticmethod
    def default_caption(slug: str) -> str:
        return (f"The stages of {slug} between producer and consumers, in the order the code "
                "imposes.")

    def render(self) -> list[nodes.Node]:
        ring = super().render()
        if "handshake" not in self.options:
            return ring
        found, _ = handshake_figure.chapter_handshake(self.repo_root, self.build_dir,
                                                      self.arguments[0])
        return ring + natural_figure(lambda mode: handshake_figure.draw_handshake(found, mode),
                                     handshake_figure.alt_text(found),
                                     handshake_figure.caption_words(found), self.state,
                                     self.lineno)


# --------------------------------------------------------------------------
# {ladder-split} <slug>
# --------------------------------------------------------------------------


class SplitDirective(_ConstantsFigureDirective):
    """Chapter 17's split of A (once, in global memory) and of B (in
    registers), a stage's tiles, and each step's three wgmma."""

    load = staticmethod(split_figure.chapter_split)
    draw = staticmethod(split_figure.draw_split)
    alt = staticmethod(split_figure.alt_text)

    def default_caption(self, slug: str) -> str:
        found, _ = split_figure.chapter_split(self.repo_root, self.build_dir, slug)
        return split_figure.caption_words(found)


# --------------------------------------------------------------------------
# {ladder-rounds} <slug>  :size: N
# --------------------------------------------------------------------------


class _SizeFigureDirective(_AnalysisDirective):
    """A figure of one result at one size, N (``:size:``); the body is the
    caption. A subclass says where its data comes from (load()) and how it
    is drawn (draw(), alt(), and the words where the GPU has no result)."""

    required_arguments = 1
    has_content = True
    option_spec = {"size": directives.positive_int, "gpu": directives.unchanged}

    # How a subclass draws its data (static methods of the figure module).
    draw: Callable[[Any, str], bytes]
    alt: Callable[[Any], str]

    def load(self, slug: str, size: int, gpu: str):
        """(the figure's data or None, the files read, the result used)."""
        raise NotImplementedError

    def missing(self, slug: str, gpu: str) -> str:
        """What the page says where the GPU has no result to draw from."""
        raise NotImplementedError

    def default_caption(self, slug: str, found) -> str:
        """The caption when the directive's body is empty."""
        raise NotImplementedError

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        if "size" not in self.options:
            raise self.error(f"{self.name}: give :size: N")
        gpu = self.options.get("gpu", results.REFERENCE_GPU)
        found, read, result = self.load(slug, self.options["size"], gpu)
        for path in read:
            self.track(path)
        if found is None:
            return [not_measured_box(self.env, "Not measured yet", self.missing(slug, gpu))]
        if result is not None and result.stale:
            self.note_stale(result)
        caption = " ".join(line.strip() for line in self.content if line.strip()) or (
            self.default_caption(slug, found))
        return natural_figure(lambda mode: self.draw(found, mode), self.alt(found), caption,
                              self.state, self.lineno)


class RoundsDirective(_SizeFigureDirective):
    """An N x N output's blocks in rounds over the SMs."""

    def load(self, slug, size, gpu):
        return rounds_figure.chapter_rounds(self.repo_root, self.build_dir, slug, size, gpu)

    def missing(self, slug, gpu):
        return f"No rounds: {gpu} has no result for {slug}."

    def default_caption(self, slug, found):
        return f"The blocks of {slug} at {found.size} in rounds over the SMs."

    draw = staticmethod(rounds_figure.draw_rounds)
    alt = staticmethod(rounds_figure.alt_text)


class CutDirective(_SizeFigureDirective):
    """Chapter 17's last round uncut and cut into slices, over the SMs in
    K-steps (build/bin/lastround), the SMs from the result ``slug``."""

    def load(self, slug, size, gpu):
        return cut_figure.chapter_cut(self.repo_root, self.binary("lastround"), slug, size, gpu)

    def missing(self, slug, gpu):
        return f"No slices: {gpu} has no result for {slug} to take its SMs from."

    def default_caption(self, slug, found):
        return f"The blocks of {slug} at {found.size}, uncut and cut, over the SMs."

    draw = staticmethod(cut_figure.draw_cut)
    alt = staticmethod(cut_figure.alt_text)


# --------------------------------------------------------------------------
# {ladder-tail-rounds} <size>  :schemes:    {ladder-tail-plans}  :sizes:    {ladder-tail-map}
# --------------------------------------------------------------------------


class TailRoundsDirective(_AnalysisDirective):
    """Chapter 13's blocks over the SMs at one size, a panel per scheme; the
    body is the caption."""

    required_arguments = 1
    has_content = True
    option_spec = {"schemes": directives.unchanged_required, "gpu": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        size = tailplan.parse_size(self.arguments[0])
        schemes = self.options.get("schemes", "tiles split-k stream-k").split()
        gpu = self.options.get("gpu", results.REFERENCE_GPU)
        found, read, result = tail_figure.chapter_tail_rounds(
            self.repo_root, self.build_dir, self.binary("tailplan"), size, schemes, gpu)
        for path in read:
            self.track(path)
        self.track(results.chapter_result_path(self.results_root, gpu, tailplan.CHAPTER))
        if found is None:
            return [not_measured_box(self.env, "Not measured yet",
                                     f"No rounds: {gpu} has no result to take its SMs from.")]
        if result is not None and result.stale:
            self.note_stale(result)
        caption = " ".join(line.strip() for line in self.content if line.strip()) or (
            f"The blocks of chapter 13 at {tailplan.size_text(size)} over the SMs.")
        alt = tail_figure.alt_text(found)
        output = natural_figure(lambda mode: tail_figure.draw_tail_rounds(found, mode), alt,
                                caption, self.state, self.lineno)
        # Shrunk to a phone's column its text would be 7 px high: a phone
        # has a narrow drawing of its own.
        with_phone_drawing(figure_of(output),
                           lambda mode: tail_figure.draw_tail_rounds(found, mode, True), alt)
        return output


class TailPlansDirective(_AnalysisDirective):
    """Chapter 13's plan per size, the count's prediction against the "tiles"
    variant, and what was measured."""

    option_spec = {"sizes": directives.unchanged_required, "gpu": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        if "sizes" not in self.options:
            raise self.error(f"{self.name}: give :sizes: N MxNxK ...")
        sizes = tailplan.parse_sizes(self.options["sizes"])
        gpu = self.options.get("gpu", results.REFERENCE_GPU)
        tool = self.binary("tailplan")
        found, read, result = tailplan.tail_gpu(self.repo_root, self.build_dir, gpu)
        for path in read:
            self.track(path)
        measured = {}
        for variant in ("default", "tiles"):
            slug = tailplan.result_slug(variant)
            self.track(results.chapter_result_path(self.results_root, gpu, slug))
            measured[variant] = results.load_chapter_result(self.results_root, gpu, slug,
                                                            self.repo_root)
        if found is None:
            return [not_measured_box(self.env, "Not measured yet",
                                     f"No plans: {gpu} has no result to take its SMs from.")]
        plans = tailplan.run_plans(tool, found, sizes)
        output: list[nodes.Node] = []
        for stale in (r for r in measured.values() if r is not None and r.stale):
            self.note_stale(stale)
            output.append(stale_result_box(self.env, stale))
        output.append(table([tailplan.PLANS_HEADER],
                            tailplan.plans_rows(plans, measured["default"], measured["tiles"]),
                            classes=["ladder-table", "ladder-tail-plans"]))
        line = (f"{found.name}: {found.whence}. Predicted: the count "
                "(ch13::cost(), Small's weighted by its slowdown as the launcher weighs it) "
                "of the plan over that of the \"tiles\" variant's, which is "
                f"{tailplan.tiles_words(plans)}. Measured: the median time of 13-tail over "
                "that of 13-tail-tiles")
        if measured["default"] is None or measured["tiles"] is None:
            line += " (not measured yet)"
        output.append(provenance_paragraph(self.env, line + "."))
        return output



class TailMapDirective(_AnalysisDirective):
    """Chapter 13's % of cuBLAS over a grid of M and N and over K, beside
    cuBLAS's GFLOP/s; the body is the caption."""

    has_content = True
    option_spec = {"gpu": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        gpu = self.options.get("gpu", results.REFERENCE_GPU)
        self.track(results.chapter_result_path(self.results_root, gpu, tail_map_figure.CHAPTER))
        found, result = tail_map_figure.chapter_tail_map(self.repo_root, gpu)
        if found is None:
            return [not_measured_box(self.env, "Not measured yet",
                                     f"No map: {gpu} has no result for {tail_map_figure.CHAPTER}.")]
        if result.stale:
            self.note_stale(result)
        body = " ".join(line.strip() for line in self.content if line.strip()) or (
            f"Chapter 13's % of cuBLAS on the {found.gpu}.")
        # The figure itself says how many sizes are not measured yet.
        caption = body + (f" Stale: {found.gpu}." if result.stale else "")
        return natural_figure(lambda mode: tail_map_figure.draw_tail_map(found, mode),
                              tail_map_figure.alt_text(found), caption, self.state, self.lineno)


# --------------------------------------------------------------------------
# {ladder-ncu} <slug> [<slug> ...]
# --------------------------------------------------------------------------


def _split_columns(header: tuple[list, list[str]], rows: list[list], keep: int):
    """A table with two header rows, cut in two so that each fits the column:
    the first ``keep`` columns (which row it is) in both, then the first
    group of the top header row in one table and the other groups in the
    second. Yields (header rows, body rows) per table."""
    top, bottom = header
    spans = [cell[1] if isinstance(cell, tuple) else 1 for cell in top]
    kept = len(top[:keep])
    if sum(spans[:kept]) != keep or len(top) <= kept + 1:
        yield [top, bottom], rows
        return
    cut = keep + spans[kept]
    for first, last, groups in ((keep, cut, top[kept:kept + 1]), (cut, None, top[kept + 1:])):
        yield ([top[:kept] + groups, bottom[:keep] + bottom[first:last]],
               [row[:keep] + row[first:last] for row in rows])


class NcuDirective(_AnalysisDirective):
    """ncu's shared-memory and global-load counters of chapters' kernels."""

    required_arguments = 1
    optional_arguments = 20
    option_spec = {"predicted-ld": directives.unchanged_required,
                   "predicted-st": directives.unchanged_required}

    def render(self) -> list[nodes.Node]:
        slugs = self.arguments
        model_ld = parse_model(self.options.get("predicted-ld"), len(slugs), self.model)
        model_st = parse_model(self.options.get("predicted-st"), len(slugs), self.model)
        models = ("predicted-ld" in self.options, "predicted-st" in self.options)
        output: list[nodes.Node] = []
        for gpu in results.gpu_folders(self.results_root):
            self.track(ncu_path(self.results_root, gpu))
            ncu = load_ncu(self.results_root, gpu)
            if ncu is None:
                continue
            rows = []
            for slug, ld, st in zip(slugs, model_ld, model_st, strict=True):
                entry = ncu_entry(ncu, slug)
                kernels = entry_kernels(entry) if entry else []
                if not kernels:
                    rows.append([slug, "not measured"] + [DASH] * (
                        len(ncu_header(models)[1]) - 2))
                for kernel in kernels:
                    rows.append(ncu_row(slug, kernel, ld, st, models))
            block = self.gpu_block(ncu.get("gpu", gpu))
            for slug in slugs:
                block += self.entry_freshness(gpu, ncu_path(self.results_root, gpu),
                                              ncu, slug, "counters")
            for header, part in _split_columns(ncu_header(models), rows, keep=2):
                block += table(header, part, classes=["ladder-table", "ladder-ncu"])
            sizes = sorted({str((ncu_entry(ncu, slug) or {}).get("size"))
                            for slug in slugs} - {"None"})
            line = (f"Nsight Compute, one launch at {', '.join(sizes) or '?'}; "
                    f"{ncu.get('gpu', gpu)}")
            # Each entry records the date it was measured; older files only
            # say when a run last wrote the file, which may have kept earlier
            # chapters' counters, so the line says "on or before".
            dates = sorted({e["measured"].get("date", "")[:10]
                            for e in (ncu_entry(ncu, slug) or {} for slug in slugs)
                            if isinstance(e.get("measured"), dict)} - {""})
            if dates:
                line += f" \u00b7 measured {' and '.join(dates)}"
            elif ncu.get("date"):
                line += f" \u00b7 measured on or before {ncu['date'][:10]}"
            if any(models):
                line += ". Model: wavefronts per instruction that the bank model predicts"
            block += provenance_paragraph(self.env, line + ".")
            output.append(block)
        if not output:
            return [not_measured_box(self.env, "Not measured yet",
                                     "No GPU has ncu counters yet: the measure command records "
                                     "them where Nsight Compute (`ncu`) is installed.")]
        return output

    def model(self, access: str) -> int:
        """The bank model's wavefronts for one warp-wide access named in bankmap."""
        return run_bankmap(self.binary("bankmap"), access)["wavefronts"]


# --------------------------------------------------------------------------
# {ladder-issue} <slug>
# --------------------------------------------------------------------------


class IssueDirective(_AnalysisDirective):
    """The chapter's kernel beside cuBLAS's: how often the schedulers issue,
    what, and why the warps waited, as ncu read them (issue.json)."""

    required_arguments = 1

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        output: list[nodes.Node] = []
        for gpu in results.gpu_folders(self.results_root):
            self.track(issue_path(self.results_root, gpu))
            issue = load_issue(self.results_root, gpu)
            entry = issue.get("chapters", {}).get(slug) if issue else None
            if issue is None or not isinstance(entry, dict):
                continue
            pair = issue_kernels(entry)
            if pair is None:
                raise self.error(f"{self.name}: {issue_path(self.results_root, gpu)}: "
                                 f"{slug} does not have one chapter kernel and one cuBLAS kernel")
            (_, ours), (cublas_name, theirs) = pair
            block = self.gpu_block(issue.get("gpu", gpu))
            block += self.entry_freshness(gpu, issue_path(self.results_root, gpu), issue,
                                          slug, "issue profile")
            block += table([["", slug, "cuBLAS"]], issue_rows(ours, theirs),
                            classes=["ladder-table", "ladder-issue"])
            line = (f"Nsight Compute, one launch of each at {entry.get('size', '?')}; "
                    f"{issue.get('gpu', gpu)}")
            stamp = entry.get("measured")
            if isinstance(stamp, dict) and stamp.get("date"):
                line += f" \u00b7 measured {stamp['date'][:10]}"
            line += (f". cuBLAS's kernel: `{cublas_name}`. A stall row is the cycles per issued "
                     "instruction that an average warp spent waiting for that reason")
            block += provenance_paragraph(self.env, line + ".")
            output.append(block)
        if not output:
            return [not_measured_box(self.env, "Not measured yet",
                                     f"No GPU has an issue profile of {slug} yet: the "
                                     "measure command records one where Nsight Compute "
                                     "(`ncu`) is installed.")]
        return output


# --------------------------------------------------------------------------
# {ladder-sweep} <chapter>
# --------------------------------------------------------------------------


class SweepDirective(_AnalysisDirective):
    """The autotuning sweep of one chapter: a strip of every configuration
    and the ten fastest correct ones."""

    required_arguments = 1
    option_spec = {"compare": directives.unchanged_required}

    def render(self) -> list[nodes.Node]:
        chapter = self.arguments[0]
        output: list[nodes.Node] = []
        for gpu in results.gpu_folders(self.results_root):
            path = sweep_path(self.results_root, gpu, chapter)
            self.track(path)
            sweep = load_sweep(self.results_root, gpu, chapter)
            if sweep is None:
                continue
            output.append(self.gpu_sweep(gpu, path, sweep))
        if not output:
            return [not_measured_box(self.env, "Not swept yet",
                                     f"No GPU has a sweep for {chapter} yet.",
                                     label="the-sweep-command", link_text="how the sweep is run")]
        return output

    def gpu_sweep(self, gpu: str, path: Path, sweep: Sweep) -> nodes.Element:
        provenance = sweep.data.get("provenance") or {}
        name = provenance.get("gpu", gpu)
        block = self.gpu_block(name)
        box = self.check_fresh(gpu, path, sweep.data, "sweep")
        if box is not None:
            block += box
        # The configuration the kernel commits to, as its binary describes it.
        binary, variant = find_variant(self.repo_root, self.build_dir, self.arguments[0])
        self.track(binary)
        committed = committed_config(sweep, variant.get("constants"))
        rates, correct, ringed, median = sweep_figure.sweep_points(sweep, committed)
        size_text = format_size(sweep.size) if sweep.size else "one size"
        wrong = correct.count(False)
        caption = (f"{len(rates)} configurations at {size_text}, fastest first; the GFLOP/s "
                   "axis spans the correct ones' rates, not from 0")
        if wrong:
            caption += (f"; {wrong} incorrect, failed or untimed (crosses; on the bottom edge "
                        "when untimed)")
        caption += ("; ringed: the configuration the chapter's kernel file commits to"
                    if committed is not None else "; ringed: the fastest")
        caption += ", the median of the correct ones dashed."
        alt = f"GFLOP/s of every configuration of the sweep on {name}"
        block += with_phone_drawing(
            figure(lambda mode: sweep_figure.draw_sweep(rates, correct, ringed, median, mode),
                   alt=alt, caption=caption),
            # On a phone, a narrow drawing with the key under the plot.
            lambda mode: sweep_figure.draw_sweep(rates, correct, ringed, median, mode, True),
            alt)
        header, rows = sweep_rows(sweep, committed=committed)
        block += table([header], rows, classes=["ladder-table", "ladder-sweep"])
        line = name
        counts = sweep.data.get("counts")
        if isinstance(counts, dict) and {"grid", "valid", "kept", "swept"} <= counts.keys():
            line += (f" \u00b7 {counts['swept']} swept of {counts['grid']} grid points "
                     f"({counts['valid']} valid, {counts['kept']} kept by the filters)")
        if median is not None:
            line += f" \u00b7 median of the correct: {format_gflops(median)} GFLOP/s"
        block += provenance_paragraph(self.env, _measured_when(line, provenance))
        if "compare" in self.options:
            block += self.comparison(sweep, self.options["compare"])
        return block

    def comparison(self, sweep: Sweep, name: str) -> nodes.Node:
        """A paragraph on what parameter ``name`` (two values) does across
        the configurations that differ in it alone."""
        stats = sweep_pairs(sweep, name)
        if stats is None:
            return paragraph(f"No two correct configurations of this sweep differ in {name} "
                             "alone.")
        return paragraph(
            f"{stats['pairs']} pairs of correct configurations differ in {name} alone; "
            f"{name} = {stats['high']} is the faster of the pair in {stats['high_wins']} "
            f"of them. Its rate over that of {name} = {stats['low']}: median "
            f"{stats['median']:.3f}, from {stats['min']:.3f} to {stats['max']:.3f}.")


# --------------------------------------------------------------------------
# {ladder-transpose}
# --------------------------------------------------------------------------


def _measured_when(line: str, provenance: dict) -> str:
    """``line`` followed by the date a results file records (its commit and
    the hashes of its inputs stay in the file: see the appendix)."""
    if provenance.get("date"):
        line += f" \u00b7 measured {provenance['date'][:10]}"
    return line


class TransposeDirective(_AnalysisDirective):
    """Chapter 10's transpose exercise: every variant, per size."""

    def render(self) -> list[nodes.Node]:
        output: list[nodes.Node] = []
        for gpu in results.gpu_folders(self.results_root):
            self.track(transpose_path(self.results_root, gpu))
            self.track(ncu_path(self.results_root, gpu))
            content = load_transpose(self.results_root, gpu)
            if content is None:
                continue
            output.append(self.gpu_transpose(gpu, content))
        if not output:
            return [not_measured_box(self.env, "Not measured yet",
                                     "No GPU has run the transpose exercise yet.")]
        return output

    def gpu_transpose(self, gpu: str, content: dict) -> nodes.Element:
        provenance = content.get("provenance") or {}
        name = provenance.get("gpu", gpu)
        block = self.gpu_block(name)
        box = self.check_fresh(gpu, transpose_path(self.results_root, gpu), content,
                               "result")
        if box is not None:
            block += box
        variants: list[str] = []
        for size in content["sizes"]:
            title = f"{size['rows']} \u00d7 {size['cols']}"
            block += nodes.paragraph("", "", nodes.strong(title, title))
            block += table([TRANSPOSE_HEADER], transpose_rows(size),
                            classes=["ladder-table", "ladder-transpose"])
            variants += [v for v in size["variants"] if v not in variants]
        ncu = load_ncu(self.results_root, gpu)
        entry = ncu_entry(ncu, "transpose") if ncu else None
        if entry:
            title = f"Shared loads, ncu at {entry.get('size', '?')}"
            block += nodes.paragraph("", "", nodes.strong(title, title))
            block += table(
                [["variant", "LDS instructions", "wavefronts", "wavefronts/instr.",
                  "bank conflicts"]],
                transpose_counter_rows(entry, variants),
                classes=["ladder-table", "ladder-transpose"])
        line = name + " \u00b7 GB/s counts bytes read plus bytes written"
        block += provenance_paragraph(self.env, _measured_when(line, provenance))
        return block


# --------------------------------------------------------------------------
# {ladder-gpus} [<chapter>]
# --------------------------------------------------------------------------


class GpusDirective(_AnalysisDirective):
    """Which GPUs run a chapter, and with which variant (or every chapter)."""

    optional_arguments = 1

    def render(self) -> list[nodes.Node]:
        table_json = tool_json(self.binary("archs"), [])
        if self.arguments:
            slug = self.arguments[0]
            found = archs_tools.verdicts(table_json, describe(self.binary(slug)))
            rows = [[v.arch, v.gpus, self.what_runs(v)] for v in found]
            return [table([["Architecture", "GPUs", "What runs"]], rows,
                          classes=["ladder-table", "ladder-gpus"]),
                    provenance_paragraph(self.env, self.COMPUTED)]
        header = ["Chapter", *(f"sm_{a['cc']}" for a in table_json["archs"])]
        rows = []
        for slug, path in chapter_binaries(self.repo_root, self.build_dir):
            self.track(path)
            found = archs_tools.verdicts(table_json, describe(path))
            rows.append([slug[:2], *(self.cell(v) for v in found)])
        return [table([header], rows, classes=["ladder-table", "ladder-gpus"]),
                provenance_paragraph(self.env, self.COMPUTED + " Own: the chapter's own "
                                     "variant runs; a name: that variant runs in its place; "
                                     "a dash: the chapter does not run there (its page says "
                                     "why).")]

    COMPUTED = ("Computed: each architecture's limits and instructions from "
                "ladder/arch.hpp, each variant's block from what the chapter's binary says "
                "of itself. A CPU test compiles every chapter for each architecture (to "
                "machine code for sm_75 and sm_120, to PTX between) to check the "
                "instructions; the limits are checked again at run time.")

    @staticmethod
    def cell(verdict) -> str:
        if verdict.runs is None:
            return DASH
        return "own" if verdict.why == archs_tools.OWN_FITS else verdict.runs

    @staticmethod
    def what_runs(verdict) -> str:
        if verdict.runs is None:
            return verdict.why[:1].upper() + verdict.why[1:] + "."
        if verdict.why == archs_tools.OWN_FITS:
            return f"Its own variant ({verdict.runs})."
        return f"The variant {verdict.runs}: {verdict.why}."


def setup(app):
    app.setup_extension("ladder_base")
    app.add_directive("ladder-resources", ResourcesDirective)
    app.add_directive("ladder-sass", SassDirective)
    app.add_directive("ladder-mix-figure", MixFigureDirective)
    app.add_directive("ladder-bankmap", BankmapDirective)
    app.add_directive("ladder-bankgrid", BankgridDirective)
    app.add_directive("ladder-tiling", TilingDirective)
    app.add_directive("ladder-warp-access", WarpAccessDirective)
    app.add_directive("ladder-fragments", FragmentsDirective)
    app.add_directive("ladder-roofline", RooflineDirective)
    app.add_directive("ladder-stages", StagesDirective)
    app.add_directive("ladder-pipeline", PipelineDirective)
    app.add_directive("ladder-split", SplitDirective)
    app.add_directive("ladder-rounds", RoundsDirective)
    app.add_directive("ladder-cut", CutDirective)
    app.add_directive("ladder-tail-rounds", TailRoundsDirective)
    app.add_directive("ladder-tail-plans", TailPlansDirective)
    app.add_directive("ladder-tail-map", TailMapDirective)
    app.add_directive("ladder-ncu", NcuDirective)
    app.add_directive("ladder-sweep", SweepDirective)
    app.add_directive("ladder-transpose", TransposeDirective)
    app.add_directive("ladder-issue", IssueDirective)
    app.add_directive("ladder-gpus", GpusDirective)
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
