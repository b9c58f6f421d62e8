"""No measured-looking number is typed by hand into the book's prose.

Every number the book reports as measured comes from results/ through the
`{ladder}` role and the ladder-* directives (code/ladder_tools/sphinx). A number followed by
a unit of measurement (GFLOP/s, GB/s, ms, %, registers, instructions, ...)
typed into the prose instead goes stale the day the kernel or the GPU
changes, and nothing would notice. This lint scans every chapters/**/*.md and
docs/*.md outside code fences, math, inline code, the value-inserting roles
and the non-prose directives, and fails on each such number that is not in
tests/prose_numbers_allow.txt: an explicit list of (file, exact phrase)
entries, each with its reason (a derivation from constants, a prediction, a
specification figure).

Run `python3 tests/python/test_prose_numbers.py` to print every finding.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOW = ROOT / "tests" / "prose_numbers_allow.txt"

# A number: digits with optional thousands separators and decimals, perhaps a
# range ("86-90%"), then a unit of measurement.
# Thousands may be grouped by commas or (thin) spaces: "1,234,567", "65 536".
DIGITS = r"(?:\d{1,3}(?:[,\u00a0\u202f ]\d{3}(?!\d))+|\d+)(?:\.\d+)?"
NUMBER = r"(?<![\w.,])" + DIGITS + r"(?:\s*[-–]\s*" + DIGITS + r")?"
# A % followed by a number is the modulo operator ("5 % 8"), not a unit.
UNIT = (r"(?:[GT]FLOP/s|[GT]FLOPS|[GMT]B/s|ms|µs|us|ns|%(?!\s*\d)|\\%"
        r"|registers?\b|instructions?\b|of\s+cuBLAS\b|cycles?\b)")
MEASURED = re.compile(NUMBER + r"(?:\s|\u00a0|\u202f)*" + UNIT + r"(?![\w/])?")

# Backtick directives whose body is prose (scanned); every other fenced block
# (code, literalinclude, the ladder-* directives that insert values) is not.
PROSE_DIRECTIVES = {"glossary", "note", "warning", "tip", "important", "admonition",
                    "seealso", "dropdown", "hint", "attention", "caution"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w-]+)\})?")
# Inline: roles with their argument ({ladder}`...`, {term}`...`), inline code,
# inline math, and the targets of links.
INLINE_SKIPS = [re.compile(p) for p in (r"\{[\w:-]+\}`[^`]*`", r"`[^`]*`", r"\$[^$]+\$",
                                         r"\]\([^)]*\)", r"<!--.*?-->")]


@dataclass(frozen=True)
class Finding:
    file: str   # relative to the repository root
    line: int
    text: str   # the whole source line
    match: str  # the number and its unit


def prose_lines(text: str):
    """(line number, line) for the lines of a MyST page that are prose, with the
    inline constructs that are not prose blanked out."""
    stack: list[tuple[str, bool]] = []  # open fences: (marker, body is prose)
    in_math = False
    in_comment = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if in_comment:
            in_comment = "-->" not in line
            continue
        if stripped.startswith("<!--") and "-->" not in stripped:
            in_comment = True
            continue
        if stripped.startswith("$$"):
            # $$ ... $$ on one line, or the start or the end of a block.
            if not (len(stripped) > 2 and stripped.endswith("$$") and stripped != "$$"):
                in_math = not in_math
            continue
        if in_math:
            continue
        fence = FENCE.match(line)
        if fence:
            marker = fence.group(2)
            if stack and marker[0] == stack[-1][0][0] and len(marker) >= len(stack[-1][0]) \
                    and not fence.group(3) and stripped == marker:
                stack.pop()
                continue
            if not stack or stack[-1][1]:
                name = fence.group(4)
                prose = marker[0] == ":" or (name in PROSE_DIRECTIVES)
                stack.append((marker, prose))
                continue
        if stack and not stack[-1][1]:
            continue
        if stack and re.match(r"^\s*:[\w-]+:", line):
            continue  # a directive's option
        for skip in INLINE_SKIPS:
            line = skip.sub(lambda m: " " * len(m.group(0)), line)
        yield number, line


def scan(path: Path, text: str | None = None) -> list[Finding]:
    text = path.read_text() if text is None else text
    original = text.splitlines()
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    found = []
    for number, line in prose_lines(text):
        for m in MEASURED.finditer(line):
            found.append(Finding(rel, number, original[number - 1], m.group(0).strip()))
    return found


def pages() -> list[Path]:
    return sorted((ROOT / "chapters").rglob("*.md")) + sorted((ROOT / "docs").glob("*.md"))


def allow_list(path: Path = ALLOW) -> list[tuple[str, str, str]]:
    """(file, phrase, reason) entries: `file | exact phrase | reason`."""
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        assert len(parts) == 3 and all(parts), \
            f"{path.name}:{number}: want `file | phrase | reason`"
        entries.append(tuple(parts))
    return entries


def allowed_by(finding: Finding, entries) -> tuple[str, str, str] | None:
    """The entry that allows `finding`: same file, its phrase is in the line and
    holds the finding's number (so one entry allows one phrase, not a page)."""
    for entry in entries:
        file, phrase, _ = entry
        if file == finding.file and phrase in finding.text and finding.match in phrase:
            return entry
    return None


