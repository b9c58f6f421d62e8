"""The book's analysis directives (code/ladder_tools/sphinx/ladder_analysis.py).

The pure tests call code/ladder_tools on synthetic dictionaries. The
build tests render scratch pages that use the directives, with sphinx-build
-W, against the chapters' binaries in the build folder and the synthetic
results under tests/fixtures/results/ (never shown in the real book). The
pages that read the same results and binaries are rendered together, in one
Sphinx run (each start of Sphinx, and its first read of each binary, takes
seconds): each test reads its own page, and the warnings Sphinx located in
it. They are skipped, with the reason, only when build/bin/bankmap or a
chapter binary they read is missing.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fixture_site
from ladder_tools import formatting, provenance, results
from ladder_tools.analysis import bankmap, kernels, mix
from ladder_tools.analysis.binaries import (
    BUILD_DIR_VARIABLE,
    AnalysisError,
    build_dir,
    chapter_folder,
    find_variant,
    require_binary,
    variant_of,
)
from ladder_tools.analysis.resources import (
    RESOURCES_HEADER,
    Launch,
    ReportedResources,
    agreement,
    arch_of_capability,
    computed_occupancy,
    kernel_resources,
    resources_rows,
)
from ladder_tools.results import issue, sweep_results, transpose
from ladder_tools.results.metrics import METRIC
from ladder_tools.results.ncu import (
    KernelCounters,
    entry_kernels,
    load_ncu,
    ncu_entry,
    ncu_header,
    ncu_row,
    parse_model,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FIXTURES = ROOT / "tests" / "fixtures" / "results"

# -- Kernel names ---------------------------------------------------------------

TEMPLATED = ("void ch08::sgemm_warptiled<ch08::Tiling<64, 128, 16> >"
             "(int, int, int, float, float const*, float const*, float, float*)")


def test_kernel_names_are_reduced_to_the_function():
    assert kernels.base_name(TEMPLATED) == "sgemm_warptiled"
    assert kernels.base_name("ch01::sgemm_naive(int, float*)") == "sgemm_naive"
    # ncu's spelling: no namespace, no return type, or a return type without one.
    assert kernels.base_name("sgemm_naive(int, const float *)") == "sgemm_naive"
    assert kernels.base_name("void sgemm_warptiled<Tiling<1, 2>>(int)") == "sgemm_warptiled"
    assert kernels.short_name(TEMPLATED) == "sgemm_warptiled<Tiling<64, 128, 16> >"
    enum = "void ch14::sgemm_mma<ch14::Tiling<128, 128>, (ch14::Path)0>(ladder::Gemm)"
    assert kernels.short_name(enum) == "sgemm_mma<Tiling<128, 128>, Path 0>"
    assert kernels.is_chapter_kernel(TEMPLATED)
    assert not kernels.is_chapter_kernel("ladder::fill_uniform(float*, unsigned long)")
    entries = [{"name": TEMPLATED}, {"name": "ladder::fill_uniform(float*)"},
               {"name": "ch08::sgemm_other(int)"}]
    assert kernels.select_kernels(entries, None) == [entries[0], entries[2]]
    assert kernels.select_kernels(entries, "other") == [entries[2]]


def test_a_missing_binary_says_how_to_build_it(tmp_path):
    with pytest.raises(AnalysisError, match=r"build the chapters first"):
        require_binary(tmp_path, "04-smem-tiling")


def test_the_build_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(BUILD_DIR_VARIABLE, raising=False)
    assert build_dir(tmp_path) == tmp_path / "build"
    monkeypatch.setenv(BUILD_DIR_VARIABLE, str(tmp_path / "other"))
    assert build_dir(tmp_path) == tmp_path / "other"


# -- From a result slug to its binary, variant and kernels -----------------------------


def test_a_result_slug_belongs_to_the_longest_chapter_folder_that_prefixes_it(tmp_path):
    for name in ("10-padding", "10-padding-rows-extra", "11-double-buffering"):
        (tmp_path / "chapters" / name).mkdir(parents=True)
        (tmp_path / "chapters" / name / "chapter.md").write_text("# x\n")
    assert chapter_folder(tmp_path, "10-padding") == "10-padding"
    assert chapter_folder(tmp_path, "10-padding-swizzled") == "10-padding"
    assert chapter_folder(tmp_path, "10-padding-rows-extra-b") == "10-padding-rows-extra"
    # A prefix counts only up to a dash: 10-paddingx is no variant of 10-padding.
    with pytest.raises(AnalysisError, match="no chapter folder"):
        chapter_folder(tmp_path, "10-paddingx")


DESCRIPTION = {"chapter": "10-padding", "variants": [
    {"name": "default", "slug": "10-padding", "kernel": {"name": "_Z1av"}},
    {"name": "rows", "slug": "10-padding-rows", "kernel": {"name": "_Z1bv"}}]}


def test_a_variant_is_the_one_whose_slug_is_the_result_name(tmp_path):
    assert variant_of(DESCRIPTION, "10-padding-rows", tmp_path)["name"] == "rows"
    with pytest.raises(AnalysisError, match=r"no variant '10-padding-x' .*10-padding, "
                                            r"10-padding-rows"):
        variant_of(DESCRIPTION, "10-padding-x", tmp_path)


def path_kernel(tiling: str, exact: str, aligned: str) -> dict:
    """A cuobjdump entry of one of chapter 12's paths of one tiling."""
    name = (f"void ch12::sgemm_warptiled<ch12::Tiling<{tiling}>, {exact}, {aligned}>"
            "(int, int, int, float, float const*, float const*, float, float*)")
    return {"name": name, "mangled": f"_Z{tiling}{exact}{aligned}".replace(", ", "_")}


