"""Rewrites CUDA's kernel-launch syntax into a call that a host compiler can
parse, for the CPU emulation test (tests/emulation/README.md).

    kernel<<<grid, block, smem, stream>>>(args...)
becomes
    ::ladder_emulation::launch(kernel, grid, block, smem, stream)(args...)

with two, three or four launch-configuration arguments kept as written. That
is the whole rewrite: everything else in the file is copied unchanged, line
breaks included, and a #line directive at the top makes the compiler's
messages and __FILE__ name the original file, so a chapter compiled from the
rewritten copy reports its own path and line numbers.

    python3 launch_rewrite.py IN OUT
"""
from __future__ import annotations

import sys
from pathlib import Path

OPEN = "<<<"
CLOSE = ">>>"
TARGET = "::ladder_emulation::launch"


class RewriteError(ValueError):
    """A launch the rewrite cannot take apart; the message says where."""


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _kernel_start(text: str, end: int) -> int:
    """Start of the kernel expression that ends just before `end`: a name,
    possibly qualified (a::b) and with template arguments (f<T, 1>), as
    launches are written. Scans backwards; `end` is past its last character."""
    pos = end
    while True:
        # Template arguments: a balanced <...> group. It may hold ::, commas and
        # parentheses; a < or > inside parentheses, as in (N > 2), is not one.
        if pos > 0 and text[pos - 1] == ">":
            depth = parens = 0
            while pos > 0:
                pos -= 1
                c = text[pos]
                if c == ")":
                    parens += 1
                elif c == "(":
                    parens -= 1
                elif parens == 0 and c == ">":
                    depth += 1
                elif parens == 0 and c == "<":
                    depth -= 1
                    if depth == 0:
                        break
            if depth != 0 or parens != 0:
                raise RewriteError("unbalanced template arguments before <<<")
        start = pos
        while pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
            pos -= 1
        if pos == start:
            raise RewriteError("no kernel name before <<<")
        if text[max(0, pos - 2):pos] == "::":
            pos -= 2
            continue
        return pos


def _matching(text: str, pos: int, opening: str, closing: str) -> int:
    """Index of the `closing` that matches the `opening` at `pos`, counting
    (), [] and {} so that commas and brackets inside them are skipped."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [closing]
    i = pos + len(opening)
    while i < len(text):
        if text.startswith(closing, i) and len(stack) == 1:
            return i
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if len(stack) == 1 or stack[-1] != c:
                raise RewriteError(f"unbalanced {c!r}")
            stack.pop()
        i += 1
    raise RewriteError(f"no {closing!r} after {opening!r}")


def _split_top_level(text: str) -> list[str]:
    """`text` split at the commas that are outside (), [] and {}."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _code_mask(text: str) -> list[bool]:
    """For each character of `text`, whether it is code: not inside a comment,
    a string literal or a character literal. A <<< in a comment stays as it is."""
    mask = [True] * len(text)
    i = 0
    while i < len(text):
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = len(text) if end < 0 else end + 2
        elif text[i] == "'" and 0 < i and text[i - 1].isdigit():
            i += 1  # a digit separator (1'000), not a character literal
            continue
        elif text[i] in "\"'":
            end = i + 1
            while end < len(text) and text[end] != text[i]:
                end += 2 if text[end] == "\\" else 1
            end += 1
        else:
            i += 1
            continue
        for j in range(i, min(end, len(text))):
            mask[j] = False
        i = end
    return mask


def rewrite(text: str) -> str:
    """`text` with every kernel launch rewritten (see the module's docstring)."""
    is_code = _code_mask(text)
    out = []
    done = 0  # text[:done] is already in `out`
    search = 0
    while True:
        open_at = text.find(OPEN, search)
        if open_at < 0:
            break
        if not is_code[open_at]:
            search = open_at + len(OPEN)
            continue
        try:
            # The kernel expression, then any blanks (a launch may break the line before <<<).
            expr_end = open_at
            while expr_end > done and text[expr_end - 1] in " \t\r\n":
                expr_end -= 1
            expr_start = _kernel_start(text, expr_end)
            if expr_start < done:
                raise RewriteError("a launch inside another launch")
            close_at = _matching(text, open_at, OPEN, CLOSE)
            config = text[open_at + len(OPEN):close_at]
            count = len(_split_top_level(config))
            if not 2 <= count <= 4:
                raise RewriteError(f"{count} launch-configuration arguments (2 to 4 expected)")
            args_open = close_at + len(CLOSE)
            while args_open < len(text) and text[args_open] in " \t\r\n":
                args_open += 1
            if args_open >= len(text) or text[args_open] != "(":
                raise RewriteError("no argument list after >>>")
        except RewriteError as e:
            raise RewriteError(f"line {_line_of(text, open_at)}: {e}") from None
        out.append(text[done:expr_start])
        out.append(f"{TARGET}({text[expr_start:expr_end]}{text[expr_end:open_at]}, {config})")
        out.append(text[close_at + len(CLOSE):args_open])  # blanks between >>> and (
        done = args_open  # the argument list itself is copied as written
        search = args_open
    out.append(text[done:])
    return "".join(out)


def rewrite_file(source: Path, destination: Path) -> None:
    """Writes the rewritten `source` to `destination`, with a #line directive
    naming `source`."""
    text = source.read_text()
    try:
        body = rewrite(text)
    except RewriteError as e:
        raise SystemExit(f"{source}: {e}") from e
    destination.parent.mkdir(parents=True, exist_ok=True)
    result = f'#line 1 "{source.resolve().as_posix()}"\n{body}'
    # Leave an unchanged file alone, so that the build does not recompile for nothing.
    if not destination.exists() or destination.read_text() != result:
        destination.write_text(result)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: launch_rewrite.py IN OUT", file=sys.stderr)
        return 2
    rewrite_file(Path(argv[1]), Path(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
