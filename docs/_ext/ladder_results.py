"""Sphinx glue that puts measured results on the book's pages.

Numbers enter the book only through what this extension reads from
``results/`` (or from $LADDER_RESULTS_DIR):

``{ladder-results} 01-naive``
    one table per GPU that measured the chapter (the reference GPU first),
    one row per size, a provenance line under it; a note when nothing was
    measured; a warning box when the result is stale.
``{ladder-plot} 01-naive``
    GFLOP/s and % of cuBLAS by size, one line per GPU.
``{ladder-ladder}``
    every chapter's GFLOP/s at 4096 as bars, cuBLAS and the FP32 FMA peak as
    lines, and a table of all chapters.
``{ladder}`01-naive:4096:gflops```
    one value inline (see ladder_data.parse_value_request for the forms).

A stale result is shown, marked, and listed in ``ladder-stale.json`` in the
output folder; with ``ladder_fail_on_stale = True`` it is also a warning,
which fails a ``-W`` build. Reading, checking and formatting live in
ladder_data, drawing in ladder_plots.
"""

from __future__ import annotations

import ast
import base64
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

import ladder_data as data
import ladder_plots as plots

logger = logging.getLogger(__name__)

STALE_REPORT = "ladder-stale.json"


# --------------------------------------------------------------------------
# Shared by the directives and the role
# --------------------------------------------------------------------------


class _LadderMixin:
    """Paths and bookkeeping for a directive or role of this extension."""

    @property
    def repo_root(self) -> Path:
        return Path(self.config.ladder_repo_root or self.env.srcdir)

    @property
    def results_root(self) -> Path:
        return data.results_root(self.repo_root)

    def track(self, path: Path) -> None:
        """Rebuild this page when ``path`` changes (a results file)."""
        self.env.note_dependency(str(path))

    def note_stale(self, result: data.ChapterResult) -> None:
        """Record a stale result for the report; warn if the book asks to."""
        record = {
            "gpu": result.gpu,
            "chapter": result.data["chapter"],
            "file": str(result.path),
            "reason": result.stale,
            "page": self.env.docname,
        }
        records = _stale_records(self.env).setdefault(self.env.docname, [])
        if record not in records:
            records.append(record)
        if self.config.ladder_fail_on_stale:
            logger.warning(
                "stale result %s: %s", result.path, result.stale,
                location=self.get_location(), type="ladder", subtype="stale",
            )


def _stale_records(env) -> dict[str, list[dict]]:
    if not hasattr(env, "ladder_stale"):
        env.ladder_stale = {}
    return env.ladder_stale


def _paragraph(text: str, classes: list[str] | None = None) -> nodes.paragraph:
    """A paragraph of plain text in which `backquoted` parts are code."""
    paragraph = nodes.paragraph(classes=classes or [])
    for index, part in enumerate(text.split("`")):
        if part:
            paragraph += nodes.literal(part, part) if index % 2 else nodes.Text(part)
    return paragraph


def _admonition(kind: str, title: str, text: str) -> nodes.admonition:
    """A titled box styled as a note or a warning (``kind``)."""
    box = nodes.admonition(classes=[kind, f"admonition-{kind}"])
    box += nodes.title(title, title)
    box += _paragraph(text)
    return box


def _not_measured(slug: str) -> nodes.Element:
    return _admonition(
        "note",
        "Not measured yet",
        f"No GPU has a result for {slug}. Run `python3 code/measure.py` on a GPU "
        "to write one into results/, then build the book again.",
    )


def _stale_box(result: data.ChapterResult) -> nodes.Element:
    box = _admonition(
        "warning",
        "Stale result",
        f"These numbers from {result.provenance['gpu']} were measured on other "
        f"code: {result.stale}. Measure again with `python3 code/measure.py`.",
    )
    box["classes"].append("ladder-stale")
    return box


#: A cell of words (a kernel's name, "reported by NVIDIA H200", "1 (fastest,
#: committed)") may wrap; a number, a size or a time range stays on one line.
_WORDS = re.compile(r"[A-Za-z]{3,}.*[\s\-]|[\s\-].*[A-Za-z]{3,}")


def _header_text(text: str) -> list[nodes.Node]:
    """A header's text with a place to break after a "/" or "_" that two
    letters follow (threads/block, NUM_THREADS; not GFLOP/s), so that a
    narrow column may take it on two lines."""
    parts: list[nodes.Node] = []
    for piece in re.split(r"(?<=[/_])(?=\w\w)", text):
        if parts:
            parts.append(nodes.raw("", "<wbr>", format="html"))
        parts.append(nodes.Text(piece))
    return parts


