"""The sweep command's CPU side: enumerating chapter 09's grid and building its configurations.

These need nvcc (the enumerator is a compiled program) but no GPU; running
the configurations is the GPU's part and is not tested here.
"""
import json
import re
import shutil
import subprocess
import sys

import pytest

from common import ROOT

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")

CHAPTER = "09-autotuning"
SWEEP = ROOT / "code" / "sweep.py"
KERNEL = ROOT / "chapters" / CHAPTER / "kernel.cu"
PARAMETERS = list(json.loads((ROOT / "chapters" / CHAPTER / "sweep.json").read_text())
                  ["parameters"])
# 256 threads are 8 warps, but a 64 x 128 block tile holds only 2 x 2 warp
# tiles of 32 x 64: the threads do not match the tiles.
INVALID = dict(zip(PARAMETERS, [64, 128, 16, 32, 64, 2, 8, 4, 256, 1]))
INVALID_RULE = "there must be one warp per warp tile"


def sweep(build_dir, *args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SWEEP), CHAPTER, "--build-dir", str(build_dir),
                           "--arch", "sm_90", *args],
                          capture_output=True, text=True, timeout=timeout)


def label(params: dict) -> str:
    return " ".join(f"{name}={value}" for name, value in params.items())


def parse(line: str) -> dict:
    """The parameters of one line of --list output."""
    return {name: int(value) for name, value in re.findall(r"(\w+)=(\d+)", line)}


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("sweep")


@pytest.fixture(scope="module")
def listed(build_dir) -> list[dict]:
    done = sweep(build_dir, "--list")
    assert done.returncode == 0, done.stdout + done.stderr
    return [parse(line) for line in done.stdout.splitlines() if not line.startswith("[sweep")]


@pytest.fixture(scope="module")
def every_point(build_dir) -> dict[str, str]:
    """Every grid point's label and its verdict, from --list --all."""
    done = sweep(build_dir, "--list", "--all")
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts = {}
    for line in done.stdout.splitlines():
        if not line.startswith("[sweep"):
            params, verdict = line.split("  ", 1)
            verdicts[params] = verdict
    return verdicts


def test_list_yields_configurations(listed):
    # At most max_configs, which sweep.json sets to what one 10-minute device
    # command sweeps on an H200.
    cap = json.loads((ROOT / "chapters" / CHAPTER / "sweep.json").read_text())["max_configs"]
    assert 40 <= len(listed) <= cap
    assert all(list(params) == PARAMETERS for params in listed)
    assert len({label(p) for p in listed}) == len(listed), "a configuration is listed twice"


def test_every_tiling_is_listed_in_both_orders(listed):
    orders = {}
    for params in listed:
        sizes = tuple(v for name, v in params.items() if name != "SERPENTINE")
        orders.setdefault(sizes, set()).add(params["SERPENTINE"])
    assert all(found == {0, 1} for found in orders.values())


def test_the_chosen_configuration_is_one_the_sweep_runs(listed):
    chosen = re.search(r"using Chosen = Tiling<([\d, ]+)>;", KERNEL.read_text())
    assert chosen, "kernel.cu has no `using Chosen = Tiling<...>;`"
    values = [int(v) for v in chosen.group(1).split(",")]
    assert dict(zip(PARAMETERS, values)) in listed


def test_the_register_filters_keep_64_to_128_results_per_thread(listed):
    assert all(64 <= p["WM"] * p["WN"] / 32 <= 128 for p in listed)


def test_the_chapter_runs_the_winner_of_its_committed_sweeps():
    chosen = re.search(r"using Chosen = Tiling<([\d, ]+)>;", KERNEL.read_text())
    values = [int(v) for v in chosen.group(1).split(",")]
    # The reference GPU's sweep decides; the book is written against it.
    reference = ROOT / "results" / "h200" / f"sweep-{CHAPTER}.json"
    if not reference.is_file():
        pytest.skip("no committed H200 sweep of chapter 09")
    winner = json.loads(reference.read_text())["winner"]["params"]
    assert dict(zip(PARAMETERS, values)) == winner


def test_commit_winner_rewrites_only_the_chosen_block(tmp_path):
    sys.path.insert(0, str(ROOT / "code"))
    import sweep as sweep_module

    text = KERNEL.read_text()
    block = sweep_module.chosen_block(CHAPTER, "ch09::Tiling<1, 2, 3>", "Test GPU", "test")
    rewritten = sweep_module.replace_chosen(text, block)
    assert "using Chosen = Tiling<1, 2, 3>;" in rewritten
    assert "the winner of the sweep on the Test GPU" in rewritten
    assert "results/test/sweep-09-autotuning.json" in rewritten
    # Everything outside the block is untouched: the sweep's hash still matches.
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import ladder_data

    assert ladder_data.without_chosen(rewritten) == ladder_data.without_chosen(text)
    # Writing the same winner twice changes nothing.
    assert sweep_module.replace_chosen(rewritten, block) == rewritten


def test_a_sample_of_the_listed_configurations_compiles(build_dir, listed):
    # Two configurations, spread over the list, compiled side by side: about
    # 15 s; every configuration is built by the sweep itself on the GPU machine.
    done = sweep(build_dir, "--limit", "2", "--jobs", "2", "--no-run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(list((build_dir / CHAPTER / "bin").iterdir())) == 2


def test_the_enumerator_and_the_static_assert_give_the_same_rule(build_dir, every_point, tmp_path):
    assert every_point[label(INVALID)] == f"invalid: {INVALID_RULE}"
    source = tmp_path / "invalid.cu"
    source.write_text("#define LADDER_NO_MAIN\n"
                      f'#include "{KERNEL}"\n'
                      f"template struct ch09::Tiling<{', '.join(map(str, INVALID.values()))}>;\n")
    done = subprocess.run(["nvcc", "-std=c++17", "-arch=sm_90", "-I",
                           str(ROOT / "code" / "include"), "-c", str(source),
                           "-o", str(tmp_path / "invalid.o")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, "an invalid tiling compiled"
    assert INVALID_RULE in done.stdout + done.stderr


def test_every_valid_point_breaks_no_rule_and_every_other_one_names_its_rule(every_point):
    rules = set(re.findall(r'broken_rule\("([^"]+)"\)', KERNEL.read_text()))
    for params, verdict in every_point.items():
        if verdict.startswith("invalid: "):
            assert verdict.removeprefix("invalid: ") in rules, params
        else:
            assert verdict == "kept" or verdict.startswith("filtered: "), params


def test_the_chapters_gpu_test_sizes_suit_every_configuration_the_sweep_can_choose(listed):
    cmake = (ROOT / "chapters" / CHAPTER / "CMakeLists.txt").read_text()
    sizes = re.search(r"SIZES ([\dx ]+)\)", cmake).group(1).split()
    for size in sizes:
        m, n, k = (size.split("x") if "x" in size else [size] * 3)
        for p in listed:
            fits = int(m) % p["BM"] == 0 and int(n) % p["BN"] == 0 and int(k) % p["BK"] == 0
            assert fits, f"{size} does not suit {label(p)}"
