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
from collections import Counter
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


# Chapter 16's first load of B^T's fragment (consumer warp 0, step 0,
# register b[0]): lane (g, t) = (lane / 4, lane % 4) reads row k = t of B's
# tile at column n. Written out here from tiling.cuh's comments, not its
# code: in order, n = g (warp 0's columns 0 .. 15); spread, n = 16 (g / 4) +
# g % 4 (warps 0 and 1 share box 0, warp 0 its columns 0 .. 7 and 16 .. 23).
# A row of the box is 32 floats; the 128-byte swizzle moves 16-byte piece p
# of row k to piece p ^ (k % 8). Without it, the four rows put the eight g
# on banks 0 .. 7, four words each: 4 wavefronts. With it, in order, lanes g
# read pieces 0 and 1, so pieces p ^ t cover 0 .. 3 twice: 2. Spread, they
# read pieces 0 and 4, which the XOR keeps apart: 8 pieces, 1.
CH16_BT_LOADS = {
    "ch16.bt-load.unswizzled": (False, False, 4),
    "ch16.bt-load.in-order": (False, True, 2),
    "ch16.bt-load": (True, True, 1),
}


def ch16_bt_word(lane: int, spread: bool, swizzled: bool) -> int:
    g, t = divmod(lane, 4)
    n = 16 * (g // 4) + g % 4 if spread else g
    piece = n // 4 ^ t % 8 if swizzled else n // 4
    return 32 * t + 4 * piece + n % 4


@built
def test_chapter16_bt_loads():
    """The three loads' words are the chapter's layout, and the wavefronts
    bankmap prints are those its JSON's addresses take (the most distinct
    words any bank is asked for): the spread load is conflict-free, the
    in-order one 2-way, the one without the swizzle 4-way."""
    names = [line.split()[0] for line in bankmap("--list").stdout.splitlines()]
    assert [name for name in names if name.startswith("ch16.")] == list(CH16_BT_LOADS)
    by_name = reports(*CH16_BT_LOADS)
    counted = {}
    for name, (spread, swizzled, wavefronts) in CH16_BT_LOADS.items():
        report = by_name[name]
        assert report["width_bytes"] == 4 and report["ideal_wavefronts"] == 1, name
        words = [int(lane["address"]) // 4 for lane in report["lanes"]]
        assert words == [ch16_bt_word(lane, spread, swizzled) for lane in range(32)], name
        assert [lane["bank"] for lane in report["lanes"]] == [w % 32 for w in words], name
        busiest = max(Counter(word % 32 for word in set(words)).values())
        assert busiest == report["wavefronts"] == wavefronts, name
        counted[name] = report["wavefronts"]
    assert counted["ch16.bt-load"] < counted["ch16.bt-load.in-order"] < counted[
        "ch16.bt-load.unswizzled"]
    # The three read the same rows; spread, the warp's columns are other ones.
    in_order, spread = by_name["ch16.bt-load.in-order"], by_name["ch16.bt-load"]
    assert {int(lane["address"]) // 4 // 32 for lane in in_order["lanes"]} == {0, 1, 2, 3}
    assert {int(lane["address"]) // 4 // 32 for lane in spread["lanes"]} == {0, 1, 2, 3}
    assert by_name["ch16.bt-load"]["what"] != by_name["ch16.bt-load.in-order"]["what"]


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