# Chapter 12's binary: three paths of Chosen and three of Small, and the fill.
CHOSEN = [path_kernel("128, 256", *flags)
          for flags in (("true", "false"), ("true", "true"), ("false", "true"))]
SMALL = [path_kernel("64, 64", *flags)
         for flags in (("true", "false"), ("true", "true"), ("false", "true"))]
FILL = {"name": "ladder::fill_uniform(float*, unsigned long)", "mangled": "_Zfill"}


def test_a_variants_kernels_are_its_own_and_the_other_paths_of_its_tiling():
    entries = [FILL, *SMALL, *CHOSEN]
    default = {"slug": "12-final", "kernel": {"name": CHOSEN[0]["mangled"]}}
    assert kernels.variant_main_kernel(entries, default) == [CHOSEN[0]]
    assert kernels.variant_kernels(entries, default) == CHOSEN
    # :kernel: then picks among the variant's paths: the general path of Chosen.
    assert kernels.select_kernels(kernels.variant_kernels(entries, default),
                                  "false, true>") == [CHOSEN[2]]
    small = {"slug": "x", "kernel": {"name": SMALL[1]["mangled"]}}
    assert kernels.variant_kernels(entries, small) == SMALL
    # A kernel that is no template has no paths beside it.
    naive = {"name": "ch01::sgemm_naive(int)", "mangled": "_Znaive"}
    assert kernels.variant_kernels([naive, {**naive, "mangled": "_Zother"}],
                                   {"slug": "01-naive", "kernel": {"name": "_Znaive"}}) == [naive]
    with pytest.raises(AnalysisError, match="holds no kernel _Zabsent"):
        kernels.variant_kernels(entries, {"slug": "x", "kernel": {"name": "_Zabsent"}})


def test_the_first_template_argument_names_the_tiling():
    assert kernels.first_template_argument(CHOSEN[2]["name"]) == "ch12::Tiling<128, 256>"
    assert kernels.first_template_argument(TEMPLATED) == "ch08::Tiling<64, 128, 16>"
    assert kernels.first_template_argument("void f<3>(int)") == "3"
    assert kernels.first_template_argument("ch01::sgemm_naive(int, float*)") is None


# -- Formatting -----------------------------------------------------------------


def test_formatting():
    assert formatting.format_count(812) == "812"
    assert formatting.format_count(12345.0) == "12,345"
    assert formatting.format_count(2684354560.0) == "2.68 G"
    assert formatting.format_count(134217728.0) == "134 M"
    assert formatting.format_count(563435.0) == "563 k"
    assert formatting.format_bytes(512) == "512 B"
    assert formatting.format_bytes(8192) == "8 KiB"
    assert formatting.format_bytes(12800) == "12.5 KiB"
    assert formatting.format_difference(1.25, 1.0) == "+25.0%"
    assert formatting.format_difference(0.9, 1.0) == "-10.0%"
    assert formatting.format_difference(None, 1.0) == formatting.DASH
    assert formatting.format_difference(1.0, 0.0) == formatting.DASH
    assert formatting.format_ratio(None) == formatting.DASH


# -- Resources and occupancy ----------------------------------------------------

RESOURCE = {"name": "ch04::sgemm_smem_tiled(int, float*)", "mangled": "_Zsmem",
            "arch": "sm_90", "registers": 32,
            "shared_bytes": 8192, "local_bytes": 0, "stack_bytes": 0}


def reported(**overrides) -> ReportedResources:
    values = {"threads_per_block": 1024, "registers_per_thread": 32, "static_smem_bytes": 8192,
              "dynamic_smem_bytes": 0, "local_bytes_per_thread": 0, "blocks_per_sm": 2,
              "occupancy": 1.0}
    arch = overrides.pop("arch", "sm_90")
    values.update(overrides)
    return ReportedResources("Test GPU", arch, values, "_Zsmem")


def test_resources_rows_count_the_stack_as_spills():
    # ptxas puts spilled registers in the stack frame (cuobjdump's STACK), which
    # the GPU counts in localSizeBytes: the computed row must too.
    spilling = {**RESOURCE, "registers": 255, "stack_bytes": 352, "local_bytes": 8}
    (computed,) = resources_rows([spilling], Launch(128), [])
    assert computed[RESOURCES_HEADER.index("spills (local B/thread)")] == "360"


def test_resources_rows_compute_and_compare():
    rows = resources_rows([RESOURCE], Launch(1024), [reported()])
    computed, gpu = rows
    # 1024 threads of 32 registers: 2 blocks fill the SM's 64 warps and its registers.
    assert computed == ["sgemm_smem_tiled", "computed, sm_90", "1024", "32", "8 KiB", "0", "2",
                        "threads, registers", "100.0%", ""]
    assert gpu[1] == "reported by Test GPU" and gpu[-1] == "agrees"
    launch = Launch(1024)
    assert resources_rows([RESOURCE], launch, [reported(blocks_per_sm=1)])[1][-1] == (
        "differs")
    more_registers = reported(registers_per_thread=40)
    assert resources_rows([RESOURCE], launch, [more_registers])[1][-1] == "differs"


def test_a_gpu_row_goes_under_the_kernel_the_gpu_reported():
    other_path = {**RESOURCE, "name": "ch04::sgemm_other(int, float*)", "mangled": "_Zother"}
    rows = resources_rows([other_path, RESOURCE], Launch(1024), [reported()])
    assert [row[1] for row in rows] == ["computed, sm_90", "computed, sm_90",
                                        "reported by Test GPU"]
    assert rows[1][0] == "sgemm_smem_tiled"


