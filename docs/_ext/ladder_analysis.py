"""Sphinx glue that puts the analysis of the chapters on the book's pages.

Computed at build time from the chapters' binaries (the build folder is
$LADDER_BUILD_DIR, default <repo>/build; a missing binary fails the build):

``{ladder-resources} <slug>``  options ``:kernel:``, ``:threads:``, ``:dynamic-smem:``
    per sgemm_ kernel of build/bin/<slug> (those whose name contains
    ``:kernel:``): registers, shared memory, spills, and the occupancy they
    allow (code/analysis/occupancy.py), then a row per GPU whose result for
    the chapter reports its resources, and whether that agrees. The block
    size comes from the GPU's fresh result, else ``:threads:``, else the
    kernel's ``__launch_bounds__``, else a stale result; dynamic shared
    memory from the fresh result, else ``:dynamic-smem:``, else none when
    the kernel's PTX declares none. Lacking either is an error.
``{ladder-sass} <slug>``  options ``:kernel:``, ``:inner-trips:``
    the instruction mix of the K-loop of the chapter's one sgemm_ kernel
    (code/analysis/sass_mix.py); with ``:inner-trips: N`` also per K-tile.
``{ladder-mix-figure}``
    the K-loop mix of every chapter binary present, as stacked bars.
``{ladder-bankmap} <access>``  or ``:stride: S`` [``:width: 4|8|16``]; ``:figure:``
    a lane-to-bank table from build/bin/bankmap and its wavefronts.

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
ladder_analysis_data, drawing in ladder_analysis_plots.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import ladder_analysis_data as analysis
import ladder_analysis_plots as plots
import ladder_data as data
from ladder_results import (_admonition, _figure, _LadderMixin, _paragraph, _stale_box,
                            _stale_records, _table)

logger = logging.getLogger(__name__)


class _AnalysisDirective(_LadderMixin, SphinxDirective):
    """Paths to the build folder and errors as -W failures."""

    @property
    def build_dir(self) -> Path:
        return analysis.build_dir(self.repo_root)

    def binary(self, name: str) -> Path:
        """build/bin/<name>; a missing one fails the build with how to make it."""
        try:
            path = analysis.require_binary(self.build_dir, name)
        except analysis.AnalysisError as error:
            raise self.error(f"{self.name}: {error}") from error
        self.track(path)
        return path

    def run(self) -> list[nodes.Node]:
        try:
            return self.render()
        except (analysis.AnalysisError, data.ResultsError) as error:
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
        stale = data.staleness(provenance, self.repo_root)
        if stale is None:
            return None
        record = {"gpu": gpu, "chapter": content.get("chapter") or content.get("program"),
                  "file": str(path), "reason": stale, "page": self.env.docname}
        records = _stale_records(self.env).setdefault(self.env.docname, [])
        if record not in records:
            records.append(record)
        if self.config.ladder_fail_on_stale:
            logger.warning("stale result %s: %s", path, stale, location=self.get_location(),
                           type="ladder", subtype="stale")
        box = _admonition("warning", f"Stale {what}",
                          f"These numbers from {provenance.get('gpu', gpu)} were measured on "
                          f"other code: {stale}. Measure again.")
        box["classes"].append("ladder-stale")
        return box

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


def _not_yet(title: str, text: str) -> nodes.Element:
    return _admonition("note", title, text)


def _code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


# --------------------------------------------------------------------------
# {ladder-resources} <slug>
# --------------------------------------------------------------------------


def _legible_kernel(name: str) -> str:
    """A kernel's name as the resources table shows it: the arguments of a
    template argument folded away, so that the numbers beside it fit
    ('sgemm_warptiled<Tiling<128, 256, ..., (ALayout)0>, true, false>' ->
    'sgemm_warptiled<Tiling<...>, true, false>'); the page names the tiling."""
    shown, depth = [], 0
    for char in name:
        if char == "<":
            depth += 1
            if depth == 2:
                shown.append("<...")
            if depth >= 2:
                continue
        elif char == ">":
            depth -= 1
            if depth >= 1:
                if depth == 1:
                    shown.append(">")
                continue
        elif depth >= 2:
            continue
        shown.append(char)
    text = "".join(shown).replace("> >", ">>")
    # An enumerator as a value, '(ALayout)0', reads as 'ALayout 0'.
    return re.sub(r"\((\w+)\)(-?\d+)", r"\1 \2", text)


class ResourcesDirective(_AnalysisDirective):
    """Registers, shared memory, spills and occupancy of a chapter's kernels."""

    required_arguments = 1
    option_spec = {"threads": directives.positive_int, "kernel": directives.unchanged_required,
                   "dynamic-smem": directives.nonnegative_int}

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        path = self.binary(slug)
        kernels = analysis.select_kernels(analysis.kernel_resources(path),
                                          self.options.get("kernel"))
        if not kernels:
            raise analysis.AnalysisError(f"{path} has no {analysis.KERNEL_PREFIX}* kernel")
        reported = self.reported(slug)
        bounds = analysis.launch_bounds(path)
        dynamic_users = analysis.dynamic_shared_users(path)
        launches, sources = [], set()
        for kernel in kernels:
            threads, threads_from = self.threads(reported, bounds.get(kernel["mangled"]))
            uses_dynamic = None if dynamic_users is None else kernel["mangled"] in dynamic_users
            dynamic, dynamic_from = self.dynamic_smem(reported, uses_dynamic)
            launches.append(analysis.Launch(threads, dynamic))
            sources.add(f"threads per block from {threads_from}")
            if dynamic_from:
                sources.add(f"dynamic shared memory {dynamic_from}")
        rows = analysis.resources_rows(kernels, launches, [r for r, _ in reported])
        for row in rows:
            row[0] = _legible_kernel(row[0])
        table = _table([analysis.RESOURCES_HEADER], rows,
                       classes=["ladder-table", "ladder-resources"])
        output: list[nodes.Node] = [table]
        for _, result in reported:
            if result.stale:
                output.insert(0, _stale_box(result))
                self.note_stale(result)
        output.append(_paragraph(
            f"Computed by `code/analysis/occupancy.py` from `cuobjdump -res-usage` of "
            f"`bin/{slug}`, {'; '.join(sorted(sources))}. Reported: "
            "`cudaOccupancyMaxActiveBlocksPerMultiprocessor` on the GPU.",
            ["ladder-provenance"]))
        return output

    def reported(self, slug: str) -> list[tuple[analysis.ReportedResources, data.ChapterResult]]:
        """Every GPU result of the chapter that has "resources"."""
        for gpu in data.gpu_folders(self.results_root):
            self.track(data.chapter_result_path(self.results_root, gpu, slug))
        found = []
        for result in data.load_chapter_results(self.results_root, slug, self.repo_root):
            resources = result.data.get("resources")
            if isinstance(resources, dict) and isinstance(resources.get("threads_per_block"), int):
                arch = analysis.arch_of_capability(result.provenance.get("compute_capability"))
                found.append((analysis.ReportedResources(result.provenance["gpu"], arch,
                                                         resources), result))
        return found

    def threads(self, reported, bound: int | None) -> tuple[int, str]:
        """A kernel's block size and where it came from: the GPU's fresh
        result, else :threads:, else the kernel's __launch_bounds__, else a
        stale result; with none of them the option is required."""
        fresh = [r.data["threads_per_block"] for r, result in reported if not result.stale]
        given = self.options.get("threads")
        if fresh and given is not None and given != fresh[0]:
            raise analysis.AnalysisError(
                f":threads: {given}, but the GPU measured blocks of {fresh[0]} threads for "
                f"{self.arguments[0]}: correct the option")
        if fresh:
            return fresh[0], "the GPU's result"
        if given is not None:
            return given, "the page"
        if bound is not None:
            return bound, "the kernel's `__launch_bounds__`"
        if reported:
            return reported[0][0].data["threads_per_block"], "the GPU's (stale) result"
        raise analysis.AnalysisError(
            f"no GPU result for {self.arguments[0]} gives its threads per block, and its "
            "kernel has no __launch_bounds__: add the option :threads: N")

    def dynamic_smem(self, reported, uses_dynamic: bool | None) -> tuple[int, str | None]:
        """A kernel's dynamic shared memory per block and where it came from:
        the GPU's fresh result, else :dynamic-smem:, else none when its PTX
        declares none, else a stale result; a kernel that uses dynamic shared
        memory (sized at launch) needs one of them."""
        fresh = [r.data.get("dynamic_smem_bytes") for r, result in reported if not result.stale]
        fresh = [value for value in fresh if isinstance(value, int)]
        given = self.options.get("dynamic-smem")
        if fresh and given is not None and given != fresh[0]:
            raise analysis.AnalysisError(
                f":dynamic-smem: {given}, but the GPU launched {self.arguments[0]} with "
                f"{fresh[0]} bytes: correct the option")
        if fresh:
            return fresh[0], "from the GPU's result" if fresh[0] else None
        if given is not None:
            return given, "from the page"
        if uses_dynamic is False:
            return 0, None
        stale = [r.data.get("dynamic_smem_bytes") for r, _ in reported]
        stale = [value for value in stale if isinstance(value, int)]
        if stale:
            return stale[0], "from the GPU's (stale) result"
        if uses_dynamic is None:
            return 0, "none assumed (the binary holds no PTX to check)"
        raise analysis.AnalysisError(
            f"the kernel of {self.arguments[0]} uses dynamic shared memory, sized at launch, "
            "and no GPU result gives it: add the option :dynamic-smem: BYTES")


