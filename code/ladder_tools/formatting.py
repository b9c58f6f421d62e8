"""How the book writes numbers: rates, shares, times, errors, sizes, counts.

One place for every number's form, so that a table, an inline value and a
figure's caption agree (four significant digits for a time, thousands
separators for a rate, 10⁻⁶ for an error, ...).
"""

from __future__ import annotations

import math
import re

from ladder_tools.errors import ResultsError

#: What a cell shows for a value that is not there.
DASH = "\u2014"


def format_gflops(value: float) -> str:
    """A rate with thousands separators and no decimals: 12,345."""
    return f"{round(value):,}"


def format_percent(value: float) -> str:
    """A share with one decimal: 87.3%."""
    return f"{value:.1f}%"


def time_decimals(value: float) -> int:
    """Decimals that give a time four significant digits (at least none)."""
    if value <= 0 or not math.isfinite(value):
        return 3
    return max(0, 3 - math.floor(math.log10(value)))


def format_ms(value: float, decimals: int | None = None) -> str:
    """A time in milliseconds to four significant digits: 1.234, 512.3."""
    return f"{value:.{time_decimals(value) if decimals is None else decimals}f}"


def format_time_range(times: dict) -> str:
    """The median with its spread, all to the median's precision: 1.234 [1.230–1.240]."""
    decimals = time_decimals(times["median"])
    low, mid, high = (format_ms(times[key], decimals) for key in ("min", "median", "max"))
    return f"{mid} [{low}\u2013{high}]"


_SUPERSCRIPT = str.maketrans("0123456789-",
                             "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def format_error(value: float) -> str:
    """A relative error in scientific notation: 3.1 × 10⁻⁶."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def format_size(size: tuple[int, int, int]) -> str:
    """An M x N x K problem size: 4096 × 4096 × 4096."""
    return " \u00d7 ".join(str(dimension) for dimension in size)


def parse_size(text: str) -> tuple[int, int, int]:
    """'4096' (square) or '4096x2048x1024' (M x N x K) as (M, N, K)."""
    if re.fullmatch(r"\d+", text):
        return (int(text),) * 3
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not match:
        raise ResultsError(f"size {text!r} is neither N nor MxNxK")
    m, n, k = (int(group) for group in match.groups())
    return m, n, k


def format_count(value: float) -> str:
    """An event count, short: 812, 12,345, 2.68 M, 3.22 G."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) < 100_000:
        return f"{round(value):,}"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            number = value / scale
            decimals = max(0, 2 - math.floor(math.log10(abs(number))))
            return f"{number:.{decimals}f} {suffix}"
    return f"{round(value):,}"


def format_ratio(value: float | None, decimals: int = 2) -> str:
    return DASH if value is None else f"{value:.{decimals}f}"


def format_bytes(value: int) -> str:
    """Bytes as B below 1 KiB, else KiB: 512 B, 8 KiB, 12.5 KiB."""
    if value < 1024:
        return f"{value} B"
    kib = value / 1024
    return f"{kib:g} KiB" if kib == round(kib, 1) else f"{kib:.1f} KiB"


def format_difference(measured: float | None, model: float | None) -> str:
    """(measured - model) / model as a signed percentage."""
    if measured is None or model is None or model == 0:
        return DASH
    return f"{100 * (measured - model) / model:+.1f}%"
