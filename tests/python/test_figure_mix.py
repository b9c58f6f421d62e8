"""The mix figure (code/ladder_tools/figures/mix.py, {ladder-mix-figure}) draws one bar per
chapter binary, that of the chapter's own kernel, where a binary holds its
variants' kernels too.
"""

import re
from pathlib import Path

import pytest

from figure_checks import BUILD, ROOT
from ladder_tools.analysis.binaries import chapter_binaries
from ladder_tools.analysis.kernels import select_kernels
from ladder_tools.analysis.mix import kernel_mix, mix_categories
from ladder_tools.figures import mix


def own_kernel_mix(binary: Path, *parts: str) -> dict:
    """The K-loop families of the one kernel of ``binary`` whose name
    contains every one of ``parts``."""
    (kernel,) = [k for k in select_kernels(kernel_mix(binary), None)
                 if all(part in k["name"] for part in parts)]
    return mix_categories(kernel["loop"])


def test_the_mix_figure_has_one_bar_per_chapter_of_its_own_kernel():
    needed = [BUILD / "bin" / name for name in ("10-padding", "12-final")]
    if not all(path.is_file() for path in needed):
        pytest.skip(f"not built in {BUILD}/bin: 10-padding, 12-final (cmake --build build)")
    found = chapter_binaries(ROOT, BUILD)
    drawn_bars = mix.mix_bars(found)
    assert [bar.label for bar in drawn_bars] == [slug.replace("-", " ", 1) for slug, _ in found]
    bars = {bar.label: bar.families for bar in drawn_bars}
    # Chapter 10's own kernel: A padded (layout 0), chapter 09's order (1),
    # not the swizzled variant's nor the rows variant's.
    assert bars["10 padding"] == own_kernel_mix(needed[0], "ALayout)0, 1>")
    # Chapter 12's: the exact path of the tiling kernel.cuh commits to, with
    # A padded (layout 0), not its other paths nor the swizzled and unpadded
    # variants' layouts.
    text = (ROOT / "chapters" / "12-final" / "kernel.cuh").read_text()
    chosen = re.search(r"using\s+Chosen\s*=\s*Tiling<([^>]*)>", text).group(1)
    assert bars["12 final"] == own_kernel_mix(needed[1], f"Tiling<{chosen}, (ch12::ALayout)0>",
                                              "true, false>")

