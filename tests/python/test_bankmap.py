"""Tests of the bankmap front end (code/tools/bankmap.cu), run as built.

The bank arithmetic itself is tested in tests/cpp/test_bank_model.cpp; these
check that the command line prints what the model computes. Skipped when
bankmap has not been built.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BANKMAP = Path(os.environ.get("LADDER_BUILD_DIR", REPO / "build")) / "bin" / "bankmap"

pytestmark = pytest.mark.skipif(not BANKMAP.is_file(), reason=f"{BANKMAP} is not built")


def bankmap(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BANKMAP), *args], capture_output=True, text=True, timeout=60)


def test_lists_the_transpose_accesses():
    names = [line.split()[0] for line in bankmap("--list").stdout.splitlines()]
    assert {"transpose.32x32.column-read", "transpose.32x33.column-read",
            "transpose.32x32-xor.column-read"} <= set(names)


# 32x32 column read: lane r reads word 32r, all in bank 0 -> 32 wavefronts.
# 32x33: word 33r is in bank r -> 1. XOR swizzle: word 32r + (0 ^ r), bank r -> 1.
def test_transpose_accesses_as_json():
    done = bankmap("transpose.32x32.column-read", "transpose.32x33.column-read",
                   "transpose.32x32-xor.column-read", "--json")
    assert done.returncode == 0, done.stderr
    by_name = {r["name"]: r for r in json.loads(done.stdout)}
    unpadded = by_name["transpose.32x32.column-read"]
    assert unpadded["wavefronts"] == 32
    assert [lane["bank"] for lane in unpadded["lanes"]] == [0] * 32
    assert unpadded["phases"][0]["words_per_bank"][0] == 32
    padded = by_name["transpose.32x33.column-read"]
    assert padded["wavefronts"] == 1
    assert [lane["bank"] for lane in padded["lanes"]] == list(range(32))
    assert by_name["transpose.32x32-xor.column-read"]["conflict_degree"] == 1


# Stride 2 floats: lane i in bank 2i % 32, lanes i and i + 16 collide -> 2-way.
# As 8-byte accesses (lane i reads 8 bytes at 8i): 2 phases of 16 lanes, each
# covering 128 contiguous bytes -> 2 wavefronts, degree 1.
def test_column_walk_options():
    [scalar] = json.loads(bankmap("--stride", "2", "--json").stdout)
    assert scalar["wavefronts"] == 2 and scalar["conflict_degree"] == 2
    [wide] = json.loads(bankmap("--stride", "2", "--width", "8", "--json").stdout)
    assert wide["wavefronts"] == 2 and wide["conflict_degree"] == 1
    assert len(wide["phases"]) == 2


def test_refuses_bad_input_with_one_line():
    for args in (["--stride", "130", "--width", "16"], ["no-such-access"], ["--bogus"],
                 ["--stride", "2", "--width", "3"]):
        done = bankmap(*args)
        assert done.returncode == 2, args
        assert len(done.stderr.strip().splitlines()) == 1, args
        assert done.stdout == ""