def test_dynamic_shared_memory_counts_toward_occupancy():
    # 8 KiB static + 100 KiB dynamic (+ 1 KiB reserved) per block: 2 fit in 228 KiB.
    (row,) = resources_rows([RESOURCE], Launch(256, 100 * 1024), [])
    assert row[4] == "8 KiB + 100 KiB dynamic"
    assert row[6:8] == ["2", "shared memory"]


def test_resources_on_another_architecture_check_the_arithmetic_only():
    # An sm_86 build has its own registers; its blocks/SM is compared with
    # blocks_per_sm for what it reported: 1536 threads/SM hold 1 block of 1024.
    assert agreement(RESOURCE, computed_occupancy(RESOURCE, 1024),
                              reported(arch="sm_86", registers_per_thread=40,
                                       blocks_per_sm=1)) == "agrees"
    assert agreement(RESOURCE, computed_occupancy(RESOURCE, 1024),
                              reported(arch=None)) == "not comparable"
    assert arch_of_capability("9.0") == "sm_90"
    assert arch_of_capability("12.0") is None


def test_the_launch_is_the_one_describe_gives():
    variant = {"kernel": {"threads_per_block": 256, "dynamic_smem_bytes": 49408}}
    assert Launch.of(variant) == Launch(256, 49408)


# -- The K-loop mix ---------------------------------------------------------------

LOOP = {
    "instructions": 100, "ffma": 64, "ffma_share": 0.64, "barriers": 2,
    "shared_loads": {"32": 8, "128": 4}, "shared_stores": {"32": 2},
    "global_loads": {"128": 2}, "global_stores": {}, "async_copies": {},
    "by_opcode": {}, "start": "0x0100", "end": "0x0800", "inner_loops": [],
}


def test_mix_rows_and_categories_add_up():
    categories = mix.mix_categories(LOOP)
    assert categories == {"FFMA": 64, "shared loads": 12, "shared stores": 2,
                          "global loads": 2, "barriers": 2, "other": 18}
    assert sum(categories.values()) == LOOP["instructions"]
    rows = dict(mix.mix_rows(LOOP))
    assert rows["shared loads, 32-bit (LDS)"] == 8
    assert rows["shared loads, 128-bit (LDS.128)"] == 4
    assert rows["global loads, 128-bit (LDG.E.128)"] == 2
    assert rows["cp.async copies (LDGSTS)"] == 0
    assert rows["other"] == 18


def test_mix_rows_count_tensor_core_mma_only_where_there_are_some():
    assert mix.MMA_ROW not in dict(mix.mix_rows(LOOP))
    loop = {**copy.deepcopy(LOOP), "ffma": 0, "by_opcode": {"HMMA": 40, "LDS": 12}}
    rows = dict(mix.mix_rows(loop))
    assert rows[mix.MMA_ROW] == 40
    assert rows["other"] == 100 - 40 - 12 - 2 - 2 - 2
    assert sum(n for label, n in rows.items()
               if label not in ("instructions", mix.REUSE_ROW)) == loop["instructions"]


def test_mix_table_has_a_per_tile_column_when_counted():
    header, rows = mix.mix_table(LOOP)
    assert header == ["in the K-loop", "body", "share"]
    assert rows[1] == ["FFMA", "64", "64.0%"]
    loop = copy.deepcopy(LOOP)
    loop["per_k_tile"] = {**copy.deepcopy(LOOP), "inner_trips": 8, "instructions": 200,
                          "ffma": 128}
    header, rows = mix.mix_table(loop)
    assert header[3] == "per K-tile (inner loop \u00d7 8)"
    assert rows[1] == ["FFMA", "64", "64.0%", "128", "64.0%"]


def test_per_k_tile_sum_adds_up_from_the_loops_own_counts():
    assert mix.per_k_tile_sum(LOOP) == ""
    loop = copy.deepcopy(LOOP)
    loop["inner_loops"] = [{"instructions": 30}, {"instructions": 10}]
    loop["per_k_tile"] = {"inner_trips": 4, "instructions": 4 * 40 + 60}
    assert mix.per_k_tile_sum(loop) == (
        ", of 40 instructions, which the per-K-tile column counts 4 times and the rest of "
        "the body once: 4 \u00b7 40 + 60 = 220")


def test_pick_kernel_wants_exactly_one(tmp_path):
    results = [{"name": "ch09::sgemm_a<1>(int)"}, {"name": "ch09::sgemm_a<2>(int)"},
               {"name": "ladder::fill_uniform(float*)"}]
    with pytest.raises(AnalysisError, match="choose one with :kernel:"):
        kernels.pick_kernel(results, None, tmp_path)
    assert kernels.pick_kernel(results, "<2>", tmp_path) is results[1]
    with pytest.raises(AnalysisError, match="no sgemm_"):
        kernels.pick_kernel(results, "<3>", tmp_path)


# -- Bank maps -----------------------------------------------------------------


def test_bank_rows_and_summary():
    report = {"name": "x", "width_bytes": 8, "wavefronts": 4, "ideal_wavefronts": 2,
              "conflict_degree": 2.0,
              "lanes": [{"lane": i, "active": i != 3, "bank": (2 * i) % 32} for i in range(32)]}
    rows = bankmap.bank_rows(report)
    assert len(rows) == 4 and all(len(row) == 8 for row in rows)
    assert rows[0][:4] == ["0\u21920\u20131", "1\u21922\u20133", "2\u21924\u20135", "3: off"]
    assert bankmap.bank_summary(report) == "4 wavefronts, 2-way (ideal 2)"
    report["conflict_degree"] = 1.5
    assert bankmap.bank_summary(report) == "4 wavefronts, 1.50-way (ideal 2)"
    report.update(wavefronts=1, ideal_wavefronts=1, conflict_degree=1.0)
    assert bankmap.bank_summary(report) == "1 wavefront, 1-way (ideal 1)"


