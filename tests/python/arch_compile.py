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

Usage: arch_compile.py <archs binary> <cc> [--ptx]    e.g. ... build/bin/archs 75
Exit 0 when every chapter behaves as the table says; 1 with one line per
chapter that does not; 77 (skipped) without nvcc.
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
    chapters = sorted(p.parent for p in (ROOT / "chapters").glob("*/kernel.cu"))
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(2) as pool:
        jobs = [(chapter, pool.submit(
            check, chapter, cc,
            arch["has"][table["chapter_needs"].get(chapter.name, "nothing")], Path(scratch), ptx))
                for chapter in chapters]
        failures = [why for _, job in jobs if (why := job.result())]
    for why in failures:
        print(why)
    if not failures:
        stage = "PTX for compute" if ptx else "sm"
        print(f"{stage}_{cc}: {len(chapters)} chapters behave as ladder/arch.hpp says")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
