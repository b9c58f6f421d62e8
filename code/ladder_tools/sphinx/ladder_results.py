"""Sphinx glue that puts measured results on the book's pages.

Numbers enter the book only through what this extension reads from
``results/`` (or from $LADDER_RESULTS_DIR):

``{ladder-results} 01-naive``
    one table per GPU that measured the chapter (the reference GPU first),
    one row per size, a provenance line under it; a note when nothing was
    measured; a warning box when the result is stale.
``{ladder-ladder}``
    every chapter's GFLOP/s at 4096 as bars, cuBLAS and the FP32 FMA peak as
    lines, Part II in a panel of its own with cuBLAS on TF32 (ladder_tools/figures/ladder.py),
    and a table of all chapters.

The figures drawn from results alone ({ladder-plot}, {ladder-accuracy}, ...)
are each declared once in their module of ladder_tools/figures/ and put on the page by
ladder_figures.py.
``{ladder-goals} <slug>``  options ``:gpu:``, ``:brief:``; body: one goal per line
    ``<percent> | <label> | <sizes>`` (ladder_tools.results.goals): a list of the
    goals, each with how many of its sizes were measured, the lowest % of
    cuBLAS, and the sizes below the goal, computed from the chapter's result,
    each size against the fastest cuBLAS run of it among the GPU's results;
    one list for each GPU that measured the chapter, or for ``:gpu:`` alone.
``{ladder-random} <slug>``  option ``:gpu:``
    one of the three final kernels (13-tail, 16-wgmma, 17-3xtf32-wgmma) on
    the random problems (results/<gpu>/random.json,
    ladder_tools.results.random_problems): per GPU that measured the chapter or the
    problems, the seed, how many of the problems meet the kernel's goal and
    a table of every miss with its %, the share of the GPU the kernel's count
    keeps busy, the % that count predicts and the costliest cause
    (ladder_tools.analysis.misses); "not measured on this GPU yet" for a GPU with no
    random.json.
``{ladder}`01-naive:4096:gflops```
    one value inline (see ladder_tools.results.values.parse_value_request for the forms).

A stale result is shown, marked, and listed in ``ladder-stale.json``
(ladder_base). Reading and checking live in ladder_tools.results, number
forms in ladder_tools.formatting, drawing in ladder_tools/figures/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective, SphinxRole

from ladder_tools import results
from ladder_tools.analysis import misses
from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.figures.ladder import ladder_bars, ladder_drawing
from ladder_tools.formatting import (
    DASH,
    format_error,
    format_gflops,
    format_percent,
    format_size,
    format_time_range,
)
from ladder_tools.results import goals, random_problems, values
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
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

    from ladder_tools.figures.ladder import LadderBars


def _not_measured(env: BuildEnvironment, slug: str) -> nodes.Element:
    return not_measured_box(env, "Not measured yet", f"No GPU has a result for {slug}.")


# --------------------------------------------------------------------------
# {ladder-results} <slug>
# --------------------------------------------------------------------------

RESULTS_HEADER = [
    "M \u00d7 N \u00d7 K",
    "ms: median [min\u2013max]",
    "GFLOP/s",
    "cuBLAS GFLOP/s",
    "% of cuBLAS",
    "max rel. error",
    "correct",
]


# Part II's results also time cuBLAS on TF32: their tables add its column.
TF32_COLUMN = "% of cuBLAS TF32"


def _has_tf32(sizes: list[dict]) -> bool:
    """Whether a result timed cuBLAS on TF32 beside SGEMM (Part II)."""
    return any("pct_cublas_tf32" in entry for entry in sizes)


def _results_header(tf32: bool) -> list[str]:
    return RESULTS_HEADER[:5] + [TF32_COLUMN] + RESULTS_HEADER[5:] if tf32 else RESULTS_HEADER


def _results_row(entry: dict, tf32: bool = False) -> list[str]:
    """One size's row; with `tf32`, the kernel's % of cuBLAS on TF32 after
    its % of cuBLAS."""
    size = format_size((entry["M"], entry["N"], entry["K"]))
    correct = "yes" if entry["correct"] else "NO"
    error = format_error(entry["max_rel_err"])
    if not results.is_timed(entry):
        untimed = "timing skipped" if "timing_skipped" in entry else "not timed"
        return [size, untimed, DASH, DASH, DASH] + ([DASH] if tf32 else []) + [error, correct]
    row = [
        size,
        format_time_range(entry["time_ms"]),
        format_gflops(entry["gflops"]),
        format_gflops(entry["cublas_gflops"]),
        format_percent(entry["pct_cublas"]),
    ]
    if tf32:
        pct = entry.get("pct_cublas_tf32")
        row.append(format_percent(pct) if pct is not None else DASH)
    return row + [error, correct]


def _untimed_note(result: results.ChapterResult) -> str | None:
    """What "timing skipped" and "not timed" in a results table mean, for a
    table that has them: the budget from the results file's config (else
    the measure command's, results.TIME_BUDGET_S), the reason from the
    size's own entry."""
    entries = [e for e in result.data["sizes"] if not results.is_timed(e)]
    if not entries:
        return None
    config = result.provenance.get("config") or {}
    sentences = []
    skipped = [e for e in entries if "timing_skipped" in e]
    if skipped:
        budget = config.get("budget_s") or results.TIME_BUDGET_S
        budget_text = f"{budget:g} s" if isinstance(budget, (int, float)) else "a time"
        runs = (f" ({config['trials']} trials of {config['reps']} runs, of the kernel and "
                "of cuBLAS)" if {"trials", "reps"} <= config.keys() else "")
        reasons = "; ".join(
            f"{format_size((e['M'], e['N'], e['K']))}: {e['timing_skipped']}"
            for e in skipped)
        sentences.append(
            f"Timing skipped: the size was checked, but not timed. Each size has a timing "
            f"budget of {budget_text}, and a chapter skips timing a size when its first run "
            f"says that the timed runs{runs} would take longer ({reasons}).")
    if len(skipped) < len(entries):
        sentences.append("Not timed: the size was checked only, in a run that timed "
                         "nothing.")
    return " ".join(sentences)


