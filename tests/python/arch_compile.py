"""Compiles every chapter for one GPU architecture the book names, with the
nvcc line its kernel.cu prints for a reader, and checks the outcome against
ladder/arch.hpp (read through the `archs` tool): a chapter whose needs the
architecture has compiles; any other stops with #error lines alone, each naming
the architecture it needs. Device code only (-cubin): nothing is linked or run.
With --ptx it stops at PTX for the virtual architecture compute_<cc>: the
front end's checks (#error, static_assert, templates) run, ptxas does not. The
test uses that for the architectures between sm_75 and sm_120, whose ptxas
the two ends cover for every instruction the chapters use.

The device code is compiled without optimizing (-Xcicc -O0, and -Xptxas -O0
for a cubin): what the table says is whether an architecture has what a
chapter needs, and every check that decides it still runs (the #error
lines, static_asserts and templates of the front end, the code generation
for the architecture and, for a cubin, ptxas on every instruction and the
shared memory the kernels declare), with no dead code dropped before ptxas
sees it, at an eighth of the optimizer's time. The optimized code of the
GPU the build targets is the CMake build's.

One compile stands for the architectures the code does not tell apart.
The device code the chapters compile asks of the architecture only whether
__CUDA_ARCH__ is at least 800 (mma.sync on TF32, cp.async) and whether it is
sm_90a (__CUDA_ARCH_FEAT_SM90_ALL). So sm_86 and sm_89, between sm_80 and
sm_90, take every branch sm_80 takes, and the compile for sm_80 stands for
them: their PTX for compute_86 and compute_89 came out the same as
compute_80's, line for line but the .target line, for every chapter with
CUDA 13.0. Two checks keep that true, run with the compile for sm_80: every
mention of __CUDA_ARCH__ in the chapters' device code must be one of the
forms ARCH_ALLOWED lists (defined, >= 800, < 800), and no other macro that
names an architecture may appear (ARCH_MACRO: __CUDA_ARCH_SPECIFIC__,
NV_IF_TARGET, NV_PROVIDES_SM_86, ...); and the script refuses to stand for
an architecture to which ladder/arch.hpp gives other instructions than
sm_80's. CUDA's own headers are not scanned: the PTX comparison above is
what covers them, for the CUDA it was made with.

Usage: arch_compile.py <archs binary> <cc> [--ptx]    e.g. ... build/bin/archs 75
Exit 0 when every chapter behaves as the table says; 1 with one line per
chapter that does not, or per check above that fails; 77 (skipped) without
nvcc.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_LINE_MARK = "// Build this chapter alone, from its folder:"
#: Where the device code the chapters compile lives.
DEVICE_SOURCES = ("chapters", "code/include", "tests/gpu")
#: What the device code may ask of the architecture (see the docstring):
#: each mention of __CUDA_ARCH__ must be one of these forms, and no other
#: macro that names an architecture may appear.
ARCH_ALLOWED = re.compile(r"defined\s*\(\s*__CUDA_ARCH__\s*\)|defined\s+__CUDA_ARCH__\b"
                          r"|__CUDA_ARCH__\s*(?:>=|<)\s*800\b(?!\s*(?:[-+*%.]|/(?![/*])))")
ARCH_FEATURES = {"__CUDA_ARCH_FEAT_SM90_ALL"}
ARCH_MACRO = re.compile(r"\b(__CUDA_ARCH\w*|NV_\w*(?:SM|TARGET)\w*)")
#: The file that names the architectures themselves, not device code.
ARCH_TABLE = Path("code/include/ladder/arch.hpp")
#: The compile that stands for the architectures from it up to sm_90.
STANDS_FOR_FROM, STANDS_FOR_BELOW = 80, 90


def logical_lines(text: str) -> list[tuple[int, str]]:
    """The text's lines with backslash continuations joined, each with the
    number of its first line."""
    joined: list[tuple[int, str]] = []
    start, pending = 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append((start, pending + line))
        pending = ""
    if pending:
        joined.append((start, pending))
    return joined


def arch_tests_beyond(root: Path) -> list[str]:
    """Each place where the chapters' device code asks of the architecture
    something besides the forms ARCH_ALLOWED and the macros ARCH_FEATURES,
    as 'file:line: text'."""
    found = []
    for folder in DEVICE_SOURCES:
        for path in sorted((root / folder).rglob("*")):
            if (path.suffix not in (".cu", ".cuh", ".hpp", ".h")
                    or path.relative_to(root) == ARCH_TABLE):
                continue
            for number, line in logical_lines(path.read_text()):
                rest = ARCH_ALLOWED.sub(" ", line)
                if any(m.group(1) not in ARCH_FEATURES for m in ARCH_MACRO.finditer(rest)):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def stood_for(table: dict, cc: int) -> tuple[list[int], list[str]]:
    """The architectures the compile for sm_<cc> stands for (sm_80: those
    above it and below sm_90), and why it cannot, one line per architecture
    whose instructions ladder/arch.hpp gives apart from sm_<cc>'s."""
    if cc != STANDS_FOR_FROM:
        return [], []
    own = next(a for a in table["archs"] if a["cc"] == cc)["has"]
    others = [a for a in table["archs"] if STANDS_FOR_FROM < a["cc"] < STANDS_FOR_BELOW]
    return ([a["cc"] for a in others],
            [f"sm_{a['cc']}: ladder/arch.hpp gives it other instructions than sm_{cc}, so "
             f"the compile for sm_{cc} cannot stand for it; compile it too" for a in others
             if a["has"] != own])


