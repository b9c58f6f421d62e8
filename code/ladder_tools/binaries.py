"""The chapters' binaries in the build folder, and what cuobjdump says of them.

The analysis reads the chapters as they were compiled: the build folder is
$LADDER_BUILD_DIR when set, else <repo>/build, and a chapter's program is
bin/<slug> there. Reading a binary (cuobjdump, bankmap) takes a moment, so
each answer is computed once per process and file version (cached).
"""

from __future__ import annotations

import os
from pathlib import Path

from ladder_tools import sass_mix

#: Environment variable naming the CMake build folder that holds bin/.
BUILD_DIR_VARIABLE = "LADDER_BUILD_DIR"


class AnalysisError(ValueError):
    """An input the analysis cannot use: a missing binary, a bad option."""


def build_dir(repo_root: str | os.PathLike) -> Path:
    """The CMake build folder: $LADDER_BUILD_DIR when set, else <repo>/build."""
    override = os.environ.get(BUILD_DIR_VARIABLE)
    return Path(override) if override else Path(repo_root) / "build"


def binary_path(build: str | os.PathLike, name: str) -> Path:
    return Path(build) / "bin" / name


def require_binary(build: str | os.PathLike, name: str) -> Path:
    """build/bin/<name>, or an error that says how to make it."""
    path = binary_path(build, name)
    if not path.is_file():
        raise AnalysisError(
            f"{path} does not exist: build the chapters first (cmake --build {build}), "
            f"or point ${BUILD_DIR_VARIABLE} at the build folder that has bin/{name}"
        )
    return path


_CACHE: dict[tuple, object] = {}


def cached(key: tuple, compute):
    """compute() once per key; a key about a file holds stamp(file), so that
    a rebuilt binary is read again."""
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]


def stamp(path: Path) -> tuple[str, int]:
    """A file's identity for cached(): its resolved path and modification time."""
    return (str(path.resolve()), path.stat().st_mtime_ns)


def cuobjdump(path: Path, option: str) -> str:
    """The text of ``cuobjdump <option>`` of a binary, cached."""
    def compute():
        try:
            return sass_mix.run_cuobjdump(path, option)
        except (OSError, RuntimeError) as error:
            raise AnalysisError(f"cannot read {path} with cuobjdump {option}: {error}") from error
    return cached(("cuobjdump", option, *stamp(path)), compute)