# -- ncu counters ----------------------------------------------------------------


def counters(**values) -> KernelCounters:
    metrics = {METRIC[key]: value for key, value in values.items()}
    return KernelCounters("sgemm_x(int)", metrics)


def test_ncu_ratios():
    kernel = counters(ld_instructions=100.0, ld_wavefronts=250.0, st_instructions=0.0,
                      st_wavefronts=0.0, global_requests=10.0, global_sectors=40.0)
    assert kernel.per_instruction("ld") == 2.5
    assert kernel.per_instruction("st") is None  # no store instruction: no ratio
    assert kernel.sectors_per_request == 4.0
    assert counters().sectors_per_request is None  # an older ncu.json without them


def test_ncu_row_with_a_model():
    kernel = counters(ld_instructions=100.0, ld_wavefronts=125.0, ld_conflicts=25.0,
                      st_instructions=10.0, st_wavefronts=10.0, st_conflicts=0.0)
    models = (True, False)
    top, bottom = ncu_header(models)
    row = ncu_row("04-x", kernel, 1.0, None, models)
    assert len(row) == len(bottom) == 2 + 6 + 4 + 1
    assert dict(zip(bottom[:8], row[:8], strict=True)) == {
        "chapter": "04-x", "kernel": "sgemm_x", "instructions": "100", "wavefronts": "125",
        "wavefronts/instr.": "1.25", "model": "1.00", "difference": "+25.0%",
        "bank conflicts": "25"}
    assert row[-1] == formatting.DASH
    assert top[2] == ("shared loads", 6)


def test_model_values_one_or_one_per_chapter():
    assert parse_model(None, 2) == [None, None]
    assert parse_model("1.0", 2) == [1.0, 1.0]
    assert parse_model("1.0 -", 2) == [1.0, None]
    with pytest.raises(AnalysisError):
        parse_model("1 2 3", 2)
    with pytest.raises(AnalysisError):
        parse_model("one", 1)
    # A name is the bank model's: resolve turns it into wavefronts.
    assert parse_model("ch04.a-load 2", 2, resolve=lambda name: 32) == [32.0, 2.0]


def test_ncu_fixture_reads():
    ncu = load_ncu(FIXTURES, "h200")
    entry = ncu_entry(ncu, "04-smem-tiling")
    (kernel,) = entry_kernels(entry)
    assert kernel.per_instruction("ld") == 1.25
    assert entry_kernels(ncu_entry(ncu, "06-2d-register-tiling")) == []
    assert ncu_entry(ncu, "transpose")["size"] == "4096"
    assert ncu_entry({"transpose": {"size": "1", "kernels": {}}}, "transpose")
    assert load_ncu(FIXTURES, "fake-gpu") is None


# -- The sweep ---------------------------------------------------------------------


def test_sweep_in_the_layout_of_code_sweep_py():
    sweep = sweep_results.load_sweep(FIXTURES, "h200", "09-autotuning")
    assert len(sweep.configs) == 14
    assert sweep.winner["params"] == {"BM": 128, "BN": 128, "BK": 16}
    assert sweep.median_gflops == 5650.0
    assert sweep.size == (4096, 4096, 4096)
    top = sweep.top()
    assert len(top) == 10 and top[0] is sweep.winner
    # The incorrect one was faster than the second, and is not ranked.
    assert all(config["correct"] for config in top)
    header, rows = sweep_results.sweep_rows(sweep)
    assert header == ["#", "BM", "BN", "BK", "GFLOP/s", "% of cuBLAS", "registers", "blocks/SM"]
    assert rows[0] == ["1 (fastest)", "128", "128", "16", "15,000", "75.0%", "128", "2"]
    assert rows[1][0] == "2"
    # The configuration a kernel file commits to is found and marked, also
    # when it is not the fastest.
    second = top[1]
    constants = {**second["params"], "STAGES": 2}  # --describe gives more than the sweep varies
    assert sweep_results.committed_config(sweep, constants) is second
    _, marked = sweep_results.sweep_rows(sweep, committed=second)
    assert marked[0][0] == "1 (fastest)" and marked[1][0] == "2 (committed)"
    assert sweep_results.committed_config(sweep, {"BM": 128, "BN": 128}) is None  # no BK
    assert sweep_results.committed_config(sweep, {"BM": 1, "BN": 1, "BK": 1}) is None  # not swept


def test_sweep_in_the_flat_layout():
    content = {"size": [1024, 1024, 1024], "configs": [
        {"params": {"BM": 64}, "correct": True, "gflops": 10.0, "registers": 90},
        {"params": {"BM": 128}, "correct": True, "gflops": 30.0},
        {"params": {"BM": 256}, "correct": False, "gflops": 99.0}]}
    sweep = sweep_results.parse_sweep(content, "flat")
    assert sweep.winner["params"] == {"BM": 128}  # no "winner": the fastest correct
    assert sweep.median_gflops == 20.0
    assert sweep.size == (1024, 1024, 1024)
    assert [c["params"]["BM"] for c in sweep.top()] == [128, 64]