def build_line(kernel: Path) -> list[str]:
    """The nvcc command the chapter's kernel.cu prints for a reader, split
    into words."""
    lines = kernel.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == BUILD_LINE_MARK:
            return lines[i + 1].lstrip("/ ").split()
    raise ValueError(f"{kernel}: no line '{BUILD_LINE_MARK}'")


def for_arch(words: list[str], cc: int, out: Path, ptx: bool = False) -> list[str]:
    """The reader's nvcc line made to compile the device code alone for sm_<cc>:
    its architecture replaced, its linking and output replaced by -cubin (or,
    with `ptx`, by -ptx for compute_<cc>), the device code not optimized."""
    command = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word == "-o":
            skip = True
            continue
        if word.startswith(("-arch=", "-gencode=")) or word.startswith("-l"):
            continue
        command.append(word)
    if ptx:
        return [*command, f"-arch=compute_{cc}", "-Xcicc", "-O0", "-ptx", "-o", str(out)]
    return [*command, f"-arch=sm_{cc}", "-Xcicc", "-O0", "-Xptxas", "-O0", "-cubin", "-o",
            str(out)]


def check(chapter: Path, cc: int, compiles: bool, scratch: Path, ptx: bool) -> str | None:
    """Why `chapter` does not behave as the table says on sm_<cc>, or None."""
    command = for_arch(build_line(chapter / "kernel.cu"), cc,
                       scratch / f"{chapter.name}.{'ptx' if ptx else 'cubin'}", ptx)
    done = subprocess.run(command, cwd=chapter, capture_output=True, text=True)
    said = (done.stdout + done.stderr).strip()
    if compiles:
        if done.returncode != 0:
            first = said.splitlines()[0] if said else f"exit code {done.returncode}"
            return f"{chapter.name}: does not compile for sm_{cc}: {first}"
        return None
    if done.returncode == 0:
        return f"{chapter.name}: compiles for sm_{cc}, which lacks what the chapter needs"
    errors = [line for line in said.splitlines() if re.search(r"\berror: ", line)]
    directives = [line for line in errors if "error: #error" in line]
    if not directives or directives != errors or not all(re.search(r"sm_\d", line)
                                                          for line in directives):
        return (f"{chapter.name}: on sm_{cc} it must stop with #error lines alone, each "
                f"naming the architecture it needs; it said: {errors[:2]}")
    return None


def main(argv: list[str]) -> int:
    ptx = argv[3:] == ["--ptx"]
    if len(argv) not in (3, 4) or (len(argv) == 4 and not ptx):
        print("usage: arch_compile.py <archs binary> <cc> [--ptx]", file=sys.stderr)
        return 2
    if shutil.which("nvcc") is None:
        print("nvcc is not on PATH: skipped", file=sys.stderr)
        return 77
    table = json.loads(subprocess.run([argv[1]], check=True, capture_output=True,
                                      text=True).stdout)
    cc = int(argv[2])
    arch = next((a for a in table["archs"] if a["cc"] == cc), None)
    if arch is None:
        print(f"sm_{cc} is not in ladder/arch.hpp", file=sys.stderr)
        return 2
    covered, refusals = stood_for(table, cc)
    if covered:
        refusals += [f"{where}: the device code asks the architecture something beyond "
                     f"__CUDA_ARCH__ >= 800 and sm_90a, so sm_{cc}'s compile no longer stands "
                     f"for {' and '.join(f'sm_{c}' for c in covered)} (tests/CMakeLists.txt)"
                     for where in arch_tests_beyond(ROOT)]
    chapters = sorted(p.parent for p in (ROOT / "chapters").glob("*/kernel.cu"))
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(2) as pool:
        jobs = [(chapter, pool.submit(
            check, chapter, cc,
            arch["has"][table["chapter_needs"].get(chapter.name, "nothing")], Path(scratch), ptx))
                for chapter in chapters]
        failures = [why for _, job in jobs if (why := job.result())]
    failures += refusals
    for why in failures:
        print(why)
    if not failures:
        stage = "PTX for compute" if ptx else "sm"
        also = ("; " + " and ".join(f"sm_{c}" for c in covered)
                + " take the same branches") if covered else ""
        print(f"{stage}_{cc}: {len(chapters)} chapters behave as ladder/arch.hpp says{also}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
