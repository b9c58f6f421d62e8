"""The fixture site: the book built once from a copy of tests/fixtures/results/
(synthetic numbers from two GPUs, never shown in the real book), for the
tests that read a whole built book: test_book_site.py and test_browser.py.

CTest builds it once, before either runs, as the test book.fixture-site (a
CTest fixture, tests/CMakeLists.txt):

    python tests/python/fixture_site.py --out <build dir>/fixture-site

writes the site into <out>/build/book/html, and what the build printed and
its exit status into <out>/build.log and <out>/returncode; it exits with
that status (77, CTest's skip, when Doxygen is missing). The tests find it
through LADDER_FIXTURE_SITE=<out>; run by hand without it, they build their
own copy into a temporary folder (shared_site).
"""
from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ladder_tools import provenance
from ladder_tools.analysis import binaries

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FIXTURES = ROOT / "tests" / "fixtures" / "results"
SITE_VARIABLE = "LADDER_FIXTURE_SITE"
DOXYGEN_MISSING = "Doxygen is not installed (Debian: apt-get install doxygen)"
SKIP = 77


def fixture_results(target: Path) -> Path:
    """A copy of the fixture results in which the h200 results match the
    kernels in the tree now and the fake-gpu result is stale."""
    shutil.copytree(FIXTURES, target)
    measured = [*(target / "h200" / "chapters").glob("*.json"),
                *(target / "h200").glob("sweep-*.json"), *(target / "h200").glob("transpose.json")]
    for path in measured:
        content = json.loads(path.read_text())
        recorded = content["provenance"]
        recorded["inputs"] = provenance.hash_files([recorded["source"]], ROOT,
                                                   recorded.get("inputs_exclude"))
        path.write_text(json.dumps(content))
    # The files that gather chapters record the inputs of each entry's program.
    for name in ("ncu.json", "issue.json"):
        path = target / "h200" / name
        if path.exists():
            content = json.loads(path.read_text())
            for slug, entry in content["chapters"].items():
                entry.setdefault("measured", {})["inputs"] = provenance.hash_files(
                    [main_file(slug)], ROOT)
            path.write_text(json.dumps(content))
    return target


#: What a chapter page's provenance lines leave to the appendix: commits,
#: binaries, scripts, results files and the tools' own names.
TOOL_TALK = ("commit", "bin/", "code/", ".py", ".json", "cuobjdump", "--describe",
             "tailplan", "bankmap", "warpmap", "fragmap", "lastround")


def provenance_lines(page_html: str) -> list[str]:
    """The text of each ``ladder-provenance`` paragraph of a built page,
    tags removed and entities decoded."""
    found = re.findall(r'<p class="[^"]*\bladder-provenance\b[^"]*">(.*?)</p>', page_html,
                       re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", "", p)).split()) for p in found]


def boxes(page_html: str) -> list[str]:
    """The text of each admonition (note or warning box) of a built page,
    title first, tags removed and entities decoded."""
    found = re.findall(r'<div class="[^"]*\badmonition\b[^"]*">(.*?)</div>', page_html, re.S)
    texts = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", b)).split()) for b in found]
    return [re.sub(r" ([.,;:])", r"\1", text) for text in texts]


def page_html(work: Path, page: str) -> str:
    """A page of the book built into `work` (build_book's layout), as HTML."""
    return (work / "build" / "book" / "html" / page).read_text(encoding="utf-8")


def tool_talk_in_chapter_pages(html_dir: Path) -> tuple[int, list[str]]:
    """How many provenance lines the chapter pages (exercises included)
    have, and each one that names a commit, a binary, a script, a results
    file or a tool (TOOL_TALK): those belong in the appendix."""
    count, found = 0, []
    for page in sorted((html_dir / "chapters").rglob("*.html")):
        for line in provenance_lines(page.read_text(encoding="utf-8")):
            count += 1
            found += [f"{page.relative_to(html_dir)}: {word!r} in {line!r}"
                      for word in TOOL_TALK if word in line]
    return count, found


def assert_boxes_link_to_the_appendix(page: str, title: str, link: str, label: str) -> None:
    """The chapter page has boxes titled ``title``; each names no tool and
    ends with a sentence whose link (``link``) goes to the appendix's
    section ``label``."""
    found = [box for box in boxes(page) if box.startswith(title)]
    assert found, title
    for box in found:
        assert [word for word in TOOL_TALK if word in box] == [], box
        assert box.endswith(f"The appendix says {link}."), box
    assert f'href="../../appendix.html#{label}"' in page


def main_file(slug: str) -> str:
    """The main file of the program a result name belongs to: a chapter's
    kernel.cu (a variant's is its chapter's), or the transpose exercise's."""
    if slug == "transpose":
        return "chapters/10-padding/exercise/transpose.cu"
    return f"chapters/{binaries.chapter_folder(ROOT, slug)}/kernel.cu"


def book_python() -> str:
    """An interpreter with the book's packages: this one when it has them
    (the book's virtual environment does), else the virtual environment that
    build_book.py makes in the build folder."""
    if importlib.util.find_spec("sphinx") and importlib.util.find_spec("breathe"):
        return sys.executable
    spec = importlib.util.spec_from_file_location("build_book", DOCS / "build_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    build_dir = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
    return str(module.ensure_environment(build_dir / "venv"))


def build_book(python: str, work: Path, results: Path, *extra: str,
               timeout: int = 1200) -> subprocess.CompletedProcess:
    """docs/build_book.py into work/build (the HTML in work/build/book/html).
    The timeout only guards against a hang: on 2 cores, beside the other
    tests the test command runs at once, a render has taken over 300 s."""
    return subprocess.run(
        [sys.executable, str(DOCS / "build_book.py"), "--python", python,
         "--build-dir", str(work / "build"), "--results-dir", str(results), *extra],
        capture_output=True, text=True, timeout=timeout,
    )


def build_site(work: Path) -> int:
    """The fixture site, built from scratch into `work`; returns the exit
    status, also written to work/returncode beside work/build.log."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if shutil.which("doxygen") is None:
        returncode, log = SKIP, DOXYGEN_MISSING + "\n"
    else:
        done = build_book(book_python(), work, fixture_results(work / "results"))
        returncode, log = done.returncode, done.stdout + done.stderr
    (work / "build.log").write_text(log)
    (work / "returncode").write_text(f"{returncode}\n")
    return returncode


def shared_site(tmp_path_factory) -> tuple[Path, int, str]:
    """(the folder the site was built in, its exit status, what it printed):
    the one CTest built (LADDER_FIXTURE_SITE), else one built now into a
    temporary folder, once per test session."""
    if os.environ.get(SITE_VARIABLE):
        work = Path(os.environ[SITE_VARIABLE])
        if not (work / "returncode").exists():
            raise RuntimeError(f"{SITE_VARIABLE}={work}, but no site was built there "
                               "(CTest's book.fixture-site test builds it)")
    else:
        work = tmp_path_factory.getbasetemp() / "fixture-site"
        if not (work / "returncode").exists():
            build_site(work)
    returncode = int((work / "returncode").read_text())
    return work, returncode, (work / "build.log").read_text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder to build it in")
    args = parser.parse_args()
    returncode = build_site(args.out.resolve())
    print((args.out / "build.log").read_text(), end="")
    print(f"fixture site: {args.out / 'build' / 'book' / 'html'} (exit status {returncode})")
    return returncode


if __name__ == "__main__":
    sys.exit(main())