def _row(cells: list, header: bool = False) -> nodes.row:
    """A table row; a cell is text, one inline node, or (text, columns) for
    text that spans several columns. Numbers stay on one line (ladder.css);
    a cell of words is marked ``ladder-text`` and may wrap."""
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        if isinstance(cell, tuple):
            cell, span = cell
            entry["morecols"] = span - 1
        paragraph = nodes.paragraph()
        if isinstance(cell, str) and header:
            paragraph += _header_text(cell)
        elif isinstance(cell, str):
            paragraph += nodes.Text(cell)
            if _WORDS.search(cell):
                entry["classes"].append("ladder-text")
        else:
            paragraph += cell
        entry += paragraph
        row += entry
    return row


def _table(header: list[list], rows: list[list], classes: list[str]) -> nodes.table:
    """A plain docutils table with one or more header rows."""
    columns = sum(cell[1] if isinstance(cell, tuple) else 1 for cell in header[0])
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=columns)
    table += group
    for _ in range(columns):
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    for cells in header:
        head += _row(cells, header=True)
    body = nodes.tbody()
    for cells in rows:
        body += _row(cells)
    group += head
    group += body
    return table


def _svg_image(svg: bytes, alt: str, mode: str) -> nodes.image:
    """An inline SVG image shown in one page mode only."""
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return nodes.image(uri=uri, alt=alt, classes=[f"only-{mode}", "ladder-figure"])


def _figure(draw, alt: str, caption: str) -> nodes.figure:
    """A figure with a light and a dark drawing; ``draw(mode)`` returns SVG."""
    figure = nodes.figure(classes=["ladder-figure"])
    for mode in ("light", "dark"):
        figure += _svg_image(draw(mode), alt, mode)
    figure += nodes.caption(caption, caption)
    return figure


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


def _results_row(entry: dict) -> list[str]:
    size = data.format_size((entry["M"], entry["N"], entry["K"]))
    correct = "yes" if entry["correct"] else "NO"
    error = data.format_error(entry["max_rel_err"])
    if not data.is_timed(entry):
        untimed = "timing skipped" if "timing_skipped" in entry else "not timed"
        return [size, untimed, "\u2014", "\u2014", "\u2014", error, correct]
    return [
        size,
        data.format_time_range(entry["time_ms"]),
        data.format_gflops(entry["gflops"]),
        data.format_gflops(entry["cublas_gflops"]),
        data.format_percent(entry["pct_cublas"]),
        error,
        correct,
    ]


