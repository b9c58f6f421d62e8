"""What a measurement was built from, and whether the tree still matches it.

A result is only as good as the code it measured. The measure and sweep
commands record, for every result, the SHA-256 of each file of this project
that the measured program was built from: the chapter's source files, every
harness header they include (found by nvcc's own preprocessor, `nvcc -M`),
and the build files that set the compiler's flags. The book re-hashes those
files; if any of them differs, or is gone, the result is *stale*: it was
measured on other code than the page shows.

A sweep times every configuration of a chapter, so the one configuration the
chapter commits to (its `// [chosen]` ... `// [end]` block) changes no number
in the sweep: a sweep's hashes leave that block out (`inputs_exclude:
"chosen"`), and committing a winner does not make its own sweep stale.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The build files that set the flags every program is compiled with (the
#: architecture, the C++ standard, -O3, -lineinfo): a change to one of them
#: can change what any measured program does.
BUILD_FILES = ("CMakeLists.txt", "cmake/Ladder.cmake")

#: The marker lines of the block that a sweep's hashes leave out.
CHOSEN_BEGIN = "// [chosen]"
BLOCK_END = "// [end]"


def nvcc() -> str:
    """The CUDA compiler: on PATH, else under $CUDA_HOME or /usr/local/cuda."""
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    raise FileNotFoundError("nvcc is not on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin")


def parse_make_rule(text: str) -> list[str]:
    """The prerequisites of the one make rule `text` holds ("target: a b \\")."""
    joined = text.replace("\\\n", " ")
    _, _, prerequisites = joined.partition(":")
    return prerequisites.split()


def included_files(source: Path, root: Path = ROOT) -> list[str]:
    """The files of the project that `source` is compiled from: itself and
    every file it includes, directly or not, as repo-relative paths. System
    and CUDA headers are left out: their versions are recorded apart (the
    CUDA and driver versions of the provenance)."""
    # The device pass is read for the newest architecture a chapter needs
    # (sm_90a), so that a header's `#error` for older GPUs stays quiet.
    done = subprocess.run(
        [nvcc(), "-M", "-std=c++17", "-x", "cu", "-arch=sm_90a",
         f"-I{root / 'code' / 'include'}", f"-I{root}", str(source)],
        cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nvcc -M {source} failed:\n{done.stderr}")
    files = set()
    for name in parse_make_rule(done.stdout):
        path = (root / name).resolve()
        if path.is_relative_to(root.resolve()):
            files.add(path.relative_to(root.resolve()).as_posix())
    return sorted(files)


def without_chosen(text: str) -> str:
    """`text` without the lines from the one that starts with ``// [chosen]``
    to the next that starts with ``// [end]``, both included; `text` itself
    when it has no such block. Raises ValueError for a block without its end
    or for two blocks."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.lstrip().startswith(CHOSEN_BEGIN)]
    if not starts:
        return text
    if len(starts) > 1:
        raise ValueError(f"expected at most one '{CHOSEN_BEGIN}' line, found {len(starts)}")
    begin = starts[0]
    for end in range(begin + 1, len(lines)):
        if lines[end].lstrip().startswith(BLOCK_END):
            return "".join(lines[:begin] + lines[end + 1:])
    raise ValueError(f"the '{CHOSEN_BEGIN}' block has no '{BLOCK_END}' line")


def file_sha256(path: Path, exclude: str | None = None) -> str:
    """The SHA-256 of a file as lowercase hex; with exclude="chosen", of the
    file without its [chosen] block."""
    if exclude is None:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if exclude == "chosen":
        return hashlib.sha256(without_chosen(path.read_text()).encode()).hexdigest()
    raise ValueError(f"unknown exclusion {exclude!r}")


def build_files_for(source: Path, root: Path = ROOT) -> list[str]:
    """The build files that set how `source` is compiled: the project's, and
    the CMakeLists.txt of the source's own folder when it has one."""
    files = list(BUILD_FILES)
    own = source.resolve().parent / "CMakeLists.txt"
    if own.is_file():
        files.append(own.relative_to(root.resolve()).as_posix())
    return files


def hash_files(names: Iterable[str | Path], root: Path = ROOT,
               exclude: str | None = None) -> dict[str, str]:
    """{repo-relative path: SHA-256} of the files `names` (paths relative to
    `root`, as text or Path), in order of name."""
    posix = sorted({Path(name).as_posix() for name in names})
    return {name: file_sha256(Path(root) / name, exclude) for name in posix}


def inputs_of(source: Path, root: Path = ROOT, exclude: str | None = None) -> dict[str, str]:
    """{repo-relative path: SHA-256} of every project file the program built
    from `source` depends on: what a result records as its `inputs`."""
    return hash_files([*included_files(source, root), *build_files_for(source, root)], root,
                      exclude)


def changed_paths(inputs: dict[str, str], root: Path,
                  exclude: str | None = None) -> list[tuple[str, str]]:
    """The recorded inputs that are gone from the tree or differ from it now,
    as (path, why) pairs in order of path: why is "is gone", "has changed" or
    "cannot be hashed as recorded (...)"."""
    changed = []
    for name, recorded in sorted(inputs.items()):
        path = Path(root) / name
        if not path.is_file():
            changed.append((name, "is gone"))
            continue
        try:
            now = file_sha256(path, exclude)
        except ValueError as error:
            changed.append((name, f"cannot be hashed as recorded ({error})"))
            continue
        if now != recorded.lower():
            changed.append((name, "has changed"))
    return changed


def changed_inputs(inputs: dict[str, str], root: Path, exclude: str | None = None) -> list[str]:
    """changed_paths, each as "<path> is gone" or "<path> has changed"."""
    return [f"{name} {why}" for name, why in changed_paths(inputs, root, exclude)]


def staleness(provenance: dict, root: Path) -> str | None:
    """Why a result no longer matches the tree, or None when it still does."""
    inputs = provenance.get("inputs")
    if not inputs:
        return "it records no inputs (measured before results recorded what they were built from)"
    try:
        changed = changed_inputs(inputs, root, provenance.get("inputs_exclude"))
    except ValueError as error:
        return str(error)
    if not changed:
        return None
    shown = "; ".join(changed[:3]) + (f"; and {len(changed) - 3} more" if len(changed) > 3 else "")
    return f"{shown} since it was measured"