# --------------------------------------------------------------------------
# {ladder-sass} <slug> and {ladder-mix-figure}
# --------------------------------------------------------------------------


class SassDirective(_AnalysisDirective):
    """The K-loop's instruction mix of a chapter's kernel."""

    required_arguments = 1
    option_spec = {"kernel": directives.unchanged_required, "inner-trips": directives.positive_int}

    def render(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        path = self.binary(slug)
        trips = self.options.get("inner-trips")
        kernel = analysis.pick_kernel(analysis.kernel_mix(path, trips),
                                      self.options.get("kernel"), path)
        loop = kernel["loop"]
        name = analysis.short_name(kernel["name"])
        if loop is None:
            paragraph = _paragraph(f"`{name}` has no loop in its SASS ({kernel['arch']}).")
            return [paragraph]
        if trips is not None and "per_k_tile" not in loop:
            raise analysis.AnalysisError(
                f":inner-trips: {trips} given, but the K-loop of {name} has no inner loop")
        header, rows = analysis.mix_table(loop)
        inner = len(loop["inner_loops"])
        where = (f"The K-loop of `{name}` in `bin/{slug}` ({kernel['arch']}), addresses "
                 f"{loop['start']}\u2013{loop['end']}: static counts, each instruction of "
                 "the body once")
        where += (f"; it holds {inner} inner loop{'s' if inner > 1 else ''}." if inner
                  else ".")
        return [_table([header], rows, classes=["ladder-table", "ladder-sass"]),
                _paragraph(where + " From `code/analysis/sass_mix.py`.", ["ladder-provenance"])]


def _ffma_share(loop: dict) -> float:
    counts = analysis.mix_categories(loop)
    total = sum(counts.values())
    return counts.get("FFMA", 0) / total if total else 0.0


class MixFigureDirective(_AnalysisDirective):
    """Every chapter binary's K-loop mix as stacked horizontal bars."""

    def render(self) -> list[nodes.Node]:
        bars = []
        for slug in data.chapter_slugs(self.repo_root):
            path = analysis.binary_path(self.build_dir, slug)
            if not path.is_file():
                continue
            self.track(path)
            kernels = analysis.select_kernels(analysis.kernel_mix(path), None)
            looped = [k for k in kernels if k["loop"]]
            if looped:
                # A binary with several kernels (chapter 12's aligned and
                # general paths) is drawn by its fastest path: the loop with
                # the largest FFMA share.
                best = max(looped, key=lambda k: _ffma_share(k["loop"]))
                bars.append(plots.MixBar(slug.replace("-", " ", 1),
                                         analysis.mix_categories(best["loop"])))
        if not bars:
            raise analysis.AnalysisError(
                f"no chapter binary in {self.build_dir / 'bin'}: build the chapters first")
        return [_figure(lambda mode: plots.draw_mix(bars, mode),
                        alt="Instructions in each chapter's K-loop body, by kind",
                        caption="The K-loop body of each chapter's kernel, sm_90 SASS: "
                                "instructions by kind (static counts), and the FFMA share.")]


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
            raise analysis.AnalysisError("give an access name or :stride:, not both")
        if name is None and "stride" not in self.options:
            raise analysis.AnalysisError(
                "give an access name (bankmap --list) or :stride: S [:width: W]")
        if "width" in self.options and name is not None:
            raise analysis.AnalysisError(":width: goes with :stride:, a named access has its own")
        report = analysis.run_bankmap(tool, name, self.options.get("stride"),
                                      self.options.get("width", 4))
        rows = analysis.bank_rows(report)
        table = _table([[("lane \u2192 bank", 8)]], rows,
                       classes=["ladder-table", "ladder-bankmap"])
        summary = nodes.paragraph(classes=["ladder-bank-summary"])
        summary += nodes.strong(analysis.bank_summary(report), analysis.bank_summary(report))
        summary += nodes.Text(f": {report['what']}; {report['width_bytes']}-byte access (")
        summary += _code(report["name"])
        summary += nodes.Text(").")
        output: list[nodes.Node] = [table, summary]
        if "figure" in self.options:
            output.append(_figure(
                lambda mode: plots.draw_bankmap(report, mode),
                alt=f"Lane-to-bank map of {report['name']}",
                caption=f"{report['name']}: the bank each lane of a warp accesses; "
                        f"{analysis.bank_summary(report)}."))
        return output


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
        model_ld = analysis.parse_model(self.options.get("predicted-ld"), len(slugs), self.model)
        model_st = analysis.parse_model(self.options.get("predicted-st"), len(slugs), self.model)
        models = ("predicted-ld" in self.options, "predicted-st" in self.options)
        output: list[nodes.Node] = []
        for gpu in data.gpu_folders(self.results_root):
            self.track(analysis.ncu_path(self.results_root, gpu))
            ncu = analysis.load_ncu(self.results_root, gpu)
            if ncu is None:
                continue
            rows = []
            for slug, ld, st in zip(slugs, model_ld, model_st):
                entry = analysis.ncu_entry(ncu, slug)
                kernels = analysis.entry_kernels(entry) if entry else []
                if not kernels:
                    rows.append([slug, "not measured"] + [analysis.DASH] * (
                        len(analysis.ncu_header(models)[1]) - 2))
                for kernel in kernels:
                    rows.append(analysis.ncu_row(slug, kernel, ld, st, models))
            block = self.gpu_block(ncu.get("gpu", gpu))
            for slug in slugs:
                block += self.entry_freshness(gpu, analysis.ncu_path(self.results_root, gpu),
                                              ncu, slug, "counters")
            for header, part in _split_columns(analysis.ncu_header(models), rows, keep=2):
                block += _table(header, part, classes=["ladder-table", "ladder-ncu"])
            sizes = sorted({str((analysis.ncu_entry(ncu, slug) or {}).get("size"))
                            for slug in slugs} - {"None"})
            line = (f"Nsight Compute, one launch at {', '.join(sizes) or '?'}; "
                    f"{ncu.get('gpu', gpu)}")
            # Each entry records the commit it was measured at; older files
            # only say which run wrote the file last, and the line says so.
            stamps = sorted({(e["measured"].get("date", "")[:10], e["measured"].get("git_commit", ""))
                             for e in (analysis.ncu_entry(ncu, slug) or {} for slug in slugs)
                             if isinstance(e.get("measured"), dict)})
            if stamps:
                line += "".join(f" \u00b7 measured {d} at commit {c}" for d, c in stamps)
            elif ncu.get("git_commit"):
                line += (f" \u00b7 file last written {ncu.get('date', '')[:10]} at commit "
                         f"{ncu['git_commit']} (a partial run keeps earlier chapters' counters)")
            if any(models):
                line += (". Model: wavefronts per instruction that the bank model predicts "
                         "(`bankmap`)")
            block += _paragraph(line + ".", ["ladder-provenance"])
            output.append(block)
        if not output:
            return [_not_yet("Not measured yet",
                             "No GPU has ncu counters yet: `python3 code/measure.py` records "
                             "them when Nsight Compute (`ncu`) is installed.")]
        return output

    def model(self, access: str) -> int:
        """The bank model's wavefronts for one warp-wide access named in bankmap."""
        return analysis.run_bankmap(self.binary("bankmap"), access)["wavefronts"]


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
        for gpu in data.gpu_folders(self.results_root):
            self.track(analysis.issue_path(self.results_root, gpu))
            issue = analysis.load_issue(self.results_root, gpu)
            entry = (issue or {}).get("chapters", {}).get(slug)
            if not isinstance(entry, dict):
                continue
            pair = analysis.issue_kernels(entry)
            if pair is None:
                raise self.error(f"{self.name}: {analysis.issue_path(self.results_root, gpu)}: "
                                 f"{slug} does not have one chapter kernel and one cuBLAS kernel")
            (_, ours), (cublas_name, theirs) = pair
            block = self.gpu_block(issue.get("gpu", gpu))
            block += self.entry_freshness(gpu, analysis.issue_path(self.results_root, gpu), issue,
                                          slug, "issue profile")
            block += _table([["", slug, "cuBLAS"]], analysis.issue_rows(ours, theirs),
                            classes=["ladder-table", "ladder-issue"])
            line = f"Nsight Compute, one launch of each at {entry.get('size', '?')}; {issue.get('gpu', gpu)}"
            stamp = entry.get("measured")
            if isinstance(stamp, dict):
                line += f" \u00b7 measured {stamp.get('date', '')[:10]} at commit {stamp.get('git_commit', '')}"
            line += (f". cuBLAS's kernel: `{cublas_name}`. A stall row is the cycles per issued "
                     "instruction that an average warp spent waiting for that reason")
            block += _paragraph(line + ".", ["ladder-provenance"])
            output.append(block)
        if not output:
            return [_not_yet("Not measured yet",
                             f"No GPU has an issue profile of {slug} yet: `python3 code/measure.py` "
                             "records one when Nsight Compute (`ncu`) is installed.")]
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
        for gpu in data.gpu_folders(self.results_root):
            path = analysis.sweep_path(self.results_root, gpu, chapter)
            self.track(path)
            sweep = analysis.load_sweep(self.results_root, gpu, chapter)
            if sweep is None:
                continue
            output.append(self.gpu_sweep(gpu, path, sweep))
        if not output:
            return [_not_yet("Not swept yet",
                             f"No GPU has a sweep for {chapter} yet: run the sweep on a GPU "
                             f"to write `results/<gpu>/sweep-{chapter}.json`.")]
        return output

    def gpu_sweep(self, gpu: str, path: Path, sweep: analysis.Sweep) -> nodes.Element:
        provenance = sweep.data.get("provenance") or {}
        name = provenance.get("gpu", gpu)
        block = self.gpu_block(name)
        box = self.check_fresh(gpu, path, sweep.data, "sweep")
        if box is not None:
            block += box
        rates = [c.get("gflops", 0.0) for c in sweep.configs]
        correct = [c["correct"] and "gflops" in c for c in sweep.configs]
        kernel = self.repo_root / "chapters" / self.arguments[0] / "kernel.cu"
        committed = analysis.committed_config(
            sweep, kernel.read_text(encoding="utf-8") if kernel.is_file() else "")
        ringed = committed if committed is not None else sweep.winner
        winner_index = next((i for i, c in enumerate(sweep.configs) if c is ringed), None)
        median = sweep.median_gflops
        size_text = data.format_size(sweep.size) if sweep.size else "one size"
        wrong = correct.count(False)
        caption = (f"{len(rates)} configurations at {size_text}, fastest first; the GFLOP/s "
                   "axis spans the correct ones' rates, not from 0")
        if wrong:
            caption += (f"; {wrong} incorrect, failed or untimed (crosses; on the bottom edge "
                        "when untimed)")
        caption += ("; ringed: the configuration the chapter's kernel file commits to"
                    if committed is not None else "; ringed: the fastest")
        caption += ", the median of the correct ones dashed."
        block += _figure(lambda mode: plots.draw_sweep(rates, correct, winner_index, median, mode),
                         alt=f"GFLOP/s of every configuration of the sweep on {name}",
                         caption=caption)
        header, rows = analysis.sweep_rows(sweep, committed=committed)
        block += _table([header], rows, classes=["ladder-table", "ladder-sweep"])
        line = name
        counts = sweep.data.get("counts")
        if isinstance(counts, dict) and {"grid", "valid", "kept", "swept"} <= counts.keys():
            line += (f" \u00b7 {counts['swept']} swept of {counts['grid']} grid points "
                     f"({counts['valid']} valid, {counts['kept']} kept by the filters)")
        if median is not None:
            line += f" \u00b7 median of the correct: {data.format_gflops(median)} GFLOP/s"
        block += _paragraph(_measured_when(line, provenance), ["ladder-provenance"])
        if "compare" in self.options:
            block += self.comparison(sweep, self.options["compare"])
        return block

    def comparison(self, sweep: analysis.Sweep, name: str) -> nodes.Node:
        """A paragraph on what parameter ``name`` (two values) does across
        the configurations that differ in it alone."""
        stats = analysis.sweep_pairs(sweep, name)
        if stats is None:
            return _paragraph(f"No two correct configurations of this sweep differ in {name} "
                              "alone.")
        return _paragraph(
            f"{stats['pairs']} pairs of correct configurations differ in {name} alone; "
            f"{name} = {stats['high']} is the faster of the pair in {stats['high_wins']} "
            f"of them. Its rate over that of {name} = {stats['low']}: median "
            f"{stats['median']:.3f}, from {stats['min']:.3f} to {stats['max']:.3f}.")


# --------------------------------------------------------------------------
# {ladder-transpose}
# --------------------------------------------------------------------------


def _measured_when(line: str, provenance: dict) -> str:
    """``line`` followed by the date and commit a results file records."""
    if provenance.get("date"):
        line += f" \u00b7 measured {provenance['date'][:10]}"
    if provenance.get("git_commit"):
        line += f" \u00b7 commit {provenance['git_commit']}"
    return line


class TransposeDirective(_AnalysisDirective):
    """Chapter 10's transpose exercise: every variant, per size."""

    def render(self) -> list[nodes.Node]:
        output: list[nodes.Node] = []
        for gpu in data.gpu_folders(self.results_root):
            self.track(analysis.transpose_path(self.results_root, gpu))
            self.track(analysis.ncu_path(self.results_root, gpu))
            content = analysis.load_transpose(self.results_root, gpu)
            if content is None:
                continue
            output.append(self.gpu_transpose(gpu, content))
        if not output:
            return [_not_yet("Not measured yet",
                             "No GPU has run the transpose exercise yet: run "
                             "`bin/transpose --json results/<gpu>/transpose.json` on a GPU.")]
        return output

    def gpu_transpose(self, gpu: str, content: dict) -> nodes.Element:
        provenance = content.get("provenance") or {}
        name = provenance.get("gpu", gpu)
        block = self.gpu_block(name)
        box = self.check_fresh(gpu, analysis.transpose_path(self.results_root, gpu), content,
                               "result")
        if box is not None:
            block += box
        variants: list[str] = []
        for size in content["sizes"]:
            title = f"{size['rows']} \u00d7 {size['cols']}"
            block += nodes.paragraph("", "", nodes.strong(title, title))
            block += _table([analysis.TRANSPOSE_HEADER], analysis.transpose_rows(size),
                            classes=["ladder-table", "ladder-transpose"])
            variants += [v for v in size["variants"] if v not in variants]
        ncu = analysis.load_ncu(self.results_root, gpu)
        entry = analysis.ncu_entry(ncu, "transpose") if ncu else None
        if entry:
            title = f"Shared loads, ncu at {entry.get('size', '?')}"
            block += nodes.paragraph("", "", nodes.strong(title, title))
            block += _table(
                [["variant", "LDS instructions", "wavefronts", "wavefronts/instr.",
                  "bank conflicts"]],
                analysis.transpose_counter_rows(entry, variants),
                classes=["ladder-table", "ladder-transpose"])
        line = name + " \u00b7 GB/s counts bytes read plus bytes written"
        block += _paragraph(_measured_when(line, provenance), ["ladder-provenance"])
        return block


def setup(app):
    app.setup_extension("ladder_results")
    app.add_directive("ladder-resources", ResourcesDirective)
    app.add_directive("ladder-sass", SassDirective)
    app.add_directive("ladder-mix-figure", MixFigureDirective)
    app.add_directive("ladder-bankmap", BankmapDirective)
    app.add_directive("ladder-ncu", NcuDirective)
    app.add_directive("ladder-sweep", SweepDirective)
    app.add_directive("ladder-transpose", TransposeDirective)
    app.add_directive("ladder-issue", IssueDirective)
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
