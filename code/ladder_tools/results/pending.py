"""What awaits the measure command: the stale and missing results that the
tree may carry, each one said in tests/pending_measurement.txt.

Results are written by the measure command on a GPU, never by hand
(code/measure.py). A change to a kernel or to the harness makes the results
built from it stale (ladder_tools.provenance), and a new chapter has none
until it is measured. The book shows both as they are: a stale result under
a warning box, a missing one as "(not measured)". CI fails on either unless
the pending file says so, one line each:

    stale <path> | why it changed
        every measurement whose only changed inputs are such paths is stale
        as said;
    missing <result name> | why
        the chapter binary <result name> (a chapter, or <chapter>-<variant>)
        has no result on the reference GPU yet.

A line that no longer explains anything is itself a problem, so that the
file empties as the measure command catches up: after a full measure run
that passes, it holds nothing.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladder_tools import provenance, results

PENDING_FILE = Path("tests") / "pending_measurement.txt"
#: The GPU whose results every chapter binary must have (the book's).
REFERENCE_GPU = "h200"


@dataclass(frozen=True)
class Pending:
    """The pending file's lines: {path: why} and {result name: why}."""
    stale: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def read(root: Path) -> Pending:
    """The pending file of the tree at `root` (empty when there is none)."""
    path = Path(root) / PENDING_FILE
    pending = Pending()
    if not path.is_file():
        return pending
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        head, _, why = text.partition("|")
        kind, _, name = head.strip().partition(" ")
        name, why = name.strip(), why.strip()
        if kind not in ("stale", "missing") or not name or not why:
            raise ValueError(f"{PENDING_FILE}:{number}: expected 'stale <path> | why' or "
                             f"'missing <name> | why', found {line!r}")
        (pending.stale if kind == "stale" else pending.missing)[name] = why
    return pending


def measurements(results_root: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, provenance) of everything under results/ that records what it
    was built from: chapter results, sweeps, the transpose, the GPU tests'
    summary, the random problems' file, and each entry of the files that
    gather chapters (sanitizer, ncu, issue)."""
    for gpu in results.gpu_folders(results_root):
        folder = Path(results_root) / gpu
        for path in sorted([*folder.glob("chapters/*.json"), *folder.glob("sweep-*.json"),
                            folder / "transpose.json"]):
            if path.exists():
                yield str(path.relative_to(results_root)), results.read_json(path)["provenance"]
        tests = folder / "gpu-tests.json"
        if tests.exists():
            yield f"{gpu}/gpu-tests.json", {"inputs": results.read_json(tests).get("inputs")}
        # The random problems' file: one seed for three chapters, stale when
        # any of their inputs changes (it records the union).
        drawn = folder / "random.json"
        if drawn.exists():
            yield f"{gpu}/random.json", {"inputs": results.read_json(drawn).get("inputs")}
        for name in ("sanitizer.json", "ncu.json", "issue.json"):
            if (folder / name).exists():
                for slug, entry in results.read_json(folder / name)["chapters"].items():
                    yield f"{gpu}/{name} {slug}", entry.get("measured", {})


def changed(recorded: dict, root: Path) -> list[tuple[str, str]] | None:
    """The (path, why) inputs of one measurement that the tree has changed,
    or None when it records no inputs (stale with no file to blame)."""
    inputs = recorded.get("inputs")
    if not inputs:
        return None
    return provenance.changed_paths(inputs, Path(root), recorded.get("inputs_exclude"))


def problems(root: Path, declared: list[str], results_root: Path | None = None) -> list[str]:
    """Every stale or missing result the pending file does not explain, and
    every line of it that explains nothing; one line each, empty when the
    tree and its results agree. `declared`: the chapter binaries, as the
    built chapters describe them (binaries.declared_binaries)."""
    root = Path(root)
    results_root = Path(results_root or root / "results")
    pending = read(root)
    found: list[str] = []
    used: set[str] = set()
    for where, recorded in measurements(results_root):
        paths = changed(recorded, root)
        if paths is None:
            found.append(f"{where}: records no inputs; measure again")
            continue
        used.update(name for name, _ in paths)
        found += [f"{where}: {name} {why} since it was measured, and {PENDING_FILE} does "
                  f"not say so; measure again, or add 'stale {name} | why'"
                  for name, why in paths if name not in pending.stale]
    found += [f"{PENDING_FILE}: 'stale {name}': no measurement is stale through it; "
              f"remove the line" for name in pending.stale if name not in used]

    have = {p.stem for p in (results_root / REFERENCE_GPU / "chapters").glob("*.json")}
    found += [f"{name}: no result on the {REFERENCE_GPU} (chapters/{name}.json), and "
              f"{PENDING_FILE} does not say so" for name in declared
              if name not in have and name not in pending.missing]
    found += [f"{PENDING_FILE}: 'missing {name}': it has a result now; remove the line"
              for name in pending.missing if name in have]
    found += [f"{PENDING_FILE}: 'missing {name}': no chapter declares it; remove the line"
              for name in pending.missing if name not in declared]
    return found


def measured_binaries(root: Path, declared: list[str]) -> list[str]:
    """The chapter binaries `declared` that are not pending as missing: those
    the committed results must hold."""
    missing = read(root).missing
    return [name for name in declared if name not in missing]