class _ChapterDirective(LadderMixin, SphinxDirective):
    """A directive whose one argument is a chapter slug."""

    required_arguments = 1

    def load(self) -> list[results.ChapterResult]:
        slug = self.arguments[0]
        for gpu in results.gpu_folders(self.results_root):
            self.track(results.chapter_result_path(self.results_root, gpu, slug))
        try:
            found = results.load_chapter_results(self.results_root, slug, self.repo_root)
        except results.ResultsError as error:
            raise self.error(str(error)) from error
        for result in found:
            self.track(self.repo_root / result.provenance["source"])
            if result.stale:
                self.note_stale(result)
        return found


class ResultsDirective(_ChapterDirective):
    """``{ladder-results} <slug>``: the measured table of one chapter."""

    def run(self) -> list[nodes.Node]:
        found = self.load()
        if not found:
            return [_not_measured(self.env, self.arguments[0])]
        output: list[nodes.Node] = []
        for result in found:
            block = nodes.container(classes=["ladder-results"])
            # Named by the variant, as a page may stack several variants' tables.
            heading = f"{result.title} · {result.provenance['gpu']}"
            block += nodes.rubric(heading, heading)
            if result.stale:
                block += stale_result_box(self.env, result)
            tf32 = _has_tf32(result.data["sizes"])
            rows = [_results_row(entry, tf32) for entry in result.data["sizes"]]
            block += table([_results_header(tf32)], rows, classes=["ladder-table"])
            note = _untimed_note(result)
            if note:
                block += paragraph(note, ["ladder-provenance", "ladder-untimed"])
            block += provenance_paragraph(self.env, results.provenance_line(result))
            output.append(block)
        return output


# --------------------------------------------------------------------------
# {ladder-ladder}
# --------------------------------------------------------------------------


