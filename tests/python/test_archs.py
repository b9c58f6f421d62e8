"""Which GPUs run each chapter: the archs tool's table (ladder/arch.hpp)
against the limits GPUs reported when they were measured, and the rule of
ladder_tools.analysis.archs against the chapters' --describe: a chapter whose
launcher does not pick a variant (all but 14 and 15) must fit every
architecture that builds it, for its runner would otherwise stop on CUDA's
error instead of refusing in one line."""
from __future__ import annotations

import json
import subprocess

import pytest

import arch_compile
from common import ROOT
from ladder_tools import results
from ladder_tools.analysis import archs


@pytest.fixture(scope="module")
def table(build_dir) -> dict:
    tool = build_dir / "bin" / "archs"
    if not tool.is_file():
        pytest.skip(f"{tool} is not built")
    return json.loads(subprocess.run([str(tool)], check=True, capture_output=True,
                                     text=True).stdout)


def describe(build_dir, slug: str) -> dict:
    binary = build_dir / "bin" / slug
    if not binary.is_file():
        pytest.skip(f"{binary} is not built")
    done = subprocess.run([str(binary), "--describe"], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout)


def variant(name: str, smem: int, threads: int = 256) -> dict:
    return {"name": name, "kernel": {"dynamic_smem_bytes": smem, "threads_per_block": threads}}


TOY_TABLE = {
    "archs": [
        {"cc": 75, "gpus": "old", "smem_per_block_optin": 65536, "max_threads_per_block": 1024,
         "has": {"nothing": True, "tf32-mma": False, "sm90a-only": False}},
        {"cc": 86, "gpus": "small", "smem_per_block_optin": 101376,
         "max_threads_per_block": 1024,
         "has": {"nothing": True, "tf32-mma": True, "sm90a-only": False}},
        {"cc": 90, "gpus": "big", "smem_per_block_optin": 232448, "max_threads_per_block": 1024,
         "has": {"nothing": True, "tf32-mma": True, "sm90a-only": True}},
    ],
    "chapter_needs": {"14-tf32": "tf32-mma", "15-3xtf32": "tf32-mma"},
}


def test_the_rule_on_a_made_up_table():
    picking = {"chapter": "14-tf32",
               "variants": [variant("default", 107520), variant("small", 98304)]}
    found = {v.cc: v for v in archs.verdicts(TOY_TABLE, picking)}
    assert found[75].runs is None and found[75].why.startswith("not built")
    assert found[86].runs == "small" and "107,520" in found[86].why
    assert found[90].runs == "default"
    # The same sizes in a chapter whose launcher does not pick: refused.
    fixed = {"chapter": "15-3xtf32",
             "variants": [variant("default", 107520), variant("other", 120000)]}
    found = {v.cc: v for v in archs.verdicts(TOY_TABLE, fixed)}
    assert found[86].runs is None and found[86].why.startswith("refused")
    # Threads count too.
    wide = {"chapter": "01-naive", "variants": [variant("default", 0, threads=2048)]}
    assert all(v.runs is None for v in archs.verdicts(TOY_TABLE, wide))


def test_the_table_agrees_with_the_gpus_measured(table):
    """Every GPU with results reported its compute capability and the shared
    memory a block may ask for; the table's entry for that architecture must
    say the same."""
    by_cc = {a["cc"]: a for a in table["archs"]}
    root = results.results_root(ROOT)
    checked = 0
    for gpu in results.gpu_folders(root):
        for path in sorted((root / gpu / "chapters").glob("*.json"))[:1]:
            provenance = json.loads(path.read_text())["provenance"]
            major, minor = provenance["compute_capability"].split(".")
            entry = by_cc[10 * int(major) + int(minor)]
            assert entry["smem_per_block_optin"] == provenance["smem_per_block_optin"], gpu
            checked += 1
    assert checked, "no GPU has results to check the table against"


