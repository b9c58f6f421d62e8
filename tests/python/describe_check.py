#!/usr/bin/env python3
"""Checks what a chapter binary's --describe says about its variants.

    describe_check.py BINARY [VARIANT ...]

BINARY --describe must exit 0 with one JSON document whose "chapter" is the
binary's name, whose first variant is the chapter's own ("default", with the
chapter's slug) and whose other variants are exactly VARIANT ..., in order,
each with the slug "<chapter>-<variant>": the VARIANTS list that CMake gives
ladder_add_chapter and the variants the chapter describes cannot drift apart.
Prints what differs and exits 1; exits 0 when all agree. No GPU needed.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def describe(binary: str | Path) -> dict:
    """The JSON that `binary --describe` prints (raises when it fails)."""
    done = subprocess.run([str(binary), "--describe"], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout)


def problems(description: dict, binary_name: str, variants: list[str]) -> list[str]:
    """What differs between `description` and a binary called `binary_name`
    with the other variants `variants`; empty when nothing does."""
    found = []
    slug = description.get("chapter")
    if slug != binary_name:
        found.append(f"chapter is {slug!r}, the binary is {binary_name!r}")
    listed = description.get("variants") or []
    names = [v.get("name") for v in listed]
    expected = ["default", *variants]
    if names != expected:
        found.append(f"variants are {names}, CMake lists {expected}")
    for index, variant in enumerate(listed):
        want = slug if index == 0 else f"{slug}-{variant.get('name')}"
        if variant.get("slug") != want:
            found.append(f"variant {variant.get('name')!r} has slug {variant.get('slug')!r}, "
                         f"not {want!r}")
    return found


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = Path(argv[1])
    found = problems(describe(binary), binary.name, argv[2:])
    for problem in found:
        print(f"{binary.name} --describe: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