def _chapter_link(env: BuildEnvironment, slug: str) -> nodes.Node:
    """The chapter's title, linked, when its page exists; else its slug."""
    docname = f"chapters/{slug}/chapter"
    if docname not in env.found_docs:
        return nodes.Text(slug)
    return addnodes.pending_xref(
        "", nodes.inline(slug, slug), refdomain="std", reftype="doc",
        reftarget=f"/{docname}", refdoc=env.docname, refexplicit=False, refwarn=True,
    )


class LadderDirective(LadderMixin, SphinxDirective):
    """``{ladder-ladder}``: every chapter at 4096, as a figure and a table."""

    def run(self) -> list[nodes.Node]:
        slugs = results.chapter_slugs(self.repo_root)
        size = results.HEADLINE_SIZE
        table_rows: dict[str, list[nodes.Node | str]] = {
            slug: [_chapter_link(self.env, slug)] for slug in slugs}
        bars, gpu_names = [], []
        try:
            for gpu in results.gpu_folders(self.results_root):
                bars_for_gpu, name = self.gpu_column(gpu, slugs, size, table_rows)
                if bars_for_gpu is not None:
                    bars.append(bars_for_gpu)
                    gpu_names.append(name)
        except results.ResultsError as error:
            raise self.error(str(error)) from error
        if not bars:
            return [not_measured_box(self.env, "Not measured yet",
                                     "No GPU has results for any chapter.")]
        header: list[list[Any]] = [[""] + [(name, 2) for name in gpu_names],
                                   ["Chapter"] + ["GFLOP/s", "% of cuBLAS"] * len(gpu_names)]
        return [
            *figure_nodes(ladder_drawing(slugs, bars), self.state, self.lineno),
            table(header, [table_rows[slug] for slug in slugs],
                  classes=["ladder-table", "ladder-summary"]),
        ]

    def gpu_column(
        self, gpu: str, slugs: list[str], size: tuple[int, int, int],
        table_rows: dict[str, list[nodes.Node | str]],
    ) -> tuple[LadderBars, str] | tuple[None, None]:
        """Adds one GPU's cells to the table rows; returns its bars and name,
        or (None, None) when it measured no chapter."""
        root = self.results_root
        self.track(results.baseline_path(root, gpu))
        found = {}
        for slug in slugs:
            self.track(results.chapter_result_path(root, gpu, slug))
            result = results.load_chapter_result(root, gpu, slug, self.repo_root)
            if result is not None:
                found[slug] = result
                if result.stale:
                    self.note_stale(result)
        if not found:
            return None, None
        name = next(iter(found.values())).provenance["gpu"]
        for slug in slugs:
            entry = found[slug].timed_at(size) if slug in found else None
            if entry is None:
                table_rows[slug] += [DASH, DASH]
                continue
            mark = " (stale)" if found[slug].stale else ""
            table_rows[slug] += [format_gflops(entry["gflops"]) + mark,
                                 format_percent(entry["pct_cublas"]) + mark]
        bars = ladder_bars(name, slugs, found, results.load_baseline(root, gpu), size)
        return bars, name


# --------------------------------------------------------------------------
# {ladder-goals} <slug>
# --------------------------------------------------------------------------

def _short_size(size: tuple[int, int, int]) -> str:
    """1024 for a square product, else 512 \u00d7 512 \u00d7 16384."""
    return str(size[0]) if len(set(size)) == 1 else format_size(size)


