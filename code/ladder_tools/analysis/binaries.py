"""The chapters' binaries in the build folder, and what they and cuobjdump
say of them.

The analysis reads the chapters as they were compiled: the build folder is
$LADDER_BUILD_DIR when set, else <repo>/build, and a chapter's program is
bin/<chapter folder> there. One program holds several variants, each
measured under its own result name (its slug: 10-padding-swizzled is
bin/10-padding --variant swizzled); the program's ``--describe`` (JSON, no
GPU needed) lists them with their kernels and launch shapes, and
find_variant goes from a result slug to the binary and its variant.
Reading a binary (--describe, cuobjdump, bankmap) takes a moment, so each
answer is computed once per file version (cached): kept in the process, and
for a binary of a build's bin/ also on disk in the build's analysis-cache/,
so that every Sphinx run and test of one build shares it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ladder_tools import results

#: Environment variable naming the CMake build folder that holds bin/.
from ladder_tools.analysis import sass_mix

#: Environment variable naming the CMake build folder that holds bin/.
BUILD_DIR_VARIABLE = "LADDER_BUILD_DIR"
#: What a binary's --describe looks at to find cuobjdump (ladder/describe.hpp)
#: and a GPU.
CUOBJDUMP_FOUND_BY = ("CUOBJDUMP", "PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES")
#: The device node NVIDIA's kernel driver makes: on a machine without it no
#: binary finds a GPU.
NVIDIA_DRIVER_NODE = "/dev/nvidiactl"


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


_CACHE: dict[tuple[Any, ...], Any] = {}
T = TypeVar("T")


def cached(key: tuple[Any, ...], compute: Callable[[], T], about: Path | None = None,
           code: tuple[Path, ...] = ()) -> T:
    """compute() once per key; a key about a file holds stamp(file), so that
    a rebuilt binary is read again. With ``about`` (the file the key is
    about) in a build's bin/, the answer is kept on disk too (JSON, in the
    build's analysis-cache/), under the key and the text of ``code``, the
    sources that compute it: a changed analysis computes again."""
    if key not in _CACHE:
        store = disk_entry(key, about, code) if about is not None else None
        if store is not None and store.is_file():
            _CACHE[key] = json.loads(store.read_text())
        else:
            value = compute()
            if store is not None:
                text = json.dumps(value)
                # Every process reads what the file holds: lists, not tuples.
                value = json.loads(text)
                keep(store, text)
            _CACHE[key] = value
    result: T = _CACHE[key]
    return result


def disk_entry(key: tuple[Any, ...], about: Path, code: tuple[Path, ...]) -> Path | None:
    """Where the answer for ``key`` is kept: <build>/analysis-cache/<digest>.json
    for a file in <build>/bin/; None for a file elsewhere."""
    folder = about.resolve().parent
    if folder.name != "bin":
        return None
    digest = hashlib.sha256(repr(key).encode())
    for source in code:
        digest.update(source.read_bytes())
    return folder.parent / "analysis-cache" / f"{digest.hexdigest()[:40]}.json"


def keep(store: Path, text: str) -> None:
    """Writes ``store`` whole or not at all (tests read it in parallel)."""
    store.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=store.parent, suffix=".part")
    with os.fdopen(handle, "w") as out:
        out.write(text)
    os.replace(temporary, store)


def stamp(path: Path) -> tuple[str, int]:
    """A file's identity for cached(): its resolved path and modification time."""
    return (str(path.resolve()), path.stat().st_mtime_ns)


