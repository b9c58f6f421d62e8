"""The K-loop's instruction mix, as the book tables and draws it.

ladder_tools.analysis.sass_mix counts the opcodes of each kernel's K-loop from its
SASS; this module reads a chapter binary through it (cached) and groups the
counts: the rows of the {ladder-sass} table, and the families of the mix
figure (FFMA, shared loads and stores, global loads, barriers, other).
"""

from __future__ import annotations

from pathlib import Path

from ladder_tools.analysis import sass_mix
from ladder_tools.analysis.binaries import cached, cuobjdump, stamp
from ladder_tools.formatting import DASH, format_percent


def kernel_mix(path: Path, inner_trips: int | None = None) -> list[dict]:
    """sass_mix's counts for every function of a binary, cached."""
    return cached(("sass", *stamp(path), inner_trips),
                  lambda: sass_mix.analyze_sass(cuobjdump(path, "-sass"), None, inner_trips),
                  about=path, code=(Path(sass_mix.__file__),))


#: Opcode families of the mix, as sass_mix names them, with their SASS spelling.
_MEMORY_ROWS = (("shared_loads", "shared load", "LDS"),
                ("shared_stores", "shared store", "STS"),
                ("global_loads", "global load", "LDG"))


def _opcode(prefix: str, width: str) -> str:
    """The SASS spelling of one width: LDS (32-bit), LDS.128, LDG.E.64."""
    if width == "32":
        return prefix
    return f"{prefix}.E.{width}" if prefix == "LDG" else f"{prefix}.{width}"


def mix_categories(counts: dict) -> dict[str, int]:
    """A K-loop's instructions in the figure's families; they sum to the total."""
    families = {
        "FFMA": counts["ffma"],
        "shared loads": sum(counts["shared_loads"].values()),
        "shared stores": sum(counts["shared_stores"].values()),
        "global loads": sum(counts["global_loads"].values()) + sum(
            counts["async_copies"].values()),
        "barriers": counts["barriers"],
    }
    families["other"] = counts["instructions"] - sum(families.values())
    return families


#: The mix table's row of FFMAs with a .reuse operand; its share is of the
#: FFMAs, not of all instructions.
REUSE_ROW = "FFMA with a .reuse operand (share of FFMA)"


#: The mix table's row of tensor-core mma instructions (Part II), shown only
#: where the code has some.
MMA_ROW = "tensor-core mma (HMMA)"


def mix_rows(counts: dict) -> list[tuple[str, int]]:
    """The {ladder-sass} table's rows for one stretch of code: (label, count)."""
    rows = [("instructions", counts["instructions"]), ("FFMA", counts["ffma"]),
            (REUSE_ROW, counts.get("ffma_reuse", 0))]
    mma = counts.get("by_opcode", {}).get("HMMA", 0)
    if mma:
        rows.append((MMA_ROW, mma))
    for kind, what, prefix in _MEMORY_ROWS:
        widths = counts[kind]
        if not widths:
            rows.append((f"{what}s", 0))
        for width, number in widths.items():
            rows.append((f"{what}s, {width}-bit ({_opcode(prefix, width)})", number))
    rows.append(("cp.async copies (LDGSTS)", sum(counts["async_copies"].values())))
    rows.append(("barriers (BAR)", counts["barriers"]))
    rows.append(("other", mix_categories(counts)["other"] - mma))
    return rows


def per_k_tile_sum(loop: dict) -> str:
    """How the per-K-tile column adds up, from the loop's own counts: its
    inner loops' instructions times the trips, plus the rest of the body
    once ("" when the table has no such column)."""
    per_k_tile = loop.get("per_k_tile")
    if not per_k_tile:
        return ""
    trips = per_k_tile["inner_trips"]
    inner = sum(part["instructions"] for part in loop["inner_loops"])
    rest = loop["instructions"] - inner
    return (f", of {inner} instructions, which the per-K-tile column counts {trips} times "
            f"and the rest of the body once: {trips} \u00b7 {inner} + {rest} = "
            f"{per_k_tile['instructions']}")


def mix_table(loop: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows: count and share of the K-loop's body as laid out, and,
    when sass_mix counted it, per K-tile with the inner loop's trips."""
    columns = [("body", loop)]
    if "per_k_tile" in loop:
        columns.append((f"per K-tile (inner loop \u00d7 {loop['per_k_tile']['inner_trips']})",
                        loop["per_k_tile"]))
    header = ["in the K-loop"]
    for title, _ in columns:
        header += [title, "share"]
    table = [mix_rows(counts) for _, counts in columns]
    rows = []
    for label, _ in table[0]:
        row = [label]
        for (_, counts), column in zip(columns, table, strict=True):
            number = dict(column).get(label, 0)
            total = counts["ffma"] if label == REUSE_ROW else counts["instructions"]
            row += [str(number), format_percent(100 * number / total) if total else DASH]
        rows.append(row)
    return header, rows