def _listed(items: list[str]) -> str:
    """a, b and c."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _goal_item(verdict: goals.Verdict) -> nodes.list_item:
    """One goal's verdict, in words: how many of its sizes were measured,
    the lowest, and those below the goal."""
    goal = verdict.goal
    text = [f", at least {goal.percent:g}% of {goal.against}: "
            f"measured at {len(verdict.measured)} of {len(goal.sizes)} sizes"]
    if verdict.measured:
        lowest = min(verdict.measured, key=lambda size: verdict.measured[size])
        text.append(f", the lowest {format_percent(verdict.measured[lowest])} at "
                    f"{_short_size(lowest)}. ")
        below = [f"{_short_size(size)} ({format_percent(pct)})"
                 for size, pct in verdict.below.items()]
        text.append(f"Below the goal: {_listed(below)}." if below else "None below the goal.")
    else:
        text.append(".")
    para = nodes.paragraph()
    para += nodes.strong(goal.label, goal.label)
    para += nodes.Text("".join(text))
    return nodes.list_item("", para)


class GoalsDirective(_ChapterDirective):
    """``{ladder-goals} <slug>``: the chapter's goals against its result, on
    each GPU that measured it (the reference GPU first), or on `:gpu:` alone.
    A goal met on one GPU says nothing of another: each is judged on its
    own results, and a stale result is judged under its warning."""

    has_content = True
    option_spec = {"gpu": directives.unchanged, "brief": directives.flag}

    def run(self) -> list[nodes.Node]:
        try:
            wanted = [goals.parse_goal(line) for line in self.content if line.strip()]
        except results.ResultsError as error:
            raise self.error(f"{self.name}: {error}") from error
        if not wanted:
            raise self.error(f"{self.name}: no goal given")
        found = self.load()
        if "gpu" in self.options:
            found = [r for r in found if r.gpu == self.options["gpu"]]
        if not found:
            return [_not_measured(self.env, self.arguments[0])]
        output: list[nodes.Node] = []
        for number, result in enumerate(found):
            output.append(self._judged(result, wanted, explain=number == 0))
        return output

    def _judged(self, result: results.ChapterResult, wanted: list, explain: bool) -> nodes.Node:
        """The goals judged on one GPU's result, under its GPU's name."""
        block = nodes.container(classes=["ladder-results"])
        heading = f"Goals · {result.provenance['gpu']}"
        block += nodes.rubric(heading, heading)
        if result.stale:
            block += stale_result_box(self.env, result)
        # Each size against the fastest cuBLAS run of it among this GPU's
        # results, so that a slow cuBLAS run cannot meet a goal.
        every = results.gpu_chapter_results(self.results_root, result.gpu, self.repo_root)
        for other in every:
            self.track(other.path)
        verdicts = nodes.bullet_list(classes=["ladder-goals"])
        for goal in wanted:
            verdict = goals.judge(
                goal, result.timed_at,
                lambda size, field: results.fastest_cublas_gflops(every, size, field))
            verdicts += _goal_item(verdict)
        # A second list on the page, or a second GPU's, need not say it again.
        if explain and "brief" not in self.options:
            block += paragraph("Each size is held against the fastest cuBLAS time recorded "
                               "for it on this GPU, in any chapter's run, not only the one "
                               "beside the kernel, so a percentage here can be lower than in "
                               "the chapter's table.")
        block += verdicts
        block += provenance_paragraph(self.env, results.provenance_line(result))
        return block


# --------------------------------------------------------------------------
# {ladder-random} <slug>
# --------------------------------------------------------------------------


def _random_draw_sentence() -> str:
    """What the random problems are, from the rule that draws them."""
    r = random_problems
    return (f"Each measure run draws {r.UNIFORM_COUNT + r.THIN_COUNT} problems afresh: "
            f"{r.UNIFORM_COUNT} with M, N and K each uniform in {r.LARGE[0]} to {r.LARGE[1]}, "
            f"and {r.THIN_COUNT} thin or long ones, {r.THIN_COUNT // len(r.THIN_KINDS)} each "
            f"with M small, N small, both small and K long, and K short (a small dimension "
            f"is {r.SMALL[0]} to {r.SMALL[1]}, K goes up to {r.LONG_K[1]}). The seed draws "
            "the same problems again. A problem meets the goal when it is correct and timed "
            "at the goal or over it.")


MISSES_HEADER = ["problem", "busy, by the count", "% measured / predicted", "cause"]


def _random_verdict(verdict: results.RandomVerdict, seed: int,
                    explained: list[misses.Miss]) -> list[nodes.Node]:
    """Seed, count and every miss of one kernel on one GPU's problems, each
    miss with what the kernel's count says of it (ladder_tools.analysis.misses)."""
    text = (f"Seed {seed}: {verdict.met} of the {verdict.total} random problems meet the "
            f"goal, at least {verdict.percent:g}% of {verdict.against}.")
    if not verdict.misses:
        return [paragraph(text + " No miss.", ["ladder-random"])]
    rows = []
    for miss, (_, _, why) in zip(explained, verdict.misses, strict=True):
        cause = miss.cause(verdict.percent) if why == "below the goal" else why
        measured = format_percent(miss.percent) if miss.percent is not None else DASH
        predicted = format_percent(miss.predicted) if miss.predicted is not None else DASH
        rows.append([format_size(miss.size), format_percent(100 * miss.busy),
                     f"{measured} / {predicted}", cause or "not predicted"])
    return [paragraph(text + " The misses:", ["ladder-random"]),
            table([MISSES_HEADER], rows, ["ladder-random-misses"])]


