"""An autotuning sweep's results (results/<gpu>/sweep-<chapter>.json).

code/sweep.py times every valid configuration of a chapter's kernel and
writes them with the winner; the book shows every configuration as a point,
the ten fastest as a table, which one the chapter's kernel file commits to,
and what one two-valued parameter does across the configurations that
differ in it alone.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from ladder_tools.formatting import DASH, format_gflops, format_percent, parse_size
from ladder_tools.results import ResultsError, read_json


def sweep_path(root: str | os.PathLike, gpu: str, chapter: str) -> Path:
    return Path(root) / gpu / f"sweep-{chapter}.json"


@dataclass(frozen=True)
class Sweep:
    """A sweep's configurations, each flattened to: params, status, correct,
    gflops, pct_cublas, registers, blocks_per_sm (the last four may be absent)."""

    data: dict
    configs: list[dict]

    @property
    def correct(self) -> list[dict]:
        """The candidates: correct and timed."""
        return [c for c in self.configs if c["correct"] and "gflops" in c]

    @property
    def winner(self) -> dict | None:
        """The configuration the sweep chose: its "winner" params, else the fastest correct."""
        chosen = self.data.get("winner")
        params = chosen.get("params") if isinstance(chosen, dict) else None
        if params is not None:
            for config in self.configs:
                if config["params"] == params:
                    return config
        return max(self.correct, key=lambda c: c["gflops"], default=None)

    @property
    def median_gflops(self) -> float | None:
        value = self.data.get("median_gflops")
        if _is_number(value):
            return float(value)
        rates = [c["gflops"] for c in self.correct]
        return statistics.median(rates) if rates else None

    @property
    def size(self) -> tuple[int, int, int] | None:
        size = self.data.get("size")
        if isinstance(size, str):
            return parse_size(size)
        if isinstance(size, list) and len(size) == 3:
            return tuple(size)
        return None

    def top(self, count: int = 10) -> list[dict]:
        return sorted(self.correct, key=lambda c: -c["gflops"])[:count]

    def parameter_names(self) -> list[str]:
        names: list[str] = []
        for config in self.configs:
            for name in config["params"]:
                if name not in names:
                    names.append(name)
        return names


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _flatten_config(config: dict, where: str) -> dict:
    """One configuration in either layout: code/sweep.py's {"params", "result":
    {"status", "gflops", ..., "resources": {...}}}, or flat {"params",
    "correct", "gflops", ..., "registers", "blocks_per_sm"}."""
    if not isinstance(config, dict) or not isinstance(config.get("params"), dict):
        raise ResultsError(f"{where}.params is missing")
    result = config.get("result")
    if isinstance(result, dict):
        status = result.get("status")
        if not isinstance(status, str):
            raise ResultsError(f"{where}.result.status is missing")
        resources = result.get("resources") or {}
        flat = {"params": config["params"], "status": status, "correct": status == "correct",
                "gflops": result.get("gflops"), "pct_cublas": result.get("pct_cublas"),
                "registers": resources.get("registers_per_thread"),
                "blocks_per_sm": resources.get("blocks_per_sm")}
    else:
        if not isinstance(config.get("correct"), bool):
            raise ResultsError(f"{where}.correct is missing")
        flat = {key: config.get(key) for key in
                ("params", "correct", "gflops", "pct_cublas", "registers", "blocks_per_sm")}
        flat["status"] = "correct" if config["correct"] else "incorrect"
    return {key: value for key, value in flat.items()
            if key in ("params", "status", "correct") or _is_number(value)}


def parse_sweep(content: dict, where: str) -> Sweep:
    """A sweep file's content, checked, its configurations flattened."""
    configs = content.get("configs")
    if not isinstance(configs, list) or not configs:
        raise ResultsError(f"{where}: configs is missing or empty")
    flat = [_flatten_config(config, f"{where}: configs[{index}]")
            for index, config in enumerate(configs)]
    return Sweep(content, flat)


def load_sweep(root: str | os.PathLike, gpu: str, chapter: str) -> Sweep | None:
    path = sweep_path(root, gpu, chapter)
    if not path.is_file():
        return None
    return parse_sweep(read_json(path), str(path))


def committed_config(sweep: Sweep, constants: dict | None) -> dict | None:
    """The configuration the chapter's kernel commits to (its ``Chosen``
    tiling, as the binary's --describe gives its default variant's
    constants), found among the sweep's configurations; None when the
    constants lack a parameter or the sweep did not run them."""
    names = sweep.parameter_names()
    if not constants or any(not isinstance(constants.get(name), int) for name in names):
        return None
    params = {name: constants[name] for name in names}
    return next((c for c in sweep.configs if c["params"] == params), None)


def sweep_rows(sweep: Sweep, count: int = 10,
               committed: dict | None = None) -> tuple[list[str], list[list[str]]]:
    """The top ``count`` correct configurations: rank, parameters, rate, % of
    cuBLAS; the fastest and the one the kernel file commits to are marked."""
    names = sweep.parameter_names()
    winner = sweep.winner
    header = ["#", *names, "GFLOP/s", "% of cuBLAS", "registers", "blocks/SM"]
    rows = []
    for rank, config in enumerate(sweep.top(count), start=1):
        pct = config.get("pct_cublas")
        marks = [m for m, c in (("fastest", winner), ("committed", committed)) if config is c]
        rows.append([
            f"{rank} ({', '.join(marks)})" if marks else str(rank),
            *(str(config["params"].get(name, DASH)) for name in names),
            format_gflops(config["gflops"]),
            format_percent(pct) if isinstance(pct, (int, float)) else DASH,
            str(config.get("registers", DASH)), str(config.get("blocks_per_sm", DASH)),
        ])
    return header, rows


def sweep_pairs(sweep: Sweep, name: str) -> dict | None:
    """How one two-valued parameter of a sweep moves the rate: the correct
    configurations are paired when they differ in ``name`` only, and for each
    pair the ratio of rates (the larger value of ``name`` over the smaller) is
    taken. Returns the two values, the number of pairs, how many the larger
    value wins, and the median, smallest and largest ratio; None when there
    is no pair (also when the sweep did not vary ``name``)."""
    values = sorted({c["params"][name] for c in sweep.configs if name in c["params"]})
    if len(values) > 2:
        raise ResultsError(f"sweep parameter {name!r} must take two values, not {values}")
    if len(values) < 2:
        return None  # an older sweep, or one that did not vary it
    low, high = values
    rates: dict[tuple, dict] = {}
    for config in sweep.correct:
        rest = tuple(sorted((k, v) for k, v in config["params"].items() if k != name))
        rates.setdefault(rest, {})[config["params"][name]] = config["gflops"]
    ratios = [pair[high] / pair[low] for pair in rates.values() if len(pair) == 2]
    if not ratios:
        return None
    return {"low": low, "high": high, "pairs": len(ratios),
            "high_wins": sum(1 for r in ratios if r > 1.0),
            "median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}
