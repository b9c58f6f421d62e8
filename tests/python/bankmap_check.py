"""Checks what bankmap and `transpose --banks` print against a bank model of
its own, written here from the rules in code/include/ladder/bank_model.hpp's
header comment (not from its code): CTest runs it (code/tools/CMakeLists.txt,
chapters/10-padding/exercise/CMakeLists.txt) and test_bankmap.py tests it.

    python3 bankmap_check.py json     BANKMAP    every named access, as JSON
    python3 bankmap_check.py text     BANKMAP    the same, as text
    python3 bankmap_check.py refuses  BANKMAP    a misaligned access: exit 2, one line
    python3 bankmap_check.py transpose TRANSPOSE the exercise's bank table

Exit 0 when everything agrees, 1 with one line per disagreement. Standard
library only: CTest runs it with the Python that configured the build.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

BANKS, BANK_BYTES = 32, 4
MISALIGNED = "bankmap: misaligned shared-memory access (CUDA faults on it)"


def model(addresses: list[int], width: int, active: list[bool] | None = None) -> dict:
    """Wavefronts of one access: phases of 128 bytes' worth of lanes; a phase
    takes as many wavefronts as its busiest bank has distinct words (a word
    asked for by several lanes is served once); the access, their sum."""
    active = active or [True] * len(addresses)
    per_phase = BANKS * BANK_BYTES // width
    phases = []
    for first in range(0, len(addresses), per_phase):
        lanes = range(first, min(first + per_phase, len(addresses)))
        words = {addresses[lane] // BANK_BYTES + w
                 for lane in lanes if active[lane] for w in range(width // BANK_BYTES)}
        per_bank = [0] * BANKS
        for word in words:
            per_bank[word % BANKS] += 1
        phases.append({"first_lane": first, "lanes": len(lanes),
                       "active_lanes": sum(active[lane] for lane in lanes),
                       "words_per_bank": per_bank, "wavefronts": max(per_bank)})
    wavefronts = sum(p["wavefronts"] for p in phases)
    ideal = sum(1 for p in phases if p["active_lanes"])
    return {"phases": phases, "wavefronts": wavefronts, "ideal_wavefronts": ideal,
            "conflict_degree": wavefronts / ideal if ideal else 0.0}


def check_report(report: dict) -> list[str]:
    """Disagreements between one bankmap JSON report and the model above."""
    name = report.get("name", "?")
    lanes = report["lanes"]
    if [lane["lane"] for lane in lanes] != list(range(len(lanes))):
        return [f"{name}: lanes are not numbered 0, 1, ..."]
    addresses = [lane["address"] for lane in lanes]
    active = [lane["active"] for lane in lanes]
    expected = model(addresses, report["width_bytes"], active)
    errors = []
    for lane in lanes:
        bank = (lane["address"] // BANK_BYTES) % BANKS if lane["active"] else -1
        if lane["bank"] != bank:
            errors.append(f"{name}: lane {lane['lane']} at byte {lane['address']} "
                          f"is in bank {bank}, not {lane['bank']}")
    for key in ("wavefronts", "ideal_wavefronts"):
        if report[key] != expected[key]:
            errors.append(f"{name}: {key} {report[key]}, the model gives {expected[key]}")
    if abs(report["conflict_degree"] - expected["conflict_degree"]) > 1e-9:
        errors.append(f"{name}: conflict degree {report['conflict_degree']}, "
                      f"the model gives {expected['conflict_degree']}")
    if report["phases"] != expected["phases"]:
        errors.append(f"{name}: phases differ from the model's: {report['phases']} "
                      f"against {expected['phases']}")
    return errors


def check_json(text: str, names: list[str]) -> list[str]:
    """`bankmap --all --json` against the names `bankmap --list` gives."""
    try:
        reports = json.loads(text)
    except json.JSONDecodeError as e:
        return [f"the JSON does not parse: {e}"]
    got = [r.get("name") for r in reports]
    errors = [] if got == names else [f"entries {got}, expected one per named access {names}"]
    for report in reports:
        errors += check_report(report)
    return errors


def check_text(text: str, reports: list[dict]) -> list[str]:
    """`bankmap --all` against the JSON reports: each access's block, with its
    summary line and its lanes' addresses, words and first banks."""
    errors = []
    for r in reports:
        start = text.find(f"{r['name']}: ")
        if start < 0 or (start > 0 and text[start - 1] != "\n"):
            errors.append(f"{r['name']}: no block in the text")
            continue
        block = text[start:].split("\n\n", 1)[0]
        summary = (f"{len(r['lanes'])} lanes, {r['width_bytes']}-byte access, group "
                   f"{r['group_size']}: {r['wavefronts']} wavefronts, ideal "
                   f"{r['ideal_wavefronts']}, conflict degree {r['conflict_degree']:.2f}")
        if summary not in block:
            errors.append(f"{r['name']}: the text lacks {summary!r}")
        for lane in r["lanes"]:
            if not lane["active"]:
                continue
            row = re.compile(rf"^\s+{lane['lane']}\s+{lane['address']}\s+"
                             rf"{lane['address'] // BANK_BYTES}\s+{lane['bank']}\b", re.M)
            if not row.search(block):
                errors.append(f"{r['name']}: no row for lane {lane['lane']} at {lane['address']}")
    return errors


