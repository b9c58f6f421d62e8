"""ncu's shared-memory and global-load counters (results/<gpu>/ncu.json).

The measure command records, per chapter (and for the transpose exercise),
the counters of ladder_tools.results.metrics.COUNTERS for each kernel of one launch.
The book shows them with the ratios that matter (wavefronts per shared
instruction, sectors per global request), beside the bank model's
prediction when a page gives one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.analysis.kernels import base_name, is_chapter_kernel
from ladder_tools.formatting import DASH, format_count, format_difference, format_ratio
from ladder_tools.results import load_chapters_file
from ladder_tools.results.metrics import METRIC


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator



def ncu_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / "ncu.json"



def load_ncu(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's ncu.json, or None when it has none."""
    return load_chapters_file(ncu_path(root, gpu))


def ncu_entry(ncu: dict, name: str) -> dict | None:
    """The counters of one chapter (or of "transpose"): {"size", "kernels"}."""
    entry = ncu.get("chapters", {}).get(name)
    if entry is None and isinstance(ncu.get(name), dict):
        entry = ncu[name]
    return entry if isinstance(entry, dict) else None


@dataclass(frozen=True)
class KernelCounters:
    """One kernel's counters, with the ratios the book shows."""

    name: str
    metrics: dict

    def get(self, key: str) -> float | None:
        value = self.metrics.get(METRIC[key])
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def per_instruction(self, op: str) -> float | None:
        """Wavefronts per shared load (op 'ld') or store ('st') instruction."""
        return ratio(self.get(f"{op}_wavefronts"), self.get(f"{op}_instructions"))

    @property
    def sectors_per_request(self) -> float | None:
        return ratio(self.get("global_sectors"), self.get("global_requests"))


def entry_kernels(entry: dict, only_chapter_kernels: bool = True) -> list[KernelCounters]:
    kernels = entry.get("kernels")
    if not isinstance(kernels, dict):
        return []
    return [KernelCounters(name, metrics) for name, metrics in kernels.items()
            if isinstance(metrics, dict) and (not only_chapter_kernels or is_chapter_kernel(name))]


def parse_model(text: str | None, count: int,
                resolve: Callable[[str], float] | None = None) -> list[float | None]:
    """A model option: one value for every chapter, or one per chapter,
    separated by spaces or commas; a value is a number, '-' for none, or (with
    ``resolve``) a name that resolve(name) turns into a number, e.g. a bankmap
    access whose wavefronts are the model."""
    if text is None:
        return [None] * count
    parts = text.replace(",", " ").split()
    if len(parts) not in (1, count):
        raise AnalysisError(f"give one model value, or {count} (one per chapter): {text!r}")
    values: list[float | None] = []
    for part in parts:
        if part in ("-", DASH):
            values.append(None)
            continue
        try:
            values.append(float(part))
        except ValueError:
            if resolve is None:
                raise AnalysisError(f"a model value is not a number: {part!r}") from None
            values.append(float(resolve(part)))
    return values * count if len(values) == 1 else values


def ncu_header(models: tuple[bool, bool]) -> tuple[list[str | tuple[str, int]], list[str]]:
    """The two header rows of the {ladder-ncu} table; ``models`` says whether
    the loads and the stores have a model column."""
    top: list[str | tuple[str, int]] = ["", ""]
    bottom = ["chapter", "kernel"]
    for op, modelled in zip(("loads", "stores"), models, strict=True):
        names = ["instructions", "wavefronts", "wavefronts/instr."]
        if modelled:
            names += ["model", "difference"]
        names.append("bank conflicts")
        top.append((f"shared {op}", len(names)))
        bottom += names
    top.append(("global loads", 1))
    bottom.append("sectors/request")
    return top, bottom


def ncu_row(slug: str, kernel: KernelCounters, model_ld: float | None, model_st: float | None,
            models: tuple[bool, bool]) -> list[str]:
    # The base name only: the chapter names the configuration, and the
    # template arguments would make this wide table wider still.
    row = [slug, base_name(kernel.name)]
    for op, model, modelled in (("ld", model_ld, models[0]), ("st", model_st, models[1])):
        instructions = kernel.get(f"{op}_instructions")
        wavefronts = kernel.get(f"{op}_wavefronts")
        per = kernel.per_instruction(op)
        row += [DASH if instructions is None else format_count(instructions),
                DASH if wavefronts is None else format_count(wavefronts), format_ratio(per)]
        if modelled:
            row += [format_ratio(model), format_difference(per, model)]
        conflicts = kernel.get(f"{op}_conflicts")
        row.append(DASH if conflicts is None else format_count(conflicts))
    row.append(format_ratio(kernel.sectors_per_request))
    return row