def test_the_table_names_what_the_readme_claims(table):
    ccs = [a["cc"] for a in table["archs"]]
    assert ccs == sorted(ccs) and ccs[0] == 75 and ccs[-1] == 120
    assert set(table["chapter_needs"].values()) <= set(archs.NEEDS_WORDS)


@pytest.mark.parametrize("slug", results.chapter_slugs(ROOT))
def test_a_chapter_runs_where_it_is_built(table, build_dir, slug):
    """Where an architecture builds a chapter, a variant runs or the
    launcher refuses in one line; a chapter without that launcher must fit
    with every variant."""
    description = describe(build_dir, slug)
    for verdict in archs.verdicts(table, description):
        if verdict.why.startswith("not built"):
            continue
        if slug not in archs.FITTING_CHAPTERS:
            arch = next(a for a in table["archs"] if a["cc"] == verdict.cc)
            misfits = [v["name"] for v in description["variants"] if archs.why_not(arch, v)]
            assert not misfits, f"{slug} on {verdict.arch}: {misfits} do not fit"


def test_chapter_14_runs_its_unpadded_tiling_on_99_kib(table, build_dir):
    """The variant the page names for an RTX 30, 40 or 50 is the one the
    launcher's GPU test expects (gpu.14-tf32.99kib)."""
    found = {v.cc: v for v in archs.verdicts(table, describe(build_dir, "14-tf32"))}
    assert [found[cc].runs for cc in (80, 86, 89, 90, 120)] == [
        "default", "unpadded", "unpadded", "default", "unpadded"]
    text = (ROOT / "chapters/14-tf32/CMakeLists.txt").read_text()
    assert "running the variant unpadded" in text


# -- The compile that stands for others (tests/python/arch_compile.py) -------------------

def test_the_chapters_ask_the_architecture_nothing_but_8_0_and_sm_90a():
    assert arch_compile.arch_tests_beyond(ROOT) == []


def test_a_new_question_to_the_architecture_is_found(tmp_path):
    kernel = tmp_path / "chapters" / "99-new" / "kernel.cuh"
    kernel.parent.mkdir(parents=True)
    lines = ["#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  // allowed",
             "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800  // allowed",
             "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)  // allowed",
             "#if __CUDA_ARCH__ >= 890  // FP8 conversions",
             "#if __CUDA_ARCH__ == 800",
             "#if __CUDA_ARCH__ > 800",
             "#if 860 <= __CUDA_ARCH__",
             "#if (__CUDA_ARCH__) >= 800",
             "#if __CUDA_ARCH__ >= 800 + 60",
             "#define ARCH __CUDA_ARCH__",
             "#if defined(__CUDA_ARCH__) && \\",
             "    __CUDA_ARCH__ >= 860",
             "NV_IF_TARGET(NV_PROVIDES_SM_86, (x();))",
             "NV_DISPATCH_TARGET(NV_IS_EXACTLY_SM_86, (y();))",
             "#ifdef __CUDA_ARCH_SPECIFIC__"]
    kernel.write_text("\n".join(lines) + "\n")
    found = arch_compile.arch_tests_beyond(tmp_path)
    assert [int(line.split(":")[1]) for line in found] == [4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15]


def test_sm_80_stands_for_the_architectures_below_sm_90_with_its_instructions():
    table = {"archs": [{"cc": 75, "has": {"tf32-mma": False}},
                       {"cc": 80, "has": {"tf32-mma": True}},
                       {"cc": 86, "has": {"tf32-mma": True}},
                       {"cc": 89, "has": {"tf32-mma": False}},
                       {"cc": 90, "has": {"tf32-mma": True}}]}
    covered, refusals = arch_compile.stood_for(table, 80)
    assert covered == [86, 89]
    assert len(refusals) == 1 and refusals[0].startswith("sm_89:")
    assert arch_compile.stood_for(table, 75) == ([], [])


def test_sm_80_stands_for_sm_86_and_sm_89_in_the_table(table):
    covered, refusals = arch_compile.stood_for(table, 80)
    assert covered == [86, 89] and refusals == []
