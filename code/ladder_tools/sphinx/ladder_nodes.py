"""Docutils node builders that the ladder directives share.

Paragraphs with inline code, note and warning boxes, tables whose numbers
stay on one line, and figures drawn twice (light and dark page), some of
them twice more for a phone. Nothing here knows of results or of Sphinx.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

from docutils import nodes


def paragraph(text: str, classes: list[str] | None = None) -> nodes.paragraph:
    """A paragraph of plain text in which `backquoted` parts are code."""
    node = nodes.paragraph(classes=classes or [])
    for index, part in enumerate(text.split("`")):
        if part:
            node += nodes.literal(part, part) if index % 2 else nodes.Text(part)
    return node


def admonition(kind: str, title: str, text: str) -> nodes.admonition:
    """A titled box styled as a note or a warning (``kind``)."""
    box = nodes.admonition(classes=[kind, f"admonition-{kind}"])
    box += nodes.title(title, title)
    box += paragraph(text)
    return box


#: A cell of words (a kernel's name, "reported by NVIDIA H200", "1 (fastest,
#: committed)") may wrap; a number, a size or a time range stays on one line.
_WORDS = re.compile(r"[A-Za-z]{3,}.*[\s\-]|[\s\-].*[A-Za-z]{3,}")


def header_text(text: str) -> list[nodes.Node]:
    """A header's text with a place to break after a "/" or "_" that two
    letters follow (threads/block, NUM_THREADS; not GFLOP/s), so that a
    narrow column may take it on two lines."""
    parts: list[nodes.Node] = []
    for piece in re.split(r"(?<=[/_])(?=\w\w)", text):
        if parts:
            parts.append(nodes.raw("", "<wbr>", format="html"))
        parts.append(nodes.Text(piece))
    return parts


def row(cells: list, header: bool = False) -> nodes.row:
    """A table row; a cell is text, one inline node, or (text, columns) for
    text that spans several columns. Numbers stay on one line (ladder.css);
    a cell of words is marked ``ladder-text`` and may wrap."""
    line = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        if isinstance(cell, tuple):
            cell, span = cell
            entry["morecols"] = span - 1
        text = nodes.paragraph()
        if isinstance(cell, str) and header:
            text += header_text(cell)
        elif isinstance(cell, str):
            text += nodes.Text(cell)
            if _WORDS.search(cell):
                entry["classes"].append("ladder-text")
        else:
            text += cell
        entry += text
        line += entry
    return line


def table(header: list[list], rows: list[list], classes: list[str]) -> nodes.table:
    """A plain docutils table with one or more header rows."""
    columns = sum(cell[1] if isinstance(cell, tuple) else 1 for cell in header[0])
    node = nodes.table(classes=classes)
    group = nodes.tgroup(cols=columns)
    node += group
    for _ in range(columns):
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    for cells in header:
        head += row(cells, header=True)
    body = nodes.tbody()
    for cells in rows:
        body += row(cells)
    group += head
    group += body
    return node


def svg_image(svg: bytes, alt: str, mode: str) -> nodes.image:
    """An inline SVG image shown in one page mode only."""
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return nodes.image(uri=uri, alt=alt, classes=[f"only-{mode}", "ladder-figure"])


def figure(draw: Callable[[str], bytes], alt: str, caption: str) -> nodes.figure:
    """A figure with a light and a dark drawing; ``draw(mode)`` returns SVG."""
    node = nodes.figure(classes=["ladder-figure"])
    for mode in ("light", "dark"):
        node += svg_image(draw(mode), alt, mode)
    node += nodes.caption(caption, caption)
    return node


def with_phone_drawing(node: nodes.figure, draw_phone: Callable[[str], bytes],
                       alt: str) -> nodes.figure:
    """Gives ``node`` (a figure) a second drawing for a phone, in the light
    and the dark mode: ``draw_phone(mode)`` returns its SVG, drawn about a
    phone's column wide (360 px) so that its text is not shrunk below
    legibility. docs/_static/ladder.css shows the figure's own drawing
    (``ladder-wide``) where the column is wider than 46em and the phone's
    (``ladder-stacked``) where it is narrower; the classes are those the
    two-panel plots ({ladder-plot}) first had. Returns ``node``."""
    node["classes"].append("ladder-two-panel")
    for image in node.findall(nodes.image):
        image["classes"].append("ladder-wide")
    for mode in ("light", "dark"):
        image = svg_image(draw_phone(mode), alt, mode)
        image["classes"].append("ladder-stacked")
        node.insert(len(node) - 1, image)  # before the caption
    return node


def stale_box(title: str, text: str) -> nodes.admonition:
    """The warning box over numbers measured on other code than the page's."""
    box = admonition("warning", title, text)
    box["classes"].append("ladder-stale")
    return box
