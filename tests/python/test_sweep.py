"""The sweep command's CPU side: enumerating chapter 09's grid and building
its configurations, ranking results and picking the winner, and the winners
committed for chapters 09 and 12.

Enumerating and building need nvcc (the enumerator is a compiled program) but
no GPU; running the configurations is the GPU's part and is not tested here.
"""
import json
import random
import re
import shutil
import subprocess
import sys

import pytest

from common import ROOT, load_command


def needs_nvcc():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")

CHAPTER = "09-autotuning"
SWEEP = ROOT / "code" / "sweep.py"
KERNEL = ROOT / "chapters" / CHAPTER / "kernel.cuh"
PARAMETERS = list(json.loads((ROOT / "chapters" / CHAPTER / "sweep.json").read_text())
                  ["parameters"])
# 256 threads are 8 warps, but a 64 x 128 block tile holds only 2 x 2 warp
# tiles of 32 x 64: the threads do not match the tiles.
INVALID = dict(zip(PARAMETERS, [64, 128, 16, 32, 64, 2, 8, 4, 256, 1], strict=True))
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
    needs_nvcc()
    done = sweep(build_dir, "--list")
    assert done.returncode == 0, done.stdout + done.stderr
    return [parse(line) for line in done.stdout.splitlines() if not line.startswith("[sweep")]


@pytest.fixture(scope="module")
def every_point(build_dir) -> dict[str, str]:
    """Every grid point's label and its verdict, from --list --all."""
    needs_nvcc()
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
    assert dict(zip(PARAMETERS, values, strict=True)) in listed


def test_the_register_filters_keep_64_to_128_results_per_thread(listed):
    assert all(64 <= p["WM"] * p["WN"] / 32 <= 128 for p in listed)


def fastest_correct(configs: list[dict]) -> dict:
    """The test's own reading of "the winner": the correct, timed configuration
    with the most GFLOP/s, found by a plain scan."""
    best = None
    for c in configs:
        r = c["result"]
        faster = best is None or r["gflops"] > best["result"]["gflops"]
        if r["status"] == "correct" and "gflops" in r and faster:
            best = c
    return best


@pytest.mark.parametrize("chapter", ["09-autotuning", "12-final"])
def test_the_chapter_runs_the_winner_of_its_committed_sweeps(chapter):
    kernel = ROOT / "chapters" / chapter / "kernel.cuh"
    parameters = list(json.loads((ROOT / "chapters" / chapter / "sweep.json").read_text())
                      ["parameters"])
    chosen = re.search(r"using Chosen = Tiling<([\d, ]+)>;", kernel.read_text())
    assert chosen, f"{chapter}'s kernel.cu has no `using Chosen = Tiling<...>;`"
    values = [int(v) for v in chosen.group(1).split(",")]
    # The reference GPU's sweep decides; the book is written against it.
    reference = ROOT / "results" / "h200" / f"sweep-{chapter}.json"
    if not reference.is_file():
        pytest.skip(f"no committed H200 sweep of {chapter}")
    summary = json.loads(reference.read_text())
    winner = summary["winner"]
    assert dict(zip(parameters, values, strict=True)) == winner["params"]
    # ... and the recorded winner is the fastest correct configuration swept.
    best = fastest_correct(summary["configs"])
    assert best is not None
    assert winner["params"] == best["params"]
    assert winner["gflops"] == best["result"]["gflops"]


def config(n: int, status: str, gflops: float | None) -> dict:
    result = {"status": status}
    if gflops is not None:
        result["gflops"] = gflops
    return {"params": {"N": n}, "result": result}


def sweep_code():
    return load_command("sweep")


# The fastest entry is incorrect, the second fastest failed to build after
# printing a rate, one correct entry was not timed: none of them may win.
TRAPS = [config(1, "correct", 41000.0), config(2, "incorrect", 60000.0),
         config(3, "correct", 43500.5), config(4, "build failed", None),
         config(5, "run failed", 55000.0), config(6, "correct", None),
         config(7, "correct", 12.0), config(8, "correct", 43500.0)]


def test_an_incorrect_configuration_never_wins():
    sweep_module = sweep_code()
    assert sweep_module.pick_winner(TRAPS)["params"] == {"N": 3}
    ranked = sweep_module.rank(TRAPS)
    assert [c["params"]["N"] for c in ranked[:4]] == [3, 8, 1, 7]
    assert {c["params"]["N"] for c in ranked[4:]} == {2, 4, 5, 6}
    assert sweep_module.pick_winner([TRAPS[1], TRAPS[3]]) is None
    # Correct but never timed (the timing run failed): no rate, no winner.
    assert sweep_module.pick_winner([TRAPS[5], TRAPS[1]]) is None


