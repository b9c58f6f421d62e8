"""Each chapter's prose stays within a word budget.

One idea per chapter, in plain, short sentences: a chapter page may hold at
most BUDGET words of prose. The count follows one rule, so that anyone can
reproduce it by hand:

- remove fenced blocks (``` or ~~~ fences, the directives included);
- drop the lines that start with "|" (tables);
- count as words the matches of [A-Za-z][A-Za-z'\\-]* in what is left.

The chapters still over the budget are listed in OVER_BUDGET, each with its
current count as a ceiling: a listed chapter may not grow, and it leaves the
list (the test says so) once it is within the budget.

Run `build/venv/bin/python tests/python/test_word_budget.py` to print every chapter's count.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
BUDGET = 2500

# Chapters still over the budget, each with its count as a ceiling. This
# list only shrinks: lower a ceiling when a chapter is cut, remove the entry
# once the chapter is within BUDGET.
OVER_BUDGET = {
}

FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


def prose_lines(text: str) -> list[str]:
    """The lines of a page outside fenced blocks and tables."""
    lines: list[str] = []
    opened: str | None = None  # the marker of the open fence
    for line in text.splitlines():
        fence = FENCE.match(line)
        if opened is None:
            if fence:
                opened = fence.group(1)
            elif not line.startswith("|"):
                lines.append(line)
        elif (fence and fence.group(1)[0] == opened[0]
              and len(fence.group(1)) >= len(opened) and not fence.group(2).strip()):
            opened = None  # a closing fence: same character, at least as long, bare
    return lines


def count_words(text: str) -> int:
    return sum(len(WORD.findall(line)) for line in prose_lines(text))


def chapter_pages() -> dict[str, Path]:
    return {page.parent.name: page for page in sorted(CHAPTERS.glob("*/chapter.md"))}


def chapter_counts() -> dict[str, int]:
    return {name: count_words(page.read_text(encoding="utf-8"))
            for name, page in chapter_pages().items()}


SAMPLE = """\
# A title

The kernel's time, measured twice.

```{ladder-results} 01-naive
:sizes: 1024
```

| size | time |
| --- | --- |

~~~text
a fenced block
```
still inside: a ``` line does not close a ~~~ fence
~~~

Well-known words: x2 and 4096 don't count twice.
"""


def test_the_counter_on_a_sample():
    # By hand: "A title" (2); "The kernel's time measured twice" (5); the
    # fenced blocks (a ``` line inside a ~~~ fence does not close it) and the
    # table lines count nothing; "Well-known words x and don't count twice"
    # (7: "x2" is the word "x", "4096" is no word).
    assert prose_lines(SAMPLE) == [
        "# A title", "", "The kernel's time, measured twice.", "", "", "", "",
        "Well-known words: x2 and 4096 don't count twice."]
    assert count_words(SAMPLE) == 2 + 5 + 7


def test_the_over_budget_list_names_chapters():
    assert set(OVER_BUDGET) <= set(chapter_pages()), set(OVER_BUDGET) - set(chapter_pages())


@pytest.mark.parametrize("chapter", sorted(chapter_pages()))
def test_a_chapter_stays_within_its_budget(chapter):
    count = chapter_counts()[chapter]
    if chapter in OVER_BUDGET:
        ceiling = OVER_BUDGET[chapter]
        assert count <= ceiling, (
            f"{chapter} has {count} words, over its ceiling of {ceiling} in OVER_BUDGET: "
            f"cut it back (the budget is {BUDGET})")
        assert count > BUDGET, (
            f"{chapter} has {count} words, within the budget of {BUDGET}: "
            f"remove it from OVER_BUDGET in {Path(__file__).name}")
    else:
        assert count <= BUDGET, (
            f"{chapter} has {count} words, over the budget of {BUDGET}: cut it "
            "(repetition, tool mechanics that belong in docs/appendix.md, long sentences)")


if __name__ == "__main__":
    for name, count in chapter_counts().items():
        ceiling = OVER_BUDGET.get(name, BUDGET)
        print(f"{count:6d} / {ceiling:<6d} {name}{'  OVER' if count > ceiling else ''}")
    sys.exit(0)
