"""The built books that other tests read too, read with the fixture site's
helpers (fixture_site.py): the book from the fixture results of two GPUs
(the fixture site, which test_browser.py tests in a browser) and the book
command's own render from results/ as committed.

CTest builds each once, before this file runs (the tests book.fixture-site
and book.render, tests/CMakeLists.txt) and names them (LADDER_FIXTURE_SITE,
LADDER_BOOK_DIR); run by hand without them, they are built now into a
temporary folder. They need Doxygen, and are skipped, with that reason,
only when it is missing.
"""

import json
import os
from pathlib import Path

import pytest

import fixture_site
from fixture_site import assert_boxes_link_to_the_appendix, tool_talk_in_chapter_pages
from ladder_tools.results import pending
from ladder_tools.results.values import NOT_MEASURED

ROOT = Path(__file__).resolve().parents[2]

#: The book the book command rendered (<build>/book), set by CTest
#: (tests/CMakeLists.txt) after its book.render fixture ran the target.
BOOK_VARIABLE = "LADDER_BOOK_DIR"


html = fixture_site.page_html


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The book built from the fixture results of two GPUs, shared with
    test_browser.py (fixture_site.py): the folder it was built in."""
    work, returncode, log = fixture_site.shared_site(tmp_path_factory)
    if returncode == fixture_site.SKIP:
        pytest.skip(log.strip())
    assert returncode == 0, log
    return work


def test_book_builds_with_results_from_two_gpus(site):
    out = site / "build" / "book"
    assert (out / "html" / "index.html").is_file()
    assert (out / "doxygen-warnings.log").read_text().strip() == ""

    chapter = html(site, "chapters/01-naive/chapter.html")
    # Both GPUs' tables, the reference GPU first, each with its provenance.
    first, second = chapter.index("Fixture GPU A"), chapter.index("Fixture GPU B")
    assert first < second
    assert "137.4 [136.1\u2013140.2]" in chapter
    # The provenance line: GPU, versions and date, and a link to the
    # appendix for the rest; the commit stays in the results file.
    assert ("Fixture GPU A (h200 folder) \u00b7 CUDA 0.0 \u00b7 cuBLAS 0.0.0 \u00b7 driver 0.0 "
            "\u00b7 measured 2000-01-01. The appendix says where these numbers come from."
            ) in fixture_site.provenance_lines(chapter)
    assert 'href="../../appendix.html#where-numbers-come-from"' in chapter
    assert "0000000fixture" not in chapter
    # An untimed size is listed, not dropped.
    assert "8192 \u00d7 8192 \u00d7 8192" in chapter and "timing skipped" in chapter
    # The stale result is shown under a visible warning, and recorded.
    assert chapter.count("Stale result") >= 1
    stale = json.loads((out / "html" / "ladder-stale.json").read_text())
    assert stale and {(r["gpu"], r["chapter"]) for r in stale} == {("fake-gpu", "01-naive")}
    # The figure is drawn twice, for light and dark pages.
    assert "data:image/svg+xml;base64," in chapter
    assert "only-light" in chapter and "only-dark" in chapter

    # No page names the machine it was built on (diff headers included).
    for page in (out / "html").rglob("*.html"):
        assert str(ROOT) + "/" not in page.read_text(encoding="utf-8"), page

    preface = html(site, "preface.html")
    assert "60,000 GFLOP/s" in preface  # baseline:fma_peak_gflops
    assert "ladder-summary" in html(site, "index.html")  # the ladder's table


def test_chapter_pages_provenance_lines_leave_tool_talk_to_the_appendix(site):
    """A chapter page speaks to a learner: its provenance lines (results,
    ncu, issue profile, sweep, transpose, SASS mix, resources, chapter 13's
    plans) give the GPU, the versions, the date and the kernel, and link to
    the appendix's section for where the numbers come from."""
    html_dir = site / "build" / "book" / "html"
    count, found = tool_talk_in_chapter_pages(html_dir)
    assert count > 0
    assert found == []
    appendix = (html_dir / "appendix.html").read_text(encoding="utf-8")
    assert 'id="where-numbers-come-from"' in appendix
    for slug in ("03-flat-block", "09-autotuning", "13-tail"):
        page = html(site, f"chapters/{slug}/chapter.html")
        lines = fixture_site.provenance_lines(page)
        assert lines and all(line.endswith(
            "The appendix says where these numbers come from.") for line in lines), slug
        # (the notes of a result not measured yet link there too)
        assert page.count('href="../../appendix.html#where-numbers-come-from"') >= len(
            lines), slug
    # A stale result's warning box says what it means for the reader and
    # links to the appendix; which files changed, and the command that
    # measures again, are the appendix's and the stale report's.
    assert_boxes_link_to_the_appendix(html(site, "chapters/01-naive/chapter.html"),
                                      "Stale result", "how a result goes stale", "stale-results")
    assert 'id="stale-results"' in appendix


