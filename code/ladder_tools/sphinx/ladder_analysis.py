"""Sphinx glue that puts the analysis of the chapters on the book's pages.

Computed at build time from the chapters' binaries (the build folder is
$LADDER_BUILD_DIR, default <repo>/build; a missing binary fails the build):

A <slug> names a result (a chapter, or one of its variants: 10-padding-rows):
the binary is bin/<chapter folder>, and the variant's kernels are the one its
``--describe`` names and the other paths of the same tiling
(ladder_tools.analysis.binaries.find_variant, ladder_tools.analysis.kernels.variant_kernels);
``:kernel:`` keeps those whose demangled name contains it.

``{ladder-resources} <slug>``  option ``:kernel:``
    per kernel of the variant: registers, shared memory, spills, and the
    occupancy they allow (ladder_tools.analysis.occupancy) when launched as
    ``--describe`` says (threads per block, dynamic shared memory); under
    the variant's own kernel, a row per GPU whose result reports its
    resources, and whether that agrees.
``{ladder-sass} <slug>``  options ``:kernel:``, ``:inner-trips:``
    the instruction mix of the K-loop of the variant's one kernel
    (ladder_tools.analysis.sass_mix); with ``:inner-trips: N`` also per K-tile.
``{ladder-bankmap} <access>``  or ``:stride: S`` [``:width: 4|8|16``]; ``:figure:``
    a lane-to-bank table from build/bin/bankmap and its wavefronts; with
    ``:figure:``, its figure (ladder_tools/figures/bankmap.py) under it.
``{ladder-tail-plans}``  options ``:sizes:`` (required), ``:gpu:``
    per size, the plan chapter 13 picks, its count's time over the "tiles"
    variant's plan (a prediction), and, where measured, the time of 13-tail
    over 13-tail-tiles and its % of cuBLAS.
``{ladder-gpus} [<chapter>]``
    per architecture the book names (build/bin/archs, ladder/arch.hpp), its
    GPUs and what runs the chapter there: its own variant, the variant its
    launcher picks where the own one's block does not fit, or why nothing
    does (ladder_tools.analysis.archs); without a chapter, one row per chapter built.

The figures ({ladder-tiling}, {ladder-roofline}, ...) are each declared once in
their module of ladder_tools/figures/ and put on the page by ladder_figures.py.

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
code/ladder_tools (one module per topic), drawing in ladder_tools/figures/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ladder_tools import results
from ladder_tools.analysis import archs as archs_tools
from ladder_tools.analysis import tailplan
from ladder_tools.analysis.bankmap import bank_rows, bank_summary, run_bankmap
from ladder_tools.analysis.binaries import (
    AnalysisError,
    chapter_binaries,
    describe,
    find_variant,
    require_binary,
    tool_json,
)
from ladder_tools.analysis.kernels import (
    KERNEL_PREFIX,
    folded_name,
    pick_kernel,
    select_kernels,
    short_name,
    variant_kernels,
)
from ladder_tools.analysis.mix import kernel_mix, mix_table, per_k_tile_sum
from ladder_tools.analysis.resources import (
    RESOURCES_HEADER,
    Launch,
    ReportedResources,
    arch_of_capability,
    kernel_resources,
    resources_rows,
)
from ladder_tools.figures.bankmap import bankmap_drawing
from ladder_tools.figures.sweep import sweep_drawing, sweep_points
from ladder_tools.formatting import DASH, format_gflops
from ladder_tools.results.issue import issue_kernels, issue_path, issue_rows, load_issue
from ladder_tools.results.ncu import (
    entry_kernels,
    load_ncu,
    ncu_entry,
    ncu_header,
    ncu_path,
    ncu_row,
    parse_model,
)
from ladder_tools.results.sweep_results import (
    Sweep,
    committed_config,
    load_sweep,
    sweep_pairs,
    sweep_path,
    sweep_rows,
)
from ladder_tools.results.transpose import (
    TRANSPOSE_HEADER,
    load_transpose,
    transpose_counter_rows,
    transpose_path,
    transpose_rows,
)
from ladder_tools.sphinx.ladder_base import (
    LadderMixin,
    not_measured_box,
    provenance_paragraph,
    stale_notice,
    stale_result_box,
)
from ladder_tools.sphinx.ladder_figures import figure_nodes
from ladder_tools.sphinx.ladder_nodes import paragraph, table

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata


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

    def per_gpu(self, block_of: Callable[[str], nodes.Node | None],
                missing: nodes.Node) -> list[nodes.Node]:
        """``block_of(gpu)`` for each GPU folder under results/ (the reference
        GPU first), leaving out the GPUs it gives None for (nothing
        measured there); ``missing`` alone when no GPU has anything."""
        output = [block for gpu in results.gpu_folders(self.results_root)
                  if (block := block_of(gpu)) is not None]
        return output or [missing]

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
# {ladder-sass} <slug>
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
            output += figure_nodes(bankmap_drawing(report), self.state, self.lineno)
        return output


# --------------------------------------------------------------------------
# {ladder-tail-plans}  :sizes:
# --------------------------------------------------------------------------


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



# --------------------------------------------------------------------------
# {ladder-ncu} <slug> [<slug> ...]
# --------------------------------------------------------------------------


def _split_columns(header: tuple[list, list[str]], rows: list[list],
                   keep: int) -> Iterator[tuple[list[list], list[list]]]:
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

        def block_of(gpu: str) -> nodes.Node | None:
            self.track(ncu_path(self.results_root, gpu))
            ncu = load_ncu(self.results_root, gpu)
            if ncu is None:
                return None
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
            return block
        return self.per_gpu(block_of, not_measured_box(
            self.env, "Not measured yet", "No GPU has ncu counters yet: the measure command "
            "records them where Nsight Compute (`ncu`) is installed."))

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

        def block_of(gpu: str) -> nodes.Node | None:
            self.track(issue_path(self.results_root, gpu))
            issue = load_issue(self.results_root, gpu)
            entry = issue.get("chapters", {}).get(slug) if issue else None
            if issue is None or not isinstance(entry, dict):
                return None
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
            return block
        return self.per_gpu(block_of, not_measured_box(
            self.env, "Not measured yet", f"No GPU has an issue profile of {slug} yet: the "
            "measure command records one where Nsight Compute (`ncu`) is installed."))


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

        def block_of(gpu: str) -> nodes.Node | None:
            path = sweep_path(self.results_root, gpu, chapter)
            self.track(path)
            sweep = load_sweep(self.results_root, gpu, chapter)
            return None if sweep is None else self.gpu_sweep(gpu, path, sweep)
        return self.per_gpu(block_of, not_measured_box(
            self.env, "Not swept yet", f"No GPU has a sweep for {chapter} yet.",
            label="the-sweep-command", link_text="how the sweep is run"))

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
        block += figure_nodes(sweep_drawing(sweep, committed, name), self.state, self.lineno)
        header, rows = sweep_rows(sweep, committed=committed)
        block += table([header], rows, classes=["ladder-table", "ladder-sweep"])
        line = name
        counts = sweep.data.get("counts")
        if isinstance(counts, dict) and {"grid", "valid", "kept", "swept"} <= counts.keys():
            line += (f" \u00b7 {counts['swept']} swept of {counts['grid']} grid points "
                     f"({counts['valid']} valid, {counts['kept']} kept by the filters)")
        median = sweep_points(sweep, committed)[3]
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
        def block_of(gpu: str) -> nodes.Node | None:
            self.track(transpose_path(self.results_root, gpu))
            self.track(ncu_path(self.results_root, gpu))
            content = load_transpose(self.results_root, gpu)
            return None if content is None else self.gpu_transpose(gpu, content)
        return self.per_gpu(block_of, not_measured_box(
            self.env, "Not measured yet", "No GPU has run the transpose exercise yet."))

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
                "of itself. A CPU test compiles every chapter to check the instructions: "
                "to machine code for sm_75 and sm_120, to PTX for sm_80 and sm_100; sm_80's "
                "compile stands for sm_86 and sm_89, which the code does not tell apart "
                "from it. The limits are checked again at run time.")

    @staticmethod
    def cell(verdict: archs_tools.Verdict) -> str:
        if verdict.runs is None:
            return DASH
        return "own" if verdict.why == archs_tools.OWN_FITS else verdict.runs

    @staticmethod
    def what_runs(verdict: archs_tools.Verdict) -> str:
        if verdict.runs is None:
            return verdict.why[:1].upper() + verdict.why[1:] + "."
        if verdict.why == archs_tools.OWN_FITS:
            return f"Its own variant ({verdict.runs})."
        return f"The variant {verdict.runs}: {verdict.why}."


def setup(app: Sphinx) -> ExtensionMetadata:
    app.setup_extension("ladder_tools.sphinx.ladder_base")
    app.setup_extension("ladder_tools.sphinx.ladder_figures")
    app.add_directive("ladder-resources", ResourcesDirective)
    app.add_directive("ladder-sass", SassDirective)
    app.add_directive("ladder-bankmap", BankmapDirective)
    app.add_directive("ladder-tail-plans", TailPlansDirective)
    app.add_directive("ladder-ncu", NcuDirective)
    app.add_directive("ladder-sweep", SweepDirective)
    app.add_directive("ladder-transpose", TransposeDirective)
    app.add_directive("ladder-issue", IssueDirective)
    app.add_directive("ladder-gpus", GpusDirective)
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
