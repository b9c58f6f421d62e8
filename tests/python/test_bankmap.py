"""Tests of the bankmap front end (code/tools/bankmap.cu), run as built.

The bank arithmetic itself is tested in tests/cpp/test_bank_model.cpp; these
check that the command line prints what the model computes, and test
bankmap_check.py, which CTest runs on bankmap's and `transpose --banks`'s
output (it holds a bank model of its own). The tests that run bankmap are
skipped when it has not been built.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bankmap_check

REPO = Path(__file__).resolve().parents[2]
BANKMAP = Path(os.environ.get("LADDER_BUILD_DIR", REPO / "build")) / "bin" / "bankmap"

TRANSPOSE = BANKMAP.parent / "transpose"
built = pytest.mark.skipif(not BANKMAP.is_file(), reason=f"{BANKMAP} is not built")


def bankmap(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BANKMAP), *args], capture_output=True, text=True, timeout=60)


# The accesses the book's pages and the ncu models name: each computed from a
# chapter's own index functions (or the transpose exercise's warp_addresses).
NAMED = [
    "transpose.32x32.tile-write", "transpose.32x32.tile-read",
    "transpose.32x33.tile-write", "transpose.32x33.tile-read",
    "transpose.swizzled.tile-write", "transpose.swizzled.tile-read",
    "ch04.a-store", "ch04.a-load", "ch04.b-load",
    "ch07.a-store", "ch07.a-load", "ch07.b-load", "ch07.b-store",
    "ch08.a-store", "ch08.a-load", "ch08.b-load", "ch08.b-store",
    "ch09.a-store", "ch09.a-load", "ch09.b-load", "ch09.b-store",
    "ch10.a-store", "ch10.a-load", "ch10-swizzled.a-store", "ch10-swizzled.a-load",
    "ch12.a-store", "ch12.a-load", "ch12.b-load",
]


def reports(*names: str) -> dict[str, dict]:
    done = bankmap("--access", *names, "--json")
    assert done.returncode == 0, done.stderr
    return {r["name"]: r for r in json.loads(done.stdout)}


@built
def test_lists_every_named_access():
    names = [line.split()[0] for line in bankmap("--list").stdout.splitlines()]
    assert set(NAMED) <= set(names)
    assert len(names) == len(set(names))
    for old in ("transpose.32x32.column-read", "transpose.32x33.column-read",
                "transpose.32x32-xor.column-read"):
        assert old not in names


# warp_addresses<Layout>(0, 0) of transpose.cu. The read goes down column 0:
# 32x32: lane r reads word 32r, all in bank 0 -> 32 wavefronts. 32x33: word
# 33r is in bank r -> 1. Swizzled: word 32r + (0 ^ r), bank r -> 1. The write
# goes along row 0, conflict-free in every layout.
@built
def test_transpose_accesses_as_json():
    by_name = reports(*[name for name in NAMED if name.startswith("transpose.")])
    unpadded = by_name["transpose.32x32.tile-read"]
    assert unpadded["wavefronts"] == 32 and unpadded["conflict_degree"] == 32
    # Warp 5 reads column 5: every lane in bank 5.
    assert [lane["bank"] for lane in unpadded["lanes"]] == [5] * 32
    assert unpadded["phases"][0]["words_per_bank"][5] == 32
    padded = by_name["transpose.32x33.tile-read"]
    assert padded["wavefronts"] == 1
    # Rows of 33 floats: lane r's element of column 5 is in bank (r + 5) mod 32.
    assert [lane["bank"] for lane in padded["lanes"]] == [(r + 5) % 32 for r in range(32)]
    swizzled = by_name["transpose.swizzled.tile-read"]
    assert swizzled["wavefronts"] == 1
    assert sorted(lane["bank"] for lane in swizzled["lanes"]) == list(range(32))
    # The swizzle is a different permutation of the banks than the padding.
    assert [lane["bank"] for lane in swizzled["lanes"]] != [
        lane["bank"] for lane in padded["lanes"]]
    for layout in ("32x32", "32x33", "swizzled"):
        write = by_name[f"transpose.{layout}.tile-write"]
        assert write["wavefronts"] == 1 and write["width_bytes"] == 4, layout


# The transposed store of A (4-byte STS of one float of each lane's float4).
# Rows of As BM floats long (a multiple of 32) leave only a_copy_row in the
# bank: a warp covers 32 / (BK / 4) rows, each stored by BK / 4 lanes, so
# BK = 8 (chapter 07) is 2-way and BK = 16 (chapters 08, 09) 4-way. Padding
# to BM + 32 / BK floats (chapters 10, 12) or the XOR swizzle spreads the
# column groups over all 32 banks: conflict-free.
@built
@pytest.mark.parametrize("name, degree", [
    ("ch07.a-store", 2), ("ch08.a-store", 4), ("ch09.a-store", 4),
    ("ch10.a-store", 1), ("ch10-swizzled.a-store", 1), ("ch12.a-store", 1),
])
def test_a_store_conflicts(name, degree):
    report = reports(name)[name]
    assert report["width_bytes"] == 4
    assert report["ideal_wavefronts"] == 1
    assert report["wavefronts"] == degree and report["conflict_degree"] == degree
    lanes_per_bank = {}
    for lane in report["lanes"]:
        lanes_per_bank[lane["bank"]] = lanes_per_bank.get(lane["bank"], 0) + 1
    assert len(lanes_per_bank) == 32 // degree


# The widths the compiler emits: float4 loads and stores are LDS.128/STS.128,
# except chapter 10's padded As (rows of 130 floats, 8-byte aligned: LDS.64).
@built
def test_access_widths():
    by_name = reports(*NAMED)
    for name, report in by_name.items():
        if name.endswith("a-store") or name.startswith(("transpose.", "ch04.")):
            expected = 4
        elif name == "ch10.a-load":
            expected = 8
        else:
            expected = 16
        assert report["width_bytes"] == expected, name
    assert by_name["ch10.a-load"]["wavefronts"] == 2
    assert by_name["ch10-swizzled.a-load"]["wavefronts"] == 4


# Stride 2 floats: lane i in bank 2i % 32, lanes i and i + 16 collide -> 2-way.
# As 8-byte accesses (lane i reads 8 bytes at 8i): 2 phases of 16 lanes, each
# covering 128 contiguous bytes -> 2 wavefronts, degree 1.
@built
def test_column_walk_options():
    [scalar] = json.loads(bankmap("--stride", "2", "--json").stdout)
    assert scalar["wavefronts"] == 2 and scalar["conflict_degree"] == 2
    [wide] = json.loads(bankmap("--stride", "2", "--width", "8", "--json").stdout)
    assert wide["wavefronts"] == 2 and wide["conflict_degree"] == 1
    assert len(wide["phases"]) == 2


@built
def test_refuses_bad_input_with_one_line():
    for args in (["--stride", "130", "--width", "16"], ["--access", "no-such-access"],
                 ["no-such-access"], ["--bogus"], ["--stride", "2", "--width", "3"]):
        done = bankmap(*args)
        assert done.returncode == 2, args
        assert len(done.stderr.strip().splitlines()) == 1, args
        assert done.stdout == ""
        if args[0] == "--stride" and args[3] == "16":
            assert done.stderr == bankmap_check.MISALIGNED + "\n"


# ------------------------------------------------ bankmap_check.py, CTest's check

# Its model, on accesses counted by hand: 32 lanes reading one word are one
# wavefront (broadcast); a column of a 32-float-wide tile is 32 words of bank
# 0, 32 wavefronts; stride 2 puts lanes i and i + 16 in one bank, 2. A 16-byte
# access at 32-byte steps: 4 phases of 8 lanes, lanes 0 and 4 of each phase
# both on banks 0-3, so 2 wavefronts a phase, 8 in all.
@pytest.mark.parametrize("addresses, width, wavefronts, ideal", [
    ([64] * 32, 4, 1, 1),
    ([128 * lane for lane in range(32)], 4, 32, 1),
    ([8 * lane for lane in range(32)], 4, 2, 1),
    ([32 * lane for lane in range(32)], 16, 8, 4),
    ([16 * lane for lane in range(32)], 16, 4, 4),
])
def test_the_checks_own_model(addresses, width, wavefronts, ideal):
    got = bankmap_check.model(addresses, width)
    assert (got["wavefronts"], got["ideal_wavefronts"]) == (wavefronts, ideal)


def test_the_checks_model_skips_inactive_lanes():
    # Only lanes 0 and 16 active at stride 2: two words in bank 0, 2 wavefronts;
    # only lane 0: one.
    addresses = [8 * lane for lane in range(32)]
    active = [lane in (0, 16) for lane in range(32)]
    assert bankmap_check.model(addresses, 4, active)["wavefronts"] == 2
    assert bankmap_check.model(addresses, 4, [lane == 0 for lane in range(32)])["wavefronts"] == 1


@built
def test_the_check_passes_on_what_bankmap_prints_and_fails_on_a_wrong_count():
    names = [line.split()[0] for line in bankmap("--list").stdout.splitlines()]
    text = bankmap("--all", "--json").stdout
    assert bankmap_check.check_json(text, names) == []
    reports = json.loads(text)
    assert bankmap_check.check_text(bankmap("--all").stdout, reports) == []
    # One wavefront too many, one lane in the wrong bank, a missing entry, a
    # broadcast counted as a conflict: each is reported.
    wrong = copy.deepcopy(reports)
    wrong[1]["wavefronts"] += 1
    wrong[2]["lanes"][3]["bank"] = (wrong[2]["lanes"][3]["bank"] + 1) % 32
    assert len(bankmap_check.check_json(json.dumps(wrong), names)) == 2
    assert bankmap_check.check_json(json.dumps(reports[1:]), names)
    assert bankmap_check.check_json("[{", names)
    # The text of one access with a wrong count.
    first = reports[0]
    text_out = bankmap("--all").stdout
    line = f"{first['wavefronts']} wavefronts, ideal"
    wrong = text_out.replace(line, f"{first['wavefronts'] + 1} wavefronts, ideal", 1)
    assert bankmap_check.check_text(wrong, reports)


@built
@pytest.mark.skipif(not TRANSPOSE.is_file(), reason="transpose is not built")
def test_the_transpose_check_passes_and_fails():
    text = subprocess.run([str(TRANSPOSE), "--banks"], capture_output=True, text=True,
                          timeout=60).stdout
    assert bankmap_check.check_transpose(text) == []
    # The unpadded tile's column read claimed conflict-free.
    claimed = text.replace("tile read  (LDS): 32 wavefront(s)", "tile read  (LDS): 1 wavefront(s)")
    assert claimed != text and bankmap_check.check_transpose(claimed)
    # A read address moved by one word (a different bank) is caught.
    moved = text.replace("     1            148     5", "     1            152     5", 1)
    assert moved != text and bankmap_check.check_transpose(moved)


@built
def test_the_check_as_ctest_runs_it():
    for mode in ("json", "text", "refuses"):
        done = subprocess.run([sys.executable, bankmap_check.__file__, mode, str(BANKMAP)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout
    # On a program that exits 0 for everything, the refusal check fails.
    done = subprocess.run([sys.executable, bankmap_check.__file__, "refuses", "/bin/true"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "exit code 0, expected 2" in done.stdout