def committed_book(book_python, tmp_path, waiting) -> Path:
    """The HTML folder of the book built from results/ as committed, with
    warnings as errors, a stale result an error too unless
    tests/pending_measurement.txt says why it is stale: the book command's
    own render when CTest names it (LADDER_BOOK_DIR, the book.render fixture
    ran the target `book`, which renders when anything it reads has
    changed), else one built now into tmp_path."""
    if os.environ.get(BOOK_VARIABLE):
        out = Path(os.environ[BOOK_VARIABLE])
        stamp = out / "ladder-inputs.json"
        # docs/build_book.py writes the stamp only after a render that
        # succeeded; it records what the render read and how it ran.
        assert stamp.is_file(), f"{out}: no successful render of the book there"
        options = json.loads(stamp.read_text())["options"]
        assert Path(options["results_dir"]) == ROOT / "results", options
        assert not options["stop_at_first_warning"], options
        # Rendered without --fail-on-stale: each stale result is in its
        # ladder-stale.json, which the caller holds against the pending file
        # (an empty report is a build that --fail-on-stale passes).
        return out / "html"
    done = fixture_site.build_book(book_python, tmp_path, ROOT / "results",
                 *([] if waiting.stale else ["--fail-on-stale"]))
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "build" / "book" / "html"


def test_the_book_builds_from_the_committed_results(book_python, tmp_path):
    """The book as readers get it: results/ as committed, every page built
    with warnings as errors. A stale result is an error too, unless
    tests/pending_measurement.txt says why it is stale; then the page shows
    it under a warning box. A chapter reads "(not measured)" only when that
    file says it is."""
    waiting = pending.read(ROOT)
    html_dir = committed_book(book_python, tmp_path, waiting)

    def page(name: str) -> str:
        return (html_dir / name).read_text(encoding="utf-8")

    report = json.loads(page("ladder-stale.json"))
    assert bool(report) == bool(waiting.stale)
    for record in report:  # each stale for a reason the pending file gives
        assert record["reason"].split(" ")[0] in waiting.stale, record
    index = page("index.html")
    assert "ladder-summary" in index
    # The index's summary lists each chapter's own result, one column per
    # GPU: a chapter no GPU measured reads "(not measured)" there, one that
    # another GPU measured a dash in the reference GPU's column; a missing
    # variant does not show.
    own_missing = [name for name in waiting.missing if (ROOT / "chapters" / name).is_dir()]
    if NOT_MEASURED in index:
        assert waiting.missing
    nowhere = [name for name in own_missing
               if not list((ROOT / "results").glob(f"*/chapters/{name}.json"))]
    if nowhere:
        assert NOT_MEASURED in index
    # Chapter 13's goals are judged from its result, not in the prose.
    assert "ladder-goals" in page("chapters/13-tail/chapter.html")
    # Chapters 16 and 17 have a directive each, judged on every GPU that
    # measured its slug, under that GPU's name; a second GPU's list does not
    # repeat what the goals are held against.
    for slug in ("16-wgmma", "17-3xtf32-wgmma"):
        chapter = page(f"chapters/{slug}/chapter.html")
        measured = [json.loads(path.read_text())["provenance"]["gpu"]
                    for path in sorted((ROOT / "results").glob(f"*/chapters/{slug}.json"))]
        assert chapter.count('class="ladder-goals') == len(measured), slug
        for gpu in set(measured):
            assert chapter.count(f"Goals · {gpu}") == measured.count(gpu)
        assert chapter.count("Each size is held against the fastest cuBLAS") == min(
            len(measured), 1)
    # The real results' provenance lines leave tool talk to the appendix too.
    count, found = tool_talk_in_chapter_pages(html_dir)
    assert count > 0 and found == []