def tool_json(tool: Path, arguments: list[str]) -> Any:
    """What one of the project's CPU tools (bankmap, warpmap, tailplan, lastround)
    prints as JSON for ``arguments`` (``--json`` added), cached per call;
    its error message as an AnalysisError when it fails."""
    def compute() -> Any:
        done = subprocess.run([str(tool), *arguments, "--json"], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise AnalysisError(done.stderr.strip() or f"{tool} exited {done.returncode}")
        return json.loads(done.stdout)
    return cached((tool.name, *stamp(tool), *arguments), compute, about=tool)


def cuobjdump(path: Path, option: str) -> str:
    """The text of ``cuobjdump <option>`` of a binary, cached."""
    def compute() -> str:
        try:
            return sass_mix.run_cuobjdump(path, option)
        except (OSError, RuntimeError) as error:
            raise AnalysisError(f"cannot read {path} with cuobjdump {option}: {error}") from error
    return cached(("cuobjdump", option, *stamp(path)), compute)


def describe(path: Path) -> dict:
    """What a chapter binary says of itself (``<path> --describe``: its
    chapter, variants, their constants, kernels and launch shapes), cached."""
    def compute() -> dict[str, Any]:
        try:
            done = subprocess.run([str(path), "--describe"], capture_output=True, text=True,
                                  timeout=120)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise AnalysisError(f"cannot run {path} --describe: {error}") from error
        if done.returncode != 0:
            raise AnalysisError(f"{path} --describe failed ({done.returncode}): {done.stderr}")
        try:
            return json.loads(done.stdout)
        except json.JSONDecodeError as error:
            raise AnalysisError(f"{path} --describe printed no JSON: {error}") from error
    # With a GPU the binary asks the driver for its kernels' registers;
    # without one it reads them with the cuobjdump these name (or says it
    # found none): both are part of the answer's key.
    found_by = tuple(os.environ.get(name) for name in CUOBJDUMP_FOUND_BY)
    driver = os.path.exists(NVIDIA_DRIVER_NODE)
    return cached(("describe", *stamp(path), *found_by, driver), compute, about=path)


def chapter_folder(repo_root: str | os.PathLike, slug: str) -> str:
    """The chapter a result slug belongs to: the longest chapters/* name that
    is the slug or prefixes it with "-" ('10-padding-rows' -> '10-padding')."""
    matches = [chapter for chapter in results.chapter_slugs(repo_root)
               if slug == chapter or slug.startswith(chapter + "-")]
    if not matches:
        raise AnalysisError(f"no chapter folder under {Path(repo_root) / 'chapters'} "
                            f"is {slug!r} or a prefix of it")
    return max(matches, key=len)


def variant_of(description: dict, slug: str, path: Path) -> dict:
    """The variant of a --describe answer whose result slug is ``slug``."""
    for variant in description.get("variants", []):
        if variant.get("slug") == slug:
            return variant
    described = ", ".join(v.get("slug", "?") for v in description.get("variants", []))
    raise AnalysisError(f"{path} --describe has no variant {slug!r} (it describes: {described})")


def find_variant(repo_root: str | os.PathLike, build: str | os.PathLike,
                 slug: str) -> tuple[Path, dict]:
    """The binary that measures result ``slug`` and its --describe entry for
    that variant ("default" for the chapter's own)."""
    path = require_binary(build, chapter_folder(repo_root, slug))
    return path, variant_of(describe(path), slug, path)


def declared_binaries(repo_root: str | os.PathLike, build: str | os.PathLike,
                      chapters: list[str] | None = None) -> list[str]:
    """Every chapter binary a result is measured by, sorted: the slugs of
    each chapter's variants as its built binary describes them (the
    chapter's own is the chapter's name, another <chapter>-<variant>). Each
    chapter folder (one with a kernel.cu, as the measure command counts
    them), or each of `chapters` where given, must have its binary built,
    so that the list never shrinks with the build: a missing one is an
    AnalysisError."""
    if chapters is None:
        chapters = [k.parent.name for k in Path(repo_root, "chapters").glob("*/kernel.cu")]
    names = []
    for chapter in chapters:
        path = require_binary(build, chapter)
        names += [variant["slug"] for variant in describe(path)["variants"]]
    return sorted(names)


def chapter_binaries(repo_root: str | os.PathLike,
                     build: str | os.PathLike) -> list[tuple[str, Path]]:
    """(chapter slug, binary) for every chapter whose binary is built, in order."""
    found = [(slug, binary_path(build, slug)) for slug in results.chapter_slugs(repo_root)]
    return [(slug, path) for slug, path in found if path.is_file()]