def _misses_sentence(slug: str, against: str, explained: list[misses.Miss]) -> str:
    """How the misses table's last three columns are computed, with the
    numbers at 4096 that every prediction scales."""
    size = str(misses.REFERENCE_SIZE[0])
    first = explained[0]
    if first.reference_percent is None:
        reference = (f"Without {slug}'s result at {size} on this GPU there is no prediction "
                     f"(its busy share at {size}: {format_percent(100 * first.reference_busy)}).")
    else:
        reference = (f"At {size}, {slug} runs at {format_percent(first.reference_percent)} of "
                     f"{against} (the chapter's table, against the cuBLAS run beside it), "
                     f"{format_percent(100 * first.reference_busy)} busy.")
    return (f"Busy is the share of the SMs' time that {slug}'s launcher keeps busy on the "
            "problem by its own count: the work spread evenly over the SMs, divided by the "
            f"count of the plan it picks. The prediction is the kernel's % of {against} at "
            f"{size} times the problem's busy share, divided by the busy share at {size}. "
            f"{reference} A miss is then three factors: {misses.RATE} (the % there divided "
            f"by the goal, at most 1), {misses.SCHEDULE} (the two busy shares' ratio: what "
            f"the count sees) and {misses.STEP} (measured divided by predicted: a slower step "
            f"at this shape, a copy, or a cuBLAS faster than at {size}). The cause is the "
            "smallest factor.")