def test_sweep_pairs_compare_configurations_that_differ_in_one_parameter():
    content = {"configs": [
        {"params": {"BM": 64, "S": 0}, "correct": True, "gflops": 10.0},
        {"params": {"BM": 64, "S": 1}, "correct": True, "gflops": 12.0},
        {"params": {"BM": 128, "S": 0}, "correct": True, "gflops": 20.0},
        {"params": {"BM": 128, "S": 1}, "correct": True, "gflops": 18.0},
        {"params": {"BM": 256, "S": 0}, "correct": True, "gflops": 30.0},
        {"params": {"BM": 256, "S": 1}, "correct": True, "gflops": 33.0},
        # Unpaired: its twin is incorrect, so it is left out.
        {"params": {"BM": 512, "S": 0}, "correct": True, "gflops": 40.0},
        {"params": {"BM": 512, "S": 1}, "correct": False, "gflops": 99.0}]}
    stats = sweep_results.sweep_pairs(sweep_results.parse_sweep(content, "pairs"), "S")
    assert (stats["low"], stats["high"], stats["pairs"], stats["high_wins"]) == (0, 1, 3, 2)
    assert stats["median"] == pytest.approx(1.1)
    assert stats["min"] == pytest.approx(0.9) and stats["max"] == pytest.approx(1.2)
    with pytest.raises(results.ResultsError, match="must take two values"):
        sweep_results.sweep_pairs(sweep_results.parse_sweep(content, "pairs"), "BM")
    # A sweep that did not vary the parameter (an older one) has no pairs.
    assert sweep_results.sweep_pairs(sweep_results.parse_sweep(content, "pairs"), "WN") is None


@pytest.mark.parametrize("content, message", [
    ({}, "configs is missing"),
    ({"configs": [{"correct": True}]}, r"configs\[0\]\.params is missing"),
    ({"configs": [{"params": {}}]}, r"configs\[0\]\.correct is missing"),
    ({"configs": [{"params": {}, "result": {}}]}, r"result\.status is missing"),
])
def test_bad_sweeps_are_errors(content, message):
    with pytest.raises(results.ResultsError, match=message):
        sweep_results.parse_sweep(content, "sweep.json")


# -- The transpose exercise ---------------------------------------------------------


def test_issue_kernels_pair_the_chapter_with_cublas():
    entry = {"kernels": {"void ch12::sgemm_warptiled<T>(int)": {"a": 1.0},
                         "sm80_xmma_gemm_f32": {"a": 2.0}}}
    (ours, _), (theirs, _) = issue.issue_kernels(entry)
    assert "sgemm_" in ours and theirs == "sm80_xmma_gemm_f32"
    assert issue.issue_kernels({"kernels": {"sgemm_a": {}, "sgemm_b": {}}}) is None
    assert issue.issue_kernels({"error": ["ncu failed"]}) is None


