"""Serves the book-level pages in docs/ as if they were at the source root.

The book's source folder is the repository root, so that the chapters'
pages stay beside their kernels (chapters/NN-slug/chapter.md). Without this,
docs/index.md would be the page ``docs/index`` and index.html would not be at
the top of the output. With it, docs/<page>.md is the page ``<page>``, and
its relative paths (includes, listings) still start from docs/, where the
file is. Other pages keep their usual names.

A page may name a book-level page by its file, {doc}`/docs/preface`, or by
its page name, {doc}`/preface`: both lead to the same page.

It also writes the file names in the header of a ``literalinclude :diff:``
listing relative to the repository (Sphinx writes them as absolute paths,
which name the machine the book was built on), keeping the listing
highlighted as a diff: Sphinx highlights a literal block only while its
text is still its source text (``rawsource``), so both are rewritten.

And it has every highlighted line of a listing written as its own
``<span class="ladder-line">``, with the line's indentation in the CSS
variable ``--indent``: docs/_static/ladder.css wraps a line too long for the
column with a hanging indent (the continuation starts past the line's own
indentation) instead of making the listing scroll sideways. The text of the
listing, and what its copy button copies, are unchanged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from docutils import nodes
from pygments.formatters import HtmlFormatter
from sphinx.project import Project
from sphinx.util import docname_join

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Iterator

    from sphinx import addnodes
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

PREFIX = "docs/"


class BookProject(Project):
    """A Sphinx project that names docs/<page>.md as the page <page>."""

    def path2doc(self, filename: str | os.PathLike[str]) -> str | None:
        docname = super().path2doc(filename)
        if docname and docname.startswith(PREFIX):
            return docname.removeprefix(PREFIX)
        return docname


def _serve_docs_at_root(app: Sphinx) -> None:
    # Sphinx looks for the pages again when it starts reading, after this.
    app.project.__class__ = BookProject


def _resolve_by_file(app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref,
                     contnode: nodes.TextElement) -> nodes.reference | None:
    """Resolves a {doc} reference that names docs/<page> to the page <page>."""
    if node.get("refdomain") != "std" or node.get("reftype") != "doc":
        return None
    docname = docname_join(node.get("refdoc", ""), node["reftarget"])
    if not docname.startswith(PREFIX):
        return None
    renamed = node.deepcopy()
    renamed["reftarget"] = "/" + docname.removeprefix(PREFIX)
    return env.get_domain("std").resolve_xref(
        env, renamed["refdoc"], app.builder, "doc", renamed["reftarget"], renamed, contnode)


def _relative_diff_headers(app: Sphinx, doctree: nodes.document) -> None:
    root = str(app.srcdir).rstrip("/") + "/"
    for block in doctree.findall(nodes.literal_block):
        text = block.astext()
        if not text.startswith("--- ") or root not in text:
            continue
        lines = text.split("\n")
        for index in range(min(2, len(lines))):
            if lines[index].startswith(("--- ", "+++ ")):
                lines[index] = lines[index].replace(root, "", 1)
        text = "\n".join(lines)
        block.children = [nodes.Text(text)]
        # A block whose text differs from its source is taken for a
        # parsed literal and left unhighlighted (Sphinx's HTML writer).
        block.rawsource = text


_TAG = re.compile(r"<[^>]*>")


class LineFormatter(HtmlFormatter):
    """Pygments' HTML formatter, with each line in a span of its own that
    carries its indentation (in ``ch``) as ``--indent``."""

    def wrap(self, source: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        # types-Pygments leaves HtmlFormatter.wrap unannotated; it takes and
        # yields (is it a line, HTML) pairs, as _lines does.
        wrap: Callable[[Iterator[tuple[int, str]]], Iterator[tuple[int, str]]] = super().wrap
        return wrap(self._lines(source))

    @staticmethod
    def _lines(source: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        for kind, line in source:
            if kind != 1:
                yield kind, line
                continue
            text = _TAG.sub("", line)
            indent = len(text) - len(text.lstrip(" "))
            # The line's own newline stays inside the span: one between two
            # spans would be an empty line when they are shown as blocks.
            yield 1, f'<span class="ladder-line" style="--indent: {indent}ch">{line}</span>'


def _line_spans(app: Sphinx) -> None:
    for name in ("highlighter", "dark_highlighter"):
        bridge = getattr(app.builder, name, None)
        if bridge is not None and getattr(bridge, "dest", None) == "html":
            bridge.formatter = LineFormatter


def setup(app: Sphinx) -> ExtensionMetadata:
    app.connect("doctree-read", _relative_diff_headers)
    app.connect("builder-inited", _line_spans)
    app.connect("builder-inited", _serve_docs_at_root)
    app.connect("missing-reference", _resolve_by_file)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
