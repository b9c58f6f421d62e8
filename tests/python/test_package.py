"""The package's map: ladder_tools' docstring lists the modules of results/,
analysis/ and cli/ one per line, and that list must name each module there, and
nothing else, so that a module added or removed shows up here."""

from __future__ import annotations

import re
from pathlib import Path

import ladder_tools

PACKAGE = Path(ladder_tools.__file__).parent


def listed(subpackage: str) -> set[str]:
    """The module names the docstring lists under `subpackage`/: the first
    word of each indented line of its block (but the package's own
    "(__init__)")."""
    doc = ladder_tools.__doc__ or ""
    # The block's heading runs over lines that start with no space; its
    # listing is the indented lines after them.
    block = re.search(rf"^{subpackage}/,.*\n(?:\S.*\n)*((?:  .*\n)+)", doc, re.MULTILINE)
    assert block, f"ladder_tools' docstring has no block for {subpackage}/"
    names = set()
    for line in block.group(1).splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            names.add(line.split()[0].strip("()"))
    return names - {"__init__"}


def on_disk(subpackage: str) -> set[str]:
    """The modules of `subpackage`, from its folder (but its __init__)."""
    return {path.stem for path in (PACKAGE / subpackage).glob("*.py")} - {"__init__"}


def test_results_lists_every_module_and_no_other():
    assert listed("results") == on_disk("results")


def test_analysis_lists_every_module_and_no_other():
    assert listed("analysis") == on_disk("analysis")


def test_cli_lists_every_module_and_no_other():
    assert listed("cli") == on_disk("cli")


def test_the_top_level_modules_are_named():
    doc = ladder_tools.__doc__ or ""
    for name in on_disk("."):
        assert re.search(rf"\b{name}\b", doc), f"ladder_tools' docstring does not name {name}"