def _measure_budget_s(repo_root: Path) -> float | None:
    """TIME_BUDGET_S of code/measure.py, read from its source (not run)."""
    try:
        tree = ast.parse((repo_root / "code" / "measure.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and any(getattr(t, "id", None) == "TIME_BUDGET_S" for t in node.targets)):
            return node.value.value
    return None


def _untimed_note(result: data.ChapterResult, repo_root: Path) -> str | None:
    """What "timing skipped" and "not timed" in a results table mean, for a
    table that has them: the budget from the results file's config (else
    from code/measure.py), the reason from the size's own entry."""
    entries = [e for e in result.data["sizes"] if not data.is_timed(e)]
    if not entries:
        return None
    config = result.provenance.get("config") or {}
    sentences = []
    skipped = [e for e in entries if "timing_skipped" in e]
    if skipped:
        budget = config.get("budget_s") or _measure_budget_s(repo_root)
        budget_text = f"{budget:g} s" if isinstance(budget, (int, float)) else "a time"
        runs = (f" ({config['trials']} trials of {config['reps']} runs, of the kernel and "
                "of cuBLAS)" if {"trials", "reps"} <= config.keys() else "")
        reasons = "; ".join(
            f"{data.format_size((e['M'], e['N'], e['K']))}: {e['timing_skipped']}"
            for e in skipped)
        sentences.append(
            f"Timing skipped: the size was checked, but not timed. The measure command "
            f"(code/measure.py) gives each size a budget of {budget_text}, and a chapter "
            f"skips timing a size when its first run says that the timed runs{runs} "
            f"would take longer ({reasons}).")
    if len(skipped) < len(entries):
        sentences.append("Not timed: the size was only checked (--check-only).")
    return " ".join(sentences)


class _ChapterDirective(_LadderMixin, SphinxDirective):
    """A directive whose one argument is a chapter slug."""

    required_arguments = 1

    def load(self) -> list[data.ChapterResult]:
        slug = self.arguments[0]
        for gpu in data.gpu_folders(self.results_root):
            self.track(data.chapter_result_path(self.results_root, gpu, slug))
        try:
            results = data.load_chapter_results(self.results_root, slug, self.repo_root)
        except data.ResultsError as error:
            raise self.error(str(error)) from error
        for result in results:
            self.track(self.repo_root / result.provenance["source"])
            if result.stale:
                self.note_stale(result)
        return results


class ResultsDirective(_ChapterDirective):
    """``{ladder-results} <slug>``: the measured table of one chapter."""

    def run(self) -> list[nodes.Node]:
        results = self.load()
        if not results:
            return [_not_measured(self.arguments[0])]
        output: list[nodes.Node] = []
        for result in results:
            block = nodes.container(classes=["ladder-results"])
            block += nodes.rubric(result.provenance["gpu"], result.provenance["gpu"])
            if result.stale:
                block += _stale_box(result)
            rows = [_results_row(entry) for entry in result.data["sizes"]]
            block += _table([RESULTS_HEADER], rows, classes=["ladder-table"])
            note = _untimed_note(result, self.repo_root)
            if note:
                block += _paragraph(note, ["ladder-provenance", "ladder-untimed"])
            block += _paragraph(data.provenance_line(result), ["ladder-provenance"])
            output.append(block)
        return output


# --------------------------------------------------------------------------
# {ladder-plot} <slug>
# --------------------------------------------------------------------------


def _square_series(result: data.ChapterResult, pick) -> plots.Series:
    """One value per square size of a result, in size order."""
    squares = sorted(
        (e for e in result.data["sizes"] if e["M"] == e["N"] == e["K"] and data.is_timed(e)),
        key=lambda e: e["M"],
    )
    return plots.Series(result.provenance["gpu"], [e["M"] for e in squares],
                        [pick(e) for e in squares])


class PlotDirective(_ChapterDirective):
    """``{ladder-plot} <slug>``: GFLOP/s and % of cuBLAS by size, per GPU."""

    def run(self) -> list[nodes.Node]:
        results = [r for r in self.load()
                   if _square_series(r, lambda e: e["gflops"]).sizes]
        if not results:
            return [_not_measured(self.arguments[0])]
        gflops = [_square_series(r, lambda e: e["gflops"]) for r in results]
        cublas = [_square_series(r, lambda e: e["cublas_gflops"]) for r in results]
        pct = [_square_series(r, lambda e: e["pct_cublas"]) for r in results]
        stale = [r.provenance["gpu"] for r in results if r.stale]
        caption = (f"{results[0].title}: GFLOP/s (left; cuBLAS dashed) and % of "
                   "cuBLAS (right) at each square size.")
        if any(not plots.on_series(size) for series in gflops for size in series.sizes):
            caption += (f" Sizes that are not a multiple of {plots.SERIES_STEP} are open "
                        "markers, off the line.")
        if stale:
            caption += f" Stale: {', '.join(stale)}."
        return [_figure(
            lambda mode: plots.draw_by_size(gflops, cublas, pct, mode),
            alt=f"GFLOP/s and percent of cuBLAS by matrix size for {self.arguments[0]}",
            caption=caption,
        )]


# --------------------------------------------------------------------------
# {ladder-ladder}
# --------------------------------------------------------------------------


def _chapter_link(env, slug: str) -> nodes.Node:
    """The chapter's title, linked, when its page exists; else its slug."""
    docname = f"chapters/{slug}/chapter"
    if docname not in env.found_docs:
        return nodes.Text(slug)
    return addnodes.pending_xref(
        "", nodes.inline(slug, slug), refdomain="std", reftype="doc",
        reftarget=f"/{docname}", refdoc=env.docname, refexplicit=False, refwarn=True,
    )


class LadderDirective(_LadderMixin, SphinxDirective):
    """``{ladder-ladder}``: every chapter at 4096, as a figure and a table."""

    def run(self) -> list[nodes.Node]:
        slugs = data.chapter_slugs(self.repo_root)
        size = data.HEADLINE_SIZE
        table_rows = {slug: [_chapter_link(self.env, slug)] for slug in slugs}
        bars, gpu_names = [], []
        try:
            for gpu in data.gpu_folders(self.results_root):
                bars_for_gpu, name = self.gpu_column(gpu, slugs, size, table_rows)
                if bars_for_gpu is not None:
                    bars.append(bars_for_gpu)
                    gpu_names.append(name)
        except data.ResultsError as error:
            raise self.error(str(error)) from error
        if not bars:
            return [_admonition("note", "Not measured yet",
                                "No GPU has results for any chapter. Run "
                                "`python3 code/measure.py` on a GPU, then build the "
                                "book again.")]
        header = [[""] + [(name, 2) for name in gpu_names],
                  ["Chapter"] + ["GFLOP/s", "% of cuBLAS"] * len(gpu_names)]
        labels = [slug.replace("-", " ", 1) for slug in slugs]
        size_text = data.format_size(size)
        return [
            _figure(lambda mode: plots.draw_ladder(labels, bars, mode),
                    alt="GFLOP/s of every chapter at 4096, with cuBLAS and the FMA peak",
                    caption=f"Every chapter at {size_text}: GFLOP/s (bars), "
                            "cuBLAS (dashed) and the FP32 FMA peak (dotted)."),
            _table(header, [table_rows[slug] for slug in slugs],
                   classes=["ladder-table", "ladder-summary"]),
        ]

    def gpu_column(self, gpu, slugs, size, table_rows):
        """Adds one GPU's cells to the table rows; returns its bars and name,
        or (None, None) when it measured no chapter."""
        root = self.results_root
        self.track(data.baseline_path(root, gpu))
        results = {}
        for slug in slugs:
            path = data.chapter_result_path(root, gpu, slug)
            self.track(path)
            result = data.load_chapter_result(root, gpu, slug, self.repo_root)
            if result is not None:
                results[slug] = result
                if result.stale:
                    self.note_stale(result)
        if not results:
            return None, None
        name = next(iter(results.values())).provenance["gpu"]
        rates: list[float | None] = []
        for slug in slugs:
            entry = results[slug].at(size) if slug in results else None
            if entry is not None and not data.is_timed(entry):
                entry = None
            rates.append(entry["gflops"] if entry else None)
            if entry is None:
                table_rows[slug] += ["\u2014", "\u2014"]
                continue
            mark = " (stale)" if results[slug].stale else ""
            table_rows[slug] += [data.format_gflops(entry["gflops"]) + mark,
                                 data.format_percent(entry["pct_cublas"]) + mark]
        baseline = data.load_baseline(root, gpu) or {}
        peak = baseline.get("fma_peak_gflops")
        bars = plots.LadderBars(
            label=name,
            gflops=rates,
            cublas_gflops=data.median_cublas_gflops(list(results.values()), size),
            fma_peak_gflops=peak if isinstance(peak, (int, float)) else None,
        )
        return bars, name


# --------------------------------------------------------------------------
# {ladder}`...`
# --------------------------------------------------------------------------


class LadderRole(_LadderMixin, SphinxRole):
    """``{ladder}`[gpu/]slug:size:key``` and friends: one value inline."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            request = data.parse_value_request(self.text)
            value = data.resolve_value(request, self.results_root, self.repo_root)
        except data.ResultsError as error:
            message = self.inliner.reporter.error(
                f"{{ladder}}`{self.text}`: {error}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        if request.kind == "chapter":
            self.track(data.chapter_result_path(self.results_root, request.gpu, request.slug))
        elif request.kind == "baseline":
            self.track(data.baseline_path(self.results_root, request.gpu))
        text, classes = value.text, ["ladder-value"]
        if value.stale:
            self.note_stale(value.source)
            text += " (stale)"
            classes.append("ladder-stale")
        return [nodes.inline(self.rawtext, text, classes=classes)], []


# --------------------------------------------------------------------------
# Bookkeeping and setup
# --------------------------------------------------------------------------


def _purge(app, env, docname):
    _stale_records(env).pop(docname, None)


def _merge(app, env, docnames, other):
    _stale_records(env).update(
        {d: r for d, r in _stale_records(other).items() if d in docnames})


def _write_stale_report(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    records = [r for page in sorted(_stale_records(app.env))
               for r in _stale_records(app.env)[page]]
    report = Path(app.outdir) / STALE_REPORT
    report.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    if records:
        logger.info("ladder: %d stale result(s) on the pages, listed in %s",
                    len(records), report)


def setup(app):
    app.add_config_value("ladder_repo_root", None, "env")
    app.add_config_value("ladder_fail_on_stale", False, "env")
    app.add_directive("ladder-results", ResultsDirective)
    app.add_directive("ladder-plot", PlotDirective)
    app.add_directive("ladder-ladder", LadderDirective)
    app.add_role("ladder", LadderRole())
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write_stale_report)
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
