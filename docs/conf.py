"""Sphinx configuration of the book.

The book's source folder is the repository root, with this folder as the
configuration folder (``sphinx-build -c docs . OUT``): the chapters' pages
sit beside their kernels in chapters/NN-slug/chapter.md, the book-level pages
(index, preface, glossary, appendix) here in docs/. The pages in docs/ are
served as if they were at the root (docs/preface.md is the page ``preface``),
so that index.html is at the top of the output and the chapters sit under
chapters/ (code/ladder_tools/sphinx/book_layout.py). Build it with docs/build_book.py (or the
CMake target ``book``), which runs Doxygen first and passes its XML folder in
$LADDER_DOXYGEN_XML.
"""

import os
from importlib import metadata
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent

project = "The SGEMM Ladder"
author = "The SGEMM Ladder authors"
copyright = f"2026, {author}"

extensions = [
    "myst_parser",
    "breathe",
    "sphinx_copybutton",
    "sphinx_design",
    # The book's own (code/ladder_tools/sphinx), installed with this repository's
    # distribution (pyproject.toml) in the book's environment.
    "ladder_tools.sphinx.book_layout",
    "ladder_tools.sphinx.ladder_results",
    "ladder_tools.sphinx.ladder_analysis",
]

# -- Which files are pages -------------------------------------------------

root_doc = "index"
source_suffix = {".md": "markdown"}
include_patterns = ["docs/*.md", "chapters/*/chapter.md", "chapters/*/exercise/*.md"]
# Everything at the top but docs/ and chapters/ is pruned before it is
# walked (the build folder, with its virtual environment, can be large);
# results-schema.md is part of the appendix, not a page of its own.
exclude_patterns = sorted(
    entry.name for entry in REPO.iterdir() if entry.name not in ("docs", "chapters")
) + ["docs/results-schema.md"]

# -- Checks: every reference must resolve --------------------------------

nitpicky = True
# CUDA and C++ library types that appear in signatures but are not
# documented in this book.
nitpick_ignore = [
    ("cpp:identifier", name)
    for name in (
        "cudaStream_t", "cudaError_t", "cublasHandle_t", "dim3",
        "float2", "float4", "int2", "int4", "uint32_t", "size_t", "std",
        # run_chapter's default argument names the caller's file with it.
        "__builtin_FILE",
    )
]
# Namespaces qualify names but are not documented objects themselves: the
# harness's (ladder) and each chapter's (ch01, ch02, ...).
nitpick_ignore_regex = [("cpp:identifier", r"ladder|ch\d\d")]

# -- MyST ------------------------------------------------------------------

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "fieldlist"]
myst_heading_anchors = 3

# -- Breathe: the kernels' and the harness's Doxygen comments ---------------

breathe_projects = {
    "ladder": os.environ.get(
        "LADDER_DOXYGEN_XML", str(REPO / "build" / "book" / "doxygen" / "xml")
    )
}
breathe_default_project = "ladder"
breathe_domain_by_extension = {"cu": "cpp", "cuh": "cpp", "hpp": "cpp"}

# -- The measured results (code/ladder_tools/sphinx/ladder_base.py, ladder_results.py) -----

ladder_repo_root = str(REPO)
# A stale result is marked on its page and listed in ladder-stale.json; set
# this (sphinx-build -D ladder_fail_on_stale=1) to make it a warning too.
ladder_fail_on_stale = False

# -- HTML --------------------------------------------------------------------

html_theme = "furo"
html_title = "The SGEMM Ladder"
html_static_path = ["_static", str(Path(metadata.distribution(
    "sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static")))]
html_css_files = ["ladder.css"]
# The tab's icon (without one, a browser asks for /favicon.ico and gets a 404).
html_favicon = "_static/favicon.svg"
pygments_style = "friendly"
pygments_dark_style = "monokai"
copybutton_exclude = ".linenos, .gp, .go"

# -- Math, without a CDN -------------------------------------------------------

# The site loads nothing from another host: MathJax (3.2) comes from the
# sphinx-mathjax-offline package (docs/requirements.txt), whose static/
# folder is copied into _static/ above (as _static/mathjax/), and is loaded
# from there. (The package is used for its files only, not as an extension.)
mathjax_path = "mathjax/tex-chtml.js"
