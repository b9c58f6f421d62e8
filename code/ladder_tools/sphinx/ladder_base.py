"""What every ladder directive and role shares: paths, dependencies, the
report of stale results, and the provenance line under a table.

A page that shows a stale result (one
measured on other code than the tree's) records it here; the records are
written to ``ladder-stale.json`` in the output folder, and with
``ladder_fail_on_stale = True`` each is also a warning, which fails a ``-W``
build.

A provenance line (provenance_paragraph) speaks to the reader of a chapter:
the GPU, the versions, the date, the kernel and what its counts are. Where
the numbers come from (scripts, binaries, commits, the hashes that make a
result stale) is said once, in the appendix section it links to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

if TYPE_CHECKING:
    from collections.abc import Set

    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

import ladder_tools.sphinx.ladder_nodes as ladder_nodes
from ladder_tools import results
from ladder_tools.analysis import binaries

REPO = Path(__file__).resolve().parents[2]

logger = logging.getLogger(__name__)

STALE_REPORT = "ladder-stale.json"

#: The appendix page, and its section (a MyST label) that says where the
#: numbers of each provenance line come from: the scripts, the binaries and
#: what a results file records. A chapter page's provenance lines keep to
#: what a reader needs to read the numbers and link there for the rest.
APPENDIX = "appendix"
PROVENANCE_LABEL = "where-numbers-come-from"
_LINK_TEXT = "where these numbers come from"
#: The appendix's paragraph on stale results, which the stale boxes link to.
STALE_LABEL = "stale-results"


class LadderMixin:
    """Paths and bookkeeping for a directive or role of the extension."""

    if TYPE_CHECKING:  # what the SphinxDirective or SphinxRole beside it gives
        env: BuildEnvironment
        config: Config

        def get_location(self) -> str: ...

    @property
    def repo_root(self) -> Path:
        return Path(self.config.ladder_repo_root or self.env.srcdir)

    @property
    def results_root(self) -> Path:
        return results.results_root(self.repo_root)

    @property
    def build_dir(self) -> Path:
        return binaries.build_dir(self.repo_root)

    def track(self, path: Path) -> None:
        """Rebuild this page when ``path`` changes (a results file, a binary)."""
        self.env.note_dependency(str(path))

    def record_stale(self, gpu: str, chapter: str | None, path: Path, reason: str) -> None:
        """Record a stale results file shown on this page for the report;
        warn if the book asks to."""
        record = {"gpu": gpu, "chapter": chapter, "file": str(path), "reason": reason,
                  "page": self.env.docname}
        records = stale_records(self.env).setdefault(self.env.docname, [])
        if record not in records:
            records.append(record)
        if self.config.ladder_fail_on_stale:
            logger.warning("stale result %s: %s", path, reason, location=self.get_location(),
                           type="ladder", subtype="stale")

    def note_stale(self, result: results.ChapterResult) -> None:
        """record_stale for a stale chapter result."""
        assert result.stale is not None, "note_stale is for a stale result"
        self.record_stale(result.gpu, result.data["chapter"], result.path, result.stale)


def _append_appendix_link(env: BuildEnvironment, node: nodes.Node, label: str, text: str) -> None:
    """Ends ``node`` (a paragraph) with "The appendix says <text>.", ``text``
    a link to the appendix's section ``label``. A build without the appendix
    page (a scratch page) gets the sentence without the link; a book whose
    appendix has lost the label fails on the unresolved link."""
    assert isinstance(node, nodes.Element)
    node += nodes.Text(" The appendix says ")
    if APPENDIX in env.found_docs:
        node += addnodes.pending_xref(
            "", nodes.inline(text, text), refdomain="std", reftype="ref",
            reftarget=label, refdoc=env.docname, refexplicit=True, refwarn=True)
    else:
        node += nodes.Text(text)
    node += nodes.Text(".")


def provenance_paragraph(env: BuildEnvironment, text: str) -> nodes.paragraph:
    """The small print under a table or a figure (class ``ladder-provenance``):
    ``text`` (`backquoted` parts are code), then a sentence that links to the
    appendix's section on where the numbers come from."""
    line = text.rstrip()
    if not line.endswith("."):
        line += "."
    node = ladder_nodes.paragraph(line, ["ladder-provenance"])
    _append_appendix_link(env, node, PROVENANCE_LABEL, _LINK_TEXT)
    return node


def not_measured_box(env: BuildEnvironment, title: str, text: str,
                     label: str = PROVENANCE_LABEL,
                     link_text: str = "how to measure them") -> nodes.admonition:
    """The note where a page's numbers have not been measured yet: ``text``
    says what is missing; the appendix, linked, says which command makes it
    (a chapter page names no command)."""
    box = ladder_nodes.admonition("note", title, text)
    _append_appendix_link(env, box.children[-1], label, link_text)
    return box


def stale_notice(env: BuildEnvironment, title: str, gpu: str) -> nodes.admonition:
    """The warning box over numbers measured on code that has changed since.
    Which files changed is in the stale report and the build's warnings; the
    page says only what it means for the reader, and links to the appendix's
    section on stale results."""
    box = ladder_nodes.stale_box(
        title, f"These numbers from {gpu} were measured before their code last changed, "
        "so they may not match this page.")
    _append_appendix_link(env, box.children[-1], STALE_LABEL, "how a result goes stale")
    return box


def stale_result_box(env: BuildEnvironment, result: results.ChapterResult) -> nodes.admonition:
    """The warning box over a stale chapter result."""
    return stale_notice(env, "Stale result", result.provenance["gpu"])


def stale_records(env: BuildEnvironment) -> dict[str, list[dict]]:
    """The stale results recorded so far, by page."""
    # An attribute of the environment's own, which BuildEnvironment does not
    # declare: set and read through its __dict__.
    records: dict[str, list[dict]] = vars(env).setdefault("ladder_stale", {})
    return records


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    stale_records(env).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: Set[str],
           other: BuildEnvironment) -> None:
    stale_records(env).update(
        {d: r for d, r in stale_records(other).items() if d in docnames})


def _write_stale_report(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    records = [r for page in sorted(stale_records(app.env))
               for r in stale_records(app.env)[page]]
    report = Path(app.outdir) / STALE_REPORT
    report.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    if records:
        logger.info("ladder: %d stale result(s) on the pages, listed in %s",
                    len(records), report)


def setup(app: Sphinx) -> ExtensionMetadata:
    app.add_config_value("ladder_repo_root", None, "env")
    app.add_config_value("ladder_fail_on_stale", False, "env")
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write_stale_report)
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