# What chapter 10's page teaches: the unpadded tile's column read is 32-way,
# the padded and swizzled ones and every row write are conflict-free.
TRANSPOSE_EXPECTED = {"tiled_32x32": (1, 32), "tiled_32x33": (1, 1), "tiled_swizzled": (1, 1)}


def check_transpose(text: str) -> list[str]:
    """`transpose --banks`: per layout, the printed wavefronts of the tile write
    and read against the model on the printed addresses, and the banks."""
    errors = []
    blocks = re.findall(r"^(tiled_\w+) \(.*?\)\n(.*?)(?=^tiled_|\Z)", text, re.M | re.S)
    if [name for name, _ in blocks] != list(TRANSPOSE_EXPECTED):
        return [f"layouts {[name for name, _ in blocks]}, expected {list(TRANSPOSE_EXPECTED)}"]
    for name, block in blocks:
        printed = [int(n) for n in re.findall(r"(\d+) wavefront\(s\)", block)]
        rows = [list(map(int, m)) for m in
                re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", block, re.M)]
        if [row[0] for row in rows] != list(range(32)):
            errors.append(f"{name}: expected a row for each of 32 lanes")
            continue
        for lane, write, write_bank, read, read_bank in rows:
            for address, bank in ((write, write_bank), (read, read_bank)):
                if (address // BANK_BYTES) % BANKS != bank:
                    errors.append(f"{name}: lane {lane} at byte {address} is not in bank {bank}")
        computed = (model([r[1] for r in rows], 4)["wavefronts"],
                    model([r[3] for r in rows], 4)["wavefronts"])
        if tuple(printed) != computed:
            errors.append(f"{name}: prints {printed} wavefronts (write, read), "
                          f"the model gives {list(computed)}")
        if computed != TRANSPOSE_EXPECTED[name]:
            errors.append(f"{name}: {list(computed)} wavefronts (write, read), the page "
                          f"teaches {list(TRANSPOSE_EXPECTED[name])}")
    return errors


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("json", "text", "refuses", "transpose"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, binary = argv[1], argv[2]
    errors: list[str] = []
    if mode == "refuses":
        done = run(binary, "--stride", "130", "--width", "16")
        if done.returncode != 2:
            errors.append(f"exit code {done.returncode}, expected 2")
        if done.stderr != MISALIGNED + "\n":
            errors.append(f"stderr {done.stderr!r}, expected {MISALIGNED!r} on one line")
        if done.stdout:
            errors.append(f"printed {done.stdout!r} to stdout")
    elif mode == "transpose":
        done = run(binary, "--banks")
        errors = ([f"exit code {done.returncode}: {done.stderr.strip()}"] if done.returncode
                  else check_transpose(done.stdout))
    else:
        listed = run(binary, "--list")
        as_json = run(binary, "--all", "--json")
        for done in (listed, as_json):
            if done.returncode != 0:
                errors.append(f"{' '.join(done.args)}: exit code {done.returncode}")
        if not errors:
            names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
            errors = check_json(as_json.stdout, names)
            if mode == "text" and not errors:
                as_text = run(binary, "--all")
                errors = ([f"--all: exit code {as_text.returncode}"] if as_text.returncode
                          else check_text(as_text.stdout, json.loads(as_json.stdout)))
    for error in errors:
        print(error)
    print(f"bankmap_check {mode}: {'ok' if not errors else f'{len(errors)} disagreement(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
