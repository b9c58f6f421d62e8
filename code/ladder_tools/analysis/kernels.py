"""Kernel names: which functions of a binary are the chapters' kernels.

Every chapter kernel's name starts with ``sgemm_`` (the measure command's
ncu filter says the same); cuBLAS's kernels and the harness's own (the input
fill) do not. Names come demangled, with namespaces, template arguments and
parameters, and the book shows them shorter. One binary holds the kernels of
all its chapter's variants; variant_kernels picks one variant's.
"""

from __future__ import annotations

import re
from pathlib import Path

from ladder_tools.analysis.binaries import AnalysisError

#: Every chapter kernel's name starts with this.
KERNEL_PREFIX = "sgemm_"


def _cut_balanced(text: str, opening: str, closing: str) -> str:
    """``text`` up to its first ``opening`` that is outside any <...>."""
    depth = 0
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == opening and depth == 0:
            return text[:index]
    return text


def _strip_template_arguments(text: str) -> str:
    """'ns::f<A<1>, 2> ' -> 'ns::f'."""
    text = text.rstrip()
    if not text.endswith(">"):
        return text
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += {">": 1, "<": -1}.get(text[index], 0)
        if depth == 0:
            return text[:index].rstrip()
    return text


def base_name(name: str) -> str:
    """The bare function name of a demangled signature:
    'void ch08::sgemm_warptiled<ch08::Tiling<64> >(int, float*)' -> 'sgemm_warptiled'."""
    head = _strip_template_arguments(_cut_balanced(name, "(", ")"))
    head = head.rsplit("::", 1)[-1]
    return head.rsplit(" ", 1)[-1]


def short_name(name: str) -> str:
    """The name without return type, namespaces and parameters, but with its
    template arguments: 'sgemm_warptiled<Tiling<64, 128> >'."""
    head = _cut_balanced(name, "(", ")").strip()
    bare = base_name(name)
    start = head.find(bare)
    shown = head[start:] if start >= 0 else bare
    # An enumerator as a value, '(ch14::Path)0', reads as 'Path 0'.
    shown = re.sub(r"\b[A-Za-z_]\w*::", "", shown)
    return re.sub(r"\((\w+)\)(-?\d+)", r"\1 \2", shown)


def is_chapter_kernel(name: str) -> bool:
    return base_name(name).startswith(KERNEL_PREFIX)


def select_kernels(entries: list[dict], part: str | None) -> list[dict]:
    """The chapter kernels among ``entries`` (dicts with "name"), those whose
    name contains ``part`` when given."""
    return [e for e in entries if is_chapter_kernel(e["name"]) and (not part or part in e["name"])]


def first_template_argument(name: str) -> str | None:
    """The first template argument of a demangled kernel name, which names
    its tiling ('void ch12::sgemm_warptiled<ch12::Tiling<128, 256>, true,
    false>(int)' -> 'ch12::Tiling<128, 256>'); None for a kernel that is no
    template."""
    head = _cut_balanced(name, "(", ")")
    bare = base_name(name) + "<"
    start = head.find(bare)
    if start < 0:
        return None
    first = start + len(bare)
    depth = 0
    for end in range(first, len(head)):
        if depth == 0 and head[end] in ",>":
            return head[first:end].strip()
        depth += {"<": 1, ">": -1}.get(head[end], 0)
    return None


def variant_main_kernel(entries: list[dict], variant: dict) -> list[dict]:
    """The entries (dicts with "name" and "mangled", one per architecture)
    of a variant's own kernel: the one --describe names (its kernel.name)."""
    wanted = variant["kernel"]["name"]
    found = [e for e in entries if e["mangled"] == wanted]
    if not found:
        raise AnalysisError(f"variant {variant.get('slug')!r}: the binary holds no kernel "
                            f"{wanted} (its --describe kernel)")
    return found


def variant_kernels(entries: list[dict], variant: dict) -> list[dict]:
    """The chapter kernels of one variant among a binary's entries: its own
    kernel and the other paths of the same tiling (the same first template
    argument): chapter 12's three paths of Chosen, and not those of another
    tiling in the same binary (chapter 13's Small)."""
    main = variant_main_kernel(entries, variant)
    tiling = first_template_argument(main[0]["name"])
    if tiling is None:
        return main
    return [e for e in entries
            if is_chapter_kernel(e["name"]) and first_template_argument(e["name"]) == tiling]


def pick_kernel(results: list[dict], part: str | None, binary: Path) -> dict:
    """The one chapter kernel of a binary (matching ``part``), or an error."""
    kernels = select_kernels(results, part)
    if not kernels:
        wanted = f" whose name contains {part!r}" if part else ""
        raise AnalysisError(f"{binary} has no {KERNEL_PREFIX}* kernel{wanted}")
    if len(kernels) > 1:
        names = "; ".join(short_name(k["name"]) for k in kernels)
        raise AnalysisError(f"{binary} has {len(kernels)} {KERNEL_PREFIX}* kernels ({names}): "
                            "choose one with :kernel:")
    return kernels[0]


def folded_name(name: str) -> str:
    """A short_name with the arguments of a template argument folded away,
    as the resources table shows it, so that the numbers beside it fit
    ('sgemm_warptiled<Tiling<128, 256, ..., (ALayout)0>, true, false>' ->
    'sgemm_warptiled<Tiling<...>, true, false>'); the page names the tiling."""
    shown, depth = [], 0
    for char in name:
        if char == "<":
            depth += 1
            if depth == 2:
                shown.append("<...")
            if depth >= 2:
                continue
        elif char == ">":
            depth -= 1
            if depth >= 1:
                if depth == 1:
                    shown.append(">")
                continue
        elif depth >= 2:
            continue
        shown.append(char)
    text = "".join(shown).replace("> >", ">>")
    # An enumerator as a value, '(ALayout)0', reads as 'ALayout 0'.
    return re.sub(r"\((\w+)\)(-?\d+)", r"\1 \2", text)