def unexplained(entries) -> tuple[list[Finding], set]:
    used, bad = set(), []
    for page in pages():
        for finding in scan(page):
            entry = allowed_by(finding, entries)
            if entry is None:
                bad.append(finding)
            else:
                used.add(entry)
    return bad, used


# ------------------------------------------------------------------ the tests

def test_no_hand_typed_measured_number_in_the_prose():
    bad, _ = unexplained(allow_list())
    assert not bad, ("numbers that look measured, typed into the prose (insert them with "
                     "{ladder}`...` from results/, or allow-list a derivation or prediction "
                     "in tests/prose_numbers_allow.txt):\n"
                     + "\n".join(f"  {f.file}:{f.line}: {f.match!r} in {f.text.strip()!r}"
                                 for f in bad))


def test_every_allow_list_entry_is_still_needed():
    entries = allow_list()
    _, used = unexplained(entries)
    stale = [e for e in entries if e not in used]
    assert not stale, f"allow-list entries that match nothing: {stale}"
    assert len(entries) == len(set(entries)), "an allow-list entry is listed twice"


AUDIT_SENTENCE = "The winner runs at 52,000 GFLOP/s, 97.3% of cuBLAS at 4096."


def test_the_audits_hand_typed_sentence_is_found(tmp_path):
    page = ROOT / "chapters" / "09-autotuning" / "chapter.md"
    text = page.read_text()
    # Into a copy, after the first paragraph of prose.
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line and line[0].isalpha()) + 1
    copy = "\n".join(lines[:at] + ["", AUDIT_SENTENCE, ""] + lines[at:]) + "\n"
    before = {f.match for f in scan(page)}
    after = scan(page, copy)
    injected = [f for f in after if f.text == AUDIT_SENTENCE]
    assert {f.match for f in injected} == {"52,000 GFLOP/s", "97.3%"}
    assert all(allowed_by(f, allow_list()) is None for f in injected)
    assert len(after) == len(scan(page)) + 2 and before <= {f.match for f in after}


def test_what_the_lint_skips_and_what_it_does_not(tmp_path):
    page = tmp_path / "page.md"
    text = "\n".join([
        "Prose at 12.5 TFLOP/s and 3.2 ms.",                       # 2 findings
        "Inserted: {ladder}`09-autotuning:4096:gflops` GFLOP/s.",   # a role: none
        "Code: `--reps 10 ms` inline.",                             # inline code: none
        "```text",
        "50000 GFLOP/s in a code block",                            # fenced: none
        "```",
        "```{ladder-results} 09-autotuning",
        ":sizes: 4096 %",
        "```",
        ":::{dropdown} Answer guide",
        "A guide that says 107 registers.",                         # prose directive: 1
        ":::",
        "$$\\frac{1}{8} = 12.5\\%$$",                               # math: none
        "About 4.8 TB/s of bandwidth and 1,254 instructions.",      # 2 findings
        "The modulo 5 % 8 = 5 is no unit; 65 536 registers are.",   # 1 finding
    ]) + "\n"
    found = [(f.line, f.match) for f in scan(page, text)]
    assert found == [(1, "12.5 TFLOP/s"), (1, "3.2 ms"), (11, "107 registers"),
                     (14, "4.8 TB/s"), (14, "1,254 instructions"),
                     (15, "65 536 registers")]


def test_an_entry_allows_its_phrase_only():
    finding = Finding("chapters/x/chapter.md", 3, "it reached 86.3% of cuBLAS, then 90%", "90%")
    assert allowed_by(finding, [("chapters/x/chapter.md", "86.3% of cuBLAS", "r")]) is None
    assert allowed_by(finding, [("chapters/y/chapter.md", "then 90%", "r")]) is None
    assert allowed_by(finding, [("chapters/x/chapter.md", "then 90%", "r")])


if __name__ == "__main__":
    entries = allow_list() if ALLOW.exists() else []
    for page in pages():
        for f in scan(page):
            mark = "allowed" if allowed_by(f, entries) else "FOUND"
            print(f"{mark:8} {f.file}:{f.line}: {f.match!r}: {f.text.strip()}")
    sys.exit(0)