@pytest.mark.parametrize("seed", range(5))
def test_the_winner_does_not_depend_on_the_order_of_the_results(seed):
    sweep_module = sweep_code()
    rng = random.Random(seed)
    configs = [config(n, rng.choice(["correct", "correct", "incorrect"]),
                      round(rng.uniform(1000, 50000), 1)) for n in range(40)]
    shuffled = configs[:]
    rng.shuffle(shuffled)
    expected = fastest_correct(configs)
    assert sweep_module.pick_winner(shuffled) is expected
    ranked = sweep_module.rank(shuffled)
    rates = [c["result"]["gflops"] for c in ranked if c["result"]["status"] == "correct"]
    assert rates == sorted(rates, reverse=True)
    assert ranked[0] is expected


def test_the_report_records_the_fastest_correct_configuration(tmp_path, monkeypatch, capsys):
    # report() as the sweep calls it, in a scratch tree: what it writes as the
    # winner, and the table it prints, put the fastest correct one first.
    sweep_module = sweep_code()
    monkeypatch.setattr(sweep_module, "ROOT", tmp_path)
    monkeypatch.setattr(sweep_module, "inputs",
                        lambda chapter: {f"chapters/{chapter}/kernel.cu": "0" * 64})
    source = tmp_path / "chapters" / "x" / "kernel.cu"
    source.parent.mkdir(parents=True)
    source.write_text("// a kernel\n// [chosen]\nusing Chosen = Tiling<1>;\n// [end]\n")
    configs = json.loads(json.dumps(TRAPS))
    for c in configs:
        c["result"]["pct_cublas"] = c["result"].get("gflops", 0.0) / 500.0
    configs[0]["result"]["provenance"] = {"gpu_slug": "test", "source": "chapters/x/kernel.cu"}
    code, out = sweep_module.report("x", {"parameters": {"N": [1]}, "filters": [],
                                          "config": "x::Tiling<{N}>"}, "4096", {}, configs)
    assert code == 1  # an incorrect and two failed configurations
    written = json.loads(out.read_text())
    assert written["winner"]["params"] == {"N": 3}
    assert written["winner"]["config"] == "x::Tiling<3>"
    assert written["configs"][0]["params"] == {"N": 3}
    assert "winner: x::Tiling<3>" in capsys.readouterr().out
    # What it was built from, with the [chosen] block left out.
    assert written["provenance"]["inputs"] == {"chapters/x/kernel.cu": "0" * 64}
    assert written["provenance"]["inputs_exclude"] == "chosen"


def test_commit_winner_rewrites_only_the_chosen_block(tmp_path):
    sweep_module = load_command("sweep")

    text = KERNEL.read_text()
    block = sweep_module.chosen_block(CHAPTER, "ch09::Tiling<1, 2, 3>", "Test GPU", "test")
    rewritten = sweep_module.replace_chosen(text, block)
    assert "using Chosen = Tiling<1, 2, 3>;" in rewritten
    assert "the winner of the sweep on the Test GPU" in rewritten
    assert "results/test/sweep-09-autotuning.json" in rewritten
    # Everything outside the block is untouched: the sweep's hash still matches.
    from ladder_tools import provenance

    assert provenance.without_chosen(rewritten) == provenance.without_chosen(text)
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
    source.write_text(f'#include "{KERNEL}"\n'
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


def test_filters_are_integer_arithmetic_as_in_cpp():
    sweep_module = sweep_code()
    params = {"WM": 32, "WN": 64, "NUM_THREADS": 96}
    # 32 * 64 / 96 is 21 in C++'s integer division, not 21.33.
    assert sweep_module.keeps("WM * WN / NUM_THREADS == 21", params)
    assert sweep_module.keeps("WM >= 32 && WN < 64 || NUM_THREADS % 32 == 0", params)
    assert not sweep_module.keeps("WM > 32 && WN == 64", params)
    for bad in ("__import__('os')", "WM ** 2 > 0", "UNKNOWN > 1", "WM > 1.5"):
        with pytest.raises(ValueError):
            sweep_module.keeps(bad, params)
