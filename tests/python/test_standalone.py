"""Every chapter builds alone with the one nvcc line its kernel file gives
(and its page shows): the harness really is header-only, and the include
path and libraries in that line are right. `-arch=native` needs a GPU, so
the test builds for the H200's architecture instead. A chapter that runs on
one architecture alone names it (chapter 16: sm_90a, which only the -gencode
form builds without a plain sm_90 pass), and is built for it.

What the line decides is checked whole: the preprocessor, the front end on
the host and device code, the device code generated for the line's
architecture, the host compiler, the link with its libraries, and the
binary that comes out runs. Two optimizers are left out, as each is the
CMake build's work from the same code with the same flags, and here they
took most of the test's time:

- the device code stops at PTX for that architecture (compute_90;
  compute_90a for sm_90a) and is not optimized (-Xcicc -O0): the optimizer
  and ptxas, which make the GPU's instructions of it, run in the CMake build
  for sm_90 and sm_90a (and ptxas, on unoptimized code, in arch_compile.py's
  compiles for sm_75 and sm_120). (ptxas is not run on the unoptimized PTX: it crashes on
  chapter 16's wgmma code.)
- the host code is compiled at -O0 in place of the line's -O3 (the test
  checks that the line says -O3): the CMake build (Release) compiles the
  same host code at -O3, so running the host optimizer here would repeat it.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess

import pytest

from common import ROOT

BUILD_LINE = re.compile(r"^//\s+(nvcc .*)$", re.MULTILINE)
SM90A = "-gencode=arch=compute_90a,code=sm_90a"
#: What the test puts in place of the line's architecture: the same
#: architecture's PTX alone, not optimized (see the module's docstring).
ARCH_HERE = {"-arch=native": ["-arch=compute_90"],
             SM90A: ["-gencode=arch=compute_90a,code=compute_90a"]}
DEVICE_UNOPTIMIZED = ["-Xcicc", "-O0"]
#: The line's host optimization, and what the test compiles with instead
#: (see the module's docstring).
HOST_OPTIMIZED, HOST_UNOPTIMIZED = "-O3", "-O0"


def standalone_command(line: str, binary) -> list[str]:
    """The chapter's build line as the test runs it: its architecture as
    ARCH_HERE says, neither the host nor the device code optimized, its
    output `binary`."""
    words = []
    for word in line.split():
        if word == HOST_OPTIMIZED:
            word = HOST_UNOPTIMIZED
        words += ARCH_HERE.get(word, [word])
    out = words.index("-o")
    words[out + 1] = str(binary)
    return [*words, *DEVICE_UNOPTIMIZED]


def build_lines():
    lines = []
    for kernel in sorted(ROOT.glob("chapters/*/kernel.cu")):
        text = kernel.read_text()
        start = text.find("Build this chapter alone, from its folder:")
        assert start >= 0, f"{kernel}: no build line in the opening comment"
        match = BUILD_LINE.search(text, start)
        assert match, f"{kernel}: no nvcc line after 'Build this chapter alone'"
        lines.append((kernel.parent, match.group(1)))
    return lines


def test_every_chapter_states_its_build_line():
    lines = build_lines()
    assert len(lines) == len(list(ROOT.glob("chapters/*/kernel.cu")))
    for folder, line in lines:
        assert "-I../../code/include" in line and "-lcublas" in line, (folder.name, line)
        assert "-arch=native" in line or SM90A in line, (folder.name, line)
        assert line.split()[1] == HOST_OPTIMIZED, (folder.name, line)
        # Only the architecture and the optimization change when the test
        # builds it.
        command = standalone_command(line, "out")
        assert [w for w in command if w not in line.split()] == [
            HOST_UNOPTIMIZED, *ARCH_HERE["-arch=native" if "-arch=native" in line else SM90A],
            "out", *DEVICE_UNOPTIMIZED], (folder.name, command)
        assert HOST_OPTIMIZED not in command, (folder.name, command)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_every_chapter_builds_alone_with_its_line(tmp_path):
    def build(folder_line):
        folder, line = folder_line
        words = standalone_command(line, tmp_path / folder.name)
        done = subprocess.run(words, cwd=folder, capture_output=True, text=True, timeout=600)
        return folder.name, done

    workers = max(1, min(2, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for name, done in pool.map(build, build_lines()):
            assert done.returncode == 0, f"{name}:\n{done.stderr[-2000:]}"
            assert (tmp_path / name).is_file()
            # Built without CMake, the binary still names every variant's
            # kernel for --describe (from its own symbol table).
            described = subprocess.run([str(tmp_path / name), "--describe"], capture_output=True,
                                       text=True, timeout=120)
            assert described.returncode == 0, f"{name} --describe: {described.stderr}"
            for variant in json.loads(described.stdout)["variants"]:
                assert variant["kernel"]["name"].startswith("_Z"), (name, variant["kernel"])


def test_what_the_build_line_leaves_behind_is_ignored_by_git():
    """The README's one-line build writes its binary into the chapter's
    folder; git must not offer it for commit."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for folder, line in build_lines():
        words = line.split()
        binary = folder / words[words.index("-o") + 1]
        done = subprocess.run(["git", "check-ignore", "-q", str(binary)], cwd=ROOT)
        assert done.returncode == 0, f"{binary.relative_to(ROOT)} is not ignored by .gitignore"