class RandomDirective(LadderMixin, SphinxDirective):
    """``{ladder-random} <slug>``: a final kernel's goal on the random
    problems, on each GPU that has them (the reference GPU first) or that
    measured the chapter without them, or on ``:gpu:`` alone."""

    required_arguments = 1
    option_spec = {"gpu": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        slug = self.arguments[0]
        if slug not in random_problems.RANDOM_CHAPTERS:
            raise self.error(f"{self.name}: {slug} is not one of the chapters the random "
                             f"problems time ({', '.join(random_problems.RANDOM_CHAPTERS)})")
        gpus = results.gpu_folders(self.results_root)
        if "gpu" in self.options:
            gpus = [g for g in gpus if g == self.options["gpu"]]
        output: list[nodes.Node] = []
        explained = False
        try:
            for gpu in gpus:
                self.track(results.random_result_path(self.results_root, gpu))
                self.track(results.chapter_result_path(self.results_root, gpu, slug))
                drawn = results.load_random_result(self.results_root, gpu, self.repo_root)
                if drawn is None:
                    chapter = results.load_chapter_result(self.results_root, gpu, slug,
                                                          self.repo_root)
                    if chapter is not None:
                        output.append(self._absent(chapter.provenance["gpu"]))
                    continue
                output.append(self._judged(drawn, slug, explain=not explained))
                explained = True
        except results.ResultsError as error:
            raise self.error(str(error)) from error
        if not output:
            return [not_measured_box(self.env, "Not measured yet",
                                     f"No GPU has timed {slug} on random problems.")]
        return output

    def _heading(self, name: str) -> nodes.Element:
        heading = f"Random problems · {name}"
        return nodes.rubric(heading, heading)

    def _absent(self, name: str) -> nodes.Node:
        block = nodes.container(classes=["ladder-results"])
        block += self._heading(name)
        block += paragraph("Random problems: not measured on this GPU yet.",
                           ["ladder-random", "ladder-not-measured"])
        return block

    def _explained(self, drawn: results.RandomResult, slug: str,
                   verdict: results.RandomVerdict) -> list[misses.Miss]:
        """The misses with their counts, from the tools that hold the
        chapter's count and the chapter's result at 4096 on the same GPU."""
        goal = random_problems.RANDOM_CHAPTERS[slug]
        sizes = [size for size, _, _ in verdict.misses]
        sms = drawn.data["chapters"][slug]["provenance"].get("sm_count")
        if not sms:
            raise self.error(f"{self.name} {slug}: {drawn.path} gives no sm_count for {slug}")
        try:
            shares, tools = misses.busy_shares(slug, [*sizes, misses.REFERENCE_SIZE], sms,
                                               self.repo_root, self.build_dir, drawn.gpu)
        except AnalysisError as error:
            raise self.error(f"{self.name} {slug}: {error}") from error
        for tool in tools:
            self.track(tool)
        chapter = results.load_chapter_result(self.results_root, drawn.gpu, slug, self.repo_root)
        reference = chapter.timed_at(misses.REFERENCE_SIZE) if chapter is not None else None
        return misses.explained(verdict, goal.field, shares, reference)

    def _judged(self, drawn: results.RandomResult, slug: str, explain: bool) -> nodes.Node:
        block = nodes.container(classes=["ladder-results"])
        block += self._heading(drawn.data["gpu"])
        if drawn.stale:
            self.record_stale(drawn.gpu, slug, drawn.path, drawn.stale)
            block += stale_notice(self.env, "Stale result", drawn.data["gpu"])
        if explain:
            block += paragraph(_random_draw_sentence())
        verdict = drawn.verdict(slug)
        explained = self._explained(drawn, slug, verdict)
        block += _random_verdict(verdict, drawn.seed, explained)
        if explain and verdict.misses:
            block += paragraph(_misses_sentence(slug, verdict.against, explained))
        block += provenance_paragraph(self.env, results.provenance_line(drawn))
        return block


# --------------------------------------------------------------------------
# {ladder}`...`
# --------------------------------------------------------------------------


class LadderRole(LadderMixin, SphinxRole):
    """``{ladder}`[gpu/]slug:size:key``` and friends: one value inline."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            request = values.parse_value_request(self.text)
            value = values.resolve_value(request, self.results_root, self.repo_root)
        except results.ResultsError as error:
            message = self.inliner.reporter.error(
                f"{{ladder}}`{self.text}`: {error}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        if request.kind == "chapter":
            assert request.slug is not None  # the parser sets it for a chapter's value
            self.track(results.chapter_result_path(self.results_root, request.gpu, request.slug))
        elif request.kind == "baseline":
            self.track(results.baseline_path(self.results_root, request.gpu))
        text, classes = value.text, ["ladder-value"]
        if value.stale and value.source is None:
            assert value.path is not None  # a value from no chapter result names its file
            self.record_stale(request.gpu, "GPU tests", value.path, value.stale)
        elif value.stale and value.source is not None:
            self.note_stale(value.source)
            text += " (stale)"
            classes.append("ladder-stale")
        return [nodes.inline(self.rawtext, text, classes=classes)], []


def setup(app: Sphinx) -> ExtensionMetadata:
    app.setup_extension("ladder_tools.sphinx.ladder_base")
    app.setup_extension("ladder_tools.sphinx.ladder_figures")
    app.add_directive("ladder-results", ResultsDirective)
    app.add_directive("ladder-goals", GoalsDirective)
    app.add_directive("ladder-random", RandomDirective)
    app.add_directive("ladder-ladder", LadderDirective)
    app.add_role("ladder", LadderRole())
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