def test_issue_rows_compute_the_ffma_share_and_show_missing_metrics_as_dashes():
    ours = {"smsp__inst_executed.sum": 2.0e9,
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 57.6e9,
            "smsp__issue_active.avg.per_cycle_active": 0.84,
            "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 0.01}
    rows = {row[0]: row[1:] for row in issue.issue_rows(ours, {})}
    assert rows["FFMA share of the instructions (%)"] == ["90.0", formatting.DASH]
    assert rows["instructions issued per scheduler per cycle"] == ["0.84", formatting.DASH]
    assert rows["stall: waiting at __syncthreads() (barrier)"] == ["0.01", formatting.DASH]
    assert rows["time (ms)"] == [formatting.DASH, formatting.DASH]


def test_transpose_rows():
    content = transpose.load_transpose(FIXTURES, "h200")
    first, second = content["sizes"]
    rows = transpose.transpose_rows(first)
    assert [row[0] for row in rows] == ["copy", "naive", "tiled_32x32", "tiled_32x33",
                                        "tiled_swizzled", "cudaMemcpy"]
    assert rows[2] == ["tiled_32x32", "0.1200 [0.1188\u20130.1224]", "1,083", "39.6%", "yes"]
    assert rows[4][-1] == "NO (12 differ)"
    assert transpose.transpose_rows(second) == [["copy", "not timed", formatting.DASH,
                                                formatting.DASH, "yes"]]
    entry = ncu_entry(load_ncu(FIXTURES, "h200"), "transpose")
    counter_rows = transpose.transpose_counter_rows(entry, ["tiled_32x32", "tiled_32x33", "odd"])
    assert counter_rows[0] == ["tiled_32x32", "100", "3,200", "32.00", "3,100"]
    assert counter_rows[1][3] == "1.00"
    assert counter_rows[2] == ["odd"] + [formatting.DASH] * 4


def test_a_transpose_file_without_sizes_is_an_error(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "transpose.json").write_text('{"sizes": [{"rows": 1}]}')
    with pytest.raises(results.ResultsError, match="needs rows, cols and variants"):
        transpose.load_transpose(tmp_path, "h200")


# -- Scratch builds against the binaries -------------------------------------------

BUILD = Path(os.environ.get(BUILD_DIR_VARIABLE, ROOT / "build"))
NEEDED = ["bankmap", "01-naive", "04-smem-tiling", "08-warp-tiling", "10-padding",
          "11-double-buffering", "12-final"]


@pytest.fixture(scope="module")
def binaries() -> Path:
    missing = [name for name in NEEDED if not (BUILD / "bin" / name).is_file()]
    if missing:
        pytest.skip(f"not built in {BUILD}/bin: {', '.join(missing)} (cmake --build build)")
    return BUILD


@pytest.fixture(scope="module")
def sphinx_python() -> str:
    """An interpreter with Sphinx and MyST (the book's virtual environment)."""
    if importlib.util.find_spec("sphinx") and importlib.util.find_spec("myst_parser"):
        return sys.executable
    python = BUILD / "venv" / "bin" / "python"
    if not python.is_file():
        pytest.skip("no Python with Sphinx: run python3 docs/build_book.py --env-only")
    return str(python)


def results_copy(target: Path, resources: dict | None = None) -> Path:
    """The fixture site's results (the h200 ones fresh for the tree), and
    (when given) "resources" in the h200 result of 04-smem-tiling."""
    fixture_site.fixture_results(target)
    gpu = target / "h200"
    if resources is not None:
        source = ROOT / "chapters" / "04-smem-tiling" / "kernel.cu"
        result = json.loads((gpu / "chapters" / "01-naive.json").read_text())
        result.update(chapter="04-smem-tiling", resources=resources)
        result["provenance"].update(source="chapters/04-smem-tiling/kernel.cu",
                                    inputs=provenance.hash_files([source.relative_to(ROOT)]),
                                    compute_capability="9.0")
        (gpu / "chapters" / "04-smem-tiling.json").write_text(json.dumps(result))
    return target


def write_conf(source: Path) -> None:
    """A scratch project's conf.py: the book's extensions, nitpicky."""
    (source / "conf.py").write_text(
        "extensions = ['myst_parser', 'ladder_tools.sphinx.ladder_results',"
        " 'ladder_tools.sphinx.ladder_analysis']\n"
        f"ladder_repo_root = {str(ROOT)!r}\nnitpicky = True\n")


def build_page(python: str, tmp_path: Path, page: str, results: Path,
               build: Path) -> subprocess.CompletedProcess:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    write_conf(source)
    (source / "index.md").write_text(page)
    return subprocess.run(
        [python, "-m", "sphinx", "-E", "-W", "-n", "-q", "--no-color", "-b", "html", str(source),
         str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, LADDER_RESULTS_DIR=str(results),
                 **{BUILD_DIR_VARIABLE: str(build)}),
    )


def page_text(tmp_path: Path, page: str = "index") -> str:
    """The page's HTML, its figures' base64 removed, tags collapsed to spaces."""
    content = (tmp_path / "out" / f"{page}.html").read_text(encoding="utf-8")
    content = re.sub(r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+", "SVG", content)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content))


#: The line Sphinx ends a failed run with (its count of warnings), and the
#: start of a message of its own.
SPHINX_SUMMARY = "build finished with problems"
MESSAGE_LEVEL = re.compile(r"\b(WARNING|ERROR|CRITICAL|SEVERE):")


class PagesBuild:
    """Several scratch pages (name -> MyST source) rendered in one Sphinx
    run, with warnings as errors and every warning reported (--keep-going),
    into work/out/<name>.html. A page that fails leaves the others built;
    `warnings(name)` is what Sphinx reported of that page alone, so each
    test still sees its own page's failure, or its absence."""

    def __init__(self, python: str, work: Path, pages: dict[str, str], results: Path,
                 build: Path):
        self.work = work
        source = work / "src"
        source.mkdir(parents=True)
        write_conf(source)
        # Each page stands alone: in no toctree, and not warned about for it.
        (source / "index.md").write_text("# Scratch pages\n")
        for name, page in pages.items():
            (source / f"{name}.md").write_text(f"---\norphan: true\n---\n\n{page}")
        self.done = subprocess.run(
            [python, "-m", "sphinx", "-E", "-W", "--keep-going", "-n", "-q", "--no-color",
             "-b", "html", str(source), str(work / "out")],
            capture_output=True, text=True, timeout=600,
            env=dict(os.environ, LADDER_RESULTS_DIR=str(results),
                     **{BUILD_DIR_VARIABLE: str(build)}),
        )
        # What Sphinx printed, cut where a line names a page of this build;
        # a message that names none goes under "".
        self.reports: dict[str, list[str]] = {"": []}
        page = ""
        for line in self.done.stderr.splitlines():
            if line.startswith(str(source) + "/"):
                page = line[len(str(source)) + 1:].split(":")[0].removesuffix(".md")
            elif line.startswith(SPHINX_SUMMARY):
                continue
            elif MESSAGE_LEVEL.search(line):
                page = ""
            self.reports.setdefault(page, []).append(line)
        unknown = set(self.reports) - set(pages) - {"", "index"}
        assert not unknown, f"warnings about pages this build has not: {unknown}"

    def warnings(self, name: str) -> str:
        """What Sphinx reported of page `name`, and of no page at all."""
        return "\n".join(self.reports[""] + self.reports.get(name, []))

    def assert_built(self, name: str) -> None:
        """Page `name` rendered with no warning, as a build of it alone with -W
        would have: the run failed, if it did, for other pages' warnings."""
        assert self.warnings(name) == "" and "index" not in self.reports, self.done.stderr
        others = [page for page, lines in self.reports.items() if page != name and lines]
        assert self.done.returncode == 0 or others, self.done.stdout + self.done.stderr
        assert (self.work / "out" / f"{name}.html").is_file(), self.done.stderr

    def text(self, name: str) -> str:
        return page_text(self.work, name)


EVERY_DIRECTIVE = """# Scratch

```{ladder-resources} 04-smem-tiling
```

```{ladder-resources} 08-warp-tiling
```

```{ladder-sass} 08-warp-tiling
:kernel: sgemm_warptiled
```

```{ladder-mix-figure}
```

```{ladder-bankmap} transpose.32x32.tile-read
:figure:
```

```{ladder-bankmap}
:stride: 4
:width: 16
```

```{ladder-ncu} 01-naive 04-smem-tiling 06-2d-register-tiling
:predicted-ld: 1.0
```

```{ladder-ncu} 04-smem-tiling
:predicted-st: transpose.32x32.tile-read
```

```{ladder-sweep} 09-autotuning
```

```{ladder-transpose}
```

```{ladder-issue} 12-final
```
"""


def test_every_directive_renders(binaries, sphinx_python, tmp_path):
    source = ROOT / "chapters" / "04-smem-tiling" / "kernel.cu"
    assert source.is_file()
    resources = kernel_resources(binaries / "bin" / "04-smem-tiling")
    (kernel,) = kernels.select_kernels(resources, None)
    occ = computed_occupancy(kernel, 1024)
    measured = {"threads_per_block": 1024, "registers_per_thread": kernel["registers"],
                "static_smem_bytes": kernel["shared_bytes"], "dynamic_smem_bytes": 0,
                "local_bytes_per_thread": 0, "blocks_per_sm": occ["blocks_per_sm"],
                "occupancy": occ["occupancy"]}
    results = results_copy(tmp_path / "results", measured)
    done = build_page(sphinx_python, tmp_path, EVERY_DIRECTIVE, results, binaries)
    assert done.returncode == 0, done.stdout + done.stderr
    text = page_text(tmp_path)
    # Resources: the computation, then the GPU's report, which agrees.
    assert f"computed, sm_90 1024 {kernel['registers']}" in text
    assert "reported by Fixture GPU A (h200 folder)" in text and " agrees " in text
    # The K-loop mix of chapter 08.
    assert "in the K-loop body share" in text and "FFMA" in text
    assert "sgemm_warptiled" in text
    # Bank maps: the 32-way column, and the conflict-free 16-byte walk.
    assert "31\u21925" in text and "32 wavefronts, 32-way (ideal 1)" in text
    assert "4 wavefronts, 1-way (ideal 4)" in text
    # ncu: ratio, model and difference; a chapter with no counters says so.
    assert "1.25 1.00 +25.0%" in text
    assert "06-2d-register-tiling not measured" in text
    # A model named by its bankmap access: 32 wavefronts, against 4.00 measured.
    assert "4.00 32.00 -87.5%" in text
    # The sweep, the chosen configuration first; the transpose with its counters.
    assert "1 (fastest) 128 128 16 15,000" in text
    assert "tiled_32x32 100 3,200 32.00 3,100" in text
    # The issue profile: the fixture's FFMA shares (3.2e10 / 32 over 1e9 and
    # 1.25e9 instructions), issue rates and one stall row, chapter then cuBLAS.
    assert "FFMA share of the instructions (%) 100.0 80.0" in text
    assert "instructions issued per scheduler per cycle 0.80 0.90" in text
    assert "(dispatch stall) 0.40 0.10" in text
    assert "fixture_cublas_gemm_kernel" in text
    assert "Stale" not in text
    # The provenance lines: the date, no commit, binary or script; with no
    # appendix page in the build, the pointer to it is plain text.
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    lines = fixture_site.provenance_lines(html)
    assert len(lines) == 8, lines  # 2 resources, sass, 2 ncu, sweep, transpose, issue
    assert [(line, word) for line in lines for word in fixture_site.TOOL_TALK
            if word in line] == []
    assert all(line.endswith("The appendix says where these numbers come from.")
               for line in lines)
    assert "measured on or before 2000-01-01" in text and "measured 2000-01-01" in text
    # Every figure twice, light and dark: mix, bank map, sweep, and the
    # phone drawings of the mix and the sweep.
    assert html.count("only-light") == html.count("only-dark") == 5


MISSING_RESULTS = ("# Scratch\n\n```{ladder-ncu} 04-smem-tiling\n```\n\n"
                   "```{ladder-resources} 04-smem-tiling\n```\n\n"
                   "```{ladder-sweep} 09-autotuning\n```\n\n```{ladder-transpose}\n```\n")

BAD_INPUT = [
    ("```{ladder-sass} 99-absent\n```\n", "no chapter folder"),
    ("```{ladder-resources} 01-naive-nothing\n```\n", "has no variant '01-naive-nothing'"),
    ("```{ladder-bankmap} no.such.access\n```\n", "no access named 'no.such.access'"),
    ("```{ladder-bankmap}\n```\n", "give an access name"),
    ("```{ladder-bankgrid} ch09.a-store ch10.a-store\n:titles: unpadded\n```\n",
     ":titles: has 1 titles for 2 accesses"),
    ("```{ladder-sass} 04-smem-tiling\n:kernel: nothing\n```\n", "no sgemm_"),
]

BANK_GRID = ("# Scratch\n\n"
             "```{ladder-bankgrid} transpose.32x32.tile-read transpose.32x33.tile-read\n"
             ":titles: rows of 32 floats; rows of 33 floats\nLook at the *rows*.\n```\n")


@pytest.fixture(scope="module")
def no_results(binaries, sphinx_python, tmp_path_factory) -> PagesBuild:
    """The pages that read no results (the tests below), rendered together
    against the chapters' binaries: those that must build, and each bad
    input, which must fail its own page."""
    work = tmp_path_factory.mktemp("no-results")
    empty = work / "results"
    empty.mkdir()
    pages = {"missing": MISSING_RESULTS, "bankgrid": BANK_GRID, "variants": VARIANTS}
    pages.update({f"bad{index}": "# Scratch\n\n" + page
                  for index, (page, _) in enumerate(BAD_INPUT)})
    return PagesBuild(sphinx_python, work, pages, empty, binaries)


def test_missing_results_are_notes(no_results):
    no_results.assert_built("missing")
    text = no_results.text("missing")
    assert text.count("Not measured yet") == 2 and "Not swept yet" in text
    # Without a result, the launch is the one the binary describes.
    assert "computed, sm_90 1024" in text
    assert "dynamic shared memory that 04-smem-tiling launches the kernel with" in text


@pytest.mark.parametrize("index", range(len(BAD_INPUT)),
                         ids=[message for _, message in BAD_INPUT])
def test_bad_input_fails_the_build(no_results, index):
    message = BAD_INPUT[index][1]
    assert no_results.done.returncode != 0
    assert message in no_results.warnings(f"bad{index}")


def test_the_bank_grid_renders_its_panels_and_caption(no_results):
    no_results.assert_built("bankgrid")
    html = (no_results.work / "out" / "bankgrid.html").read_text(encoding="utf-8")
    assert html.count('alt="Bank grids') == 2  # the light drawing and the dark
    assert "ladder-scroll" in html and "<em>rows</em>" in html
    assert ("rows of 32 floats: 32 wavefronts (1 of the 32 banks used, 1 of them conflicted); "
            "rows of 33 floats: 1 wavefront (32 of the 32 banks used") in html


VARIANTS = """# Scratch

```{ladder-sass} 10-padding-swizzled
```

```{ladder-resources} 11-double-buffering-rows
```

```{ladder-resources} 12-final-unpadded
:kernel: false, true>
```
"""


def test_result_slugs_pick_the_binary_its_variant_and_the_launch(no_results):
    no_results.assert_built("variants")
    text = no_results.text("variants")
    # The swizzled variant's own kernel (its A layout is 1), named by its
    # result's slug, not by the binary it is in.
    assert "ALayout 1" in text and "ALayout 0" not in text
    assert " in 10-padding-swizzled, sm_90 SASS: static counts" in text
    # Chapter 11's dynamic shared memory and chapter 12's, as --describe gives them.
    assert "0 B + 24.2 KiB dynamic" in text
    assert "dynamic shared memory that 11-double-buffering-rows launches the kernel" in text
    # One general path: the unpadded variant's (rows of BM floats: 48 KiB of
    # As and Bs), not the padded or the swizzled layout's too.
    assert text.count("computed, sm_90 256") == 1 and "0 B + 48 KiB dynamic" in text


def test_the_resources_table_states_the_workspace(binaries, sphinx_python, tmp_path):
    # Chapter 13 asks the harness for a workspace (its --describe says so);
    # the table states the largest a result recorded, and where. Chapter 12
    # asks for none.
    _, variant = find_variant(ROOT, binaries, "13-tail")
    assert variant["workspace"] is True
    _, plain = find_variant(ROOT, binaries, "12-final")
    assert plain["workspace"] is False
    measured = tmp_path / "results"
    real = ROOT / "results" / "h200" / "chapters" / "13-tail.json"
    data = json.loads(real.read_text())
    for entry in data["sizes"]:
        entry.pop("workspace_bytes", None)
    data["sizes"][1]["workspace_bytes"] = 3 * 2**20
    data["sizes"][2]["workspace_bytes"] = 5 * 2**20
    (measured / "h200" / "chapters").mkdir(parents=True)
    (measured / "h200" / "chapters" / "13-tail.json").write_text(json.dumps(data))
    page = ("# Scratch\n\n```{ladder-resources} 13-tail\n```\n\n"
            "```{ladder-resources} 12-final\n```\n")
    done = build_page(sphinx_python, tmp_path, page, measured, binaries)
    assert done.returncode == 0, done.stdout + done.stderr
    text = page_text(tmp_path)
    assert text.count("asks the harness for a workspace") == 1
    big = data["sizes"][2]
    said = (f"2 of the {len(data['sizes'])} measured sizes used one, the largest 5.0 MiB "
            f"({5 * 2**20:,} bytes) at {big['M']} × {big['N']} × {big['K']}")
    assert said in " ".join(text.split())


def test_describe_finds_the_variant_of_a_result(binaries):
    path, variant = find_variant(ROOT, binaries, "10-padding-rows")
    assert path == binaries / "bin" / "10-padding" and variant["name"] == "rows"
    assert variant["kernel"]["threads_per_block"] == 128


def test_a_missing_build_folder_fails_the_build(sphinx_python, tmp_path):
    empty = tmp_path / "results"
    empty.mkdir()
    page = "# Scratch\n\n```{ladder-mix-figure}\n```\n"
    done = build_page(sphinx_python, tmp_path, page, empty, tmp_path / "no-build")
    assert done.returncode != 0
    assert "no chapter binary" in done.stderr


def test_a_stale_sweep_or_transpose_is_marked_and_reported(binaries, sphinx_python, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(FIXTURES, results)  # their source hashes are zeros: stale
    page = "# Scratch\n\n```{ladder-sweep} 09-autotuning\n```\n\n```{ladder-transpose}\n```\n"
    done = build_page(sphinx_python, tmp_path, page, results, binaries)
    assert done.returncode == 0, done.stdout + done.stderr
    text = page_text(tmp_path)
    assert "Stale sweep" in text and "Stale result" in text
    report = json.loads((tmp_path / "out" / "ladder-stale.json").read_text())
    assert sorted(Path(r["file"]).name for r in report) == [
        "sweep-09-autotuning.json", "transpose.json"]


def test_a_part_ii_results_table_adds_the_percent_of_cublas_on_tf32():
    import ladder_tools.sphinx.ladder_results as ladder_results
    entry = {"M": 512, "N": 512, "K": 512, "correct": True, "max_rel_err": 1e-3,
             "time_ms": {"median": 0.012, "min": 0.0118, "max": 0.0121},
             "gflops": 22370.0, "cublas_gflops": 16455.0, "pct_cublas": 135.9}
    part_i = ladder_results._results_row(entry)
    assert not ladder_results._has_tf32([entry])
    assert len(part_i) == len(ladder_results._results_header(False))
    part_ii = {**entry, "pct_cublas_tf32": 75.9}
    assert ladder_results._has_tf32([entry, part_ii])
    header = ladder_results._results_header(True)
    row = ladder_results._results_row(part_ii, True)
    assert len(row) == len(header)
    column = header.index(ladder_results.TF32_COLUMN)
    assert header[column - 1] == "% of cuBLAS"
    assert row[column] == formatting.format_percent(75.9) != part_i[column]
    # A size of such a result without the TF32 time shows a dash there.
    assert ladder_results._results_row(entry, True)[column] == ladder_results.DASH
