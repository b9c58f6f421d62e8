"""Tests of code/ladder_tools/analysis/sass_mix.py on SASS that nvcc really produces.

Small kernels are compiled for sm_90 into a temporary folder; each is built
so that its loop must contain a known kind of instruction. Skipped when nvcc
or cuobjdump is missing (never passed without running).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ladder_tools.analysis import sass_mix

REPO = Path(__file__).resolve().parents[2]

# Each kernel is written so that the compiler has no choice about the
# instruction under test; the comment says why.
KERNELS = r"""
// The loop reads one float4 of shared memory per step and uses all four
// components: one LDS.128 per step (unrolled, several per loop body).
__global__ void float4_loop(const float4* in, float* out, int n) {
  __shared__ float4 tile[256];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) {
    const float4 v = tile[(threadIdx.x + k) & 255];
    acc = fmaf(v.x, v.y, acc);
    acc = fmaf(v.z, v.w, acc);
  }
  out[threadIdx.x] = acc;
}

// The loop reads single floats whose neighbours it never uses, stores one
// float, and synchronizes: 32-bit LDS and STS and a barrier in the loop.
__global__ void scalar_loop(const float* in, float* out, int n) {
  __shared__ float tile[1024];
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) {
    tile[threadIdx.x] = in[k * blockDim.x + threadIdx.x];
    __syncthreads();
    acc = fmaf(tile[(threadIdx.x * 33 + k) & 1023], acc, 1.0f);
    __syncthreads();
  }
  out[threadIdx.x] = acc;
}

// A K-loop whose dot-product loop stays a loop (unroll 1), between two
// barriers: the K-loop must be the outer loop (as many FFMA, and wider).
__global__ void nested_loop(const float* in, float* out, int n) {
  __shared__ float tile[256];
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) {
    tile[threadIdx.x] = in[k * 256 + threadIdx.x];
    __syncthreads();
#pragma unroll 1
    for (int d = 0; d < 16; ++d) acc = fmaf(tile[(threadIdx.x + d) & 255], acc, 1.0f);
    __syncthreads();
  }
  out[threadIdx.x] = acc;
}

// No loop at all.
__global__ void no_loop(float* out) { out[threadIdx.x] = 2.0f * out[threadIdx.x] + 1.0f; }

// Eight FFMAs in a row share their first operand `a` (each into its own
// result): ptxas marks `a` .reuse on all but the last of them.
__global__ void reuse_loop(const float* in, float* out, int n) {
  float b[8];
  float acc[8] = {};
#pragma unroll
  for (int j = 0; j < 8; ++j) b[j] = in[8 * threadIdx.x + j];
  for (int k = 0; k < n; ++k) {
    const float a = in[4096 + k];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = fmaf(a, b[j], acc[j]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j) sum += acc[j];
  out[threadIdx.x] = sum;
}

// Four consecutive floats of a row of a shared tile with rows of STRIDE
// floats; the row is data-dependent, so the compiler knows only what STRIDE
// tells it about alignment. STRIDE = 128: every row starts 16-byte aligned
// (512 bytes apart), so the four floats can be one LDS.128. STRIDE = 130:
// rows start 520 bytes apart, 8-byte aligned only, so two LDS.64.
template <int STRIDE>
__global__ void padded_row_read(const float* in, const int* rows, float* out, int n) {
  __shared__ float tile[16 * STRIDE];
  for (int i = threadIdx.x; i < 16 * STRIDE; i += blockDim.x) tile[i] = in[i];
  __syncthreads();
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) {
    const float* row = &tile[(rows[k] & 15) * STRIDE + 4 * (threadIdx.x % 32)];
    acc = fmaf(row[0], row[1], acc);
    acc = fmaf(row[2], row[3], acc);
  }
  out[threadIdx.x] = acc;
}
template __global__ void padded_row_read<128>(const float*, const int*, float*, int);
template __global__ void padded_row_read<130>(const float*, const int*, float*, int);
"""


def _tools_missing() -> str | None:
    if shutil.which("nvcc") is None:
        return "nvcc not found"
    if sass_mix.find_cuobjdump() is None:
        return "cuobjdump not found"
    return None


pytestmark = pytest.mark.skipif(_tools_missing() is not None, reason=str(_tools_missing()))


@pytest.fixture(scope="module")
def cubin(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("sass")
    source = folder / "kernels.cu"
    source.write_text(KERNELS)
    out = folder / "kernels.cubin"
    subprocess.run(
        ["nvcc", "-arch=sm_90", "-cubin", "-O3", "-o", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="module")
def results(cubin) -> dict[str, dict]:
    by_name = {}
    for r in sass_mix.analyze_binary(cubin):
        by_name[r["name"].split("(")[0].replace("void ", "")] = r
    return by_name


def test_finds_every_kernel_and_demangles(results):
    assert set(results) == {
        "float4_loop",
        "scalar_loop",
        "nested_loop",
        "no_loop",
        "reuse_loop",
        "padded_row_read<128>",
        "padded_row_read<130>",
    }
    assert all(r["arch"] == "sm_90" for r in results.values())


def test_float4_loop_has_128_bit_shared_loads_and_ffma(results):
    loop = results["float4_loop"]["loop"]
    assert loop is not None
    assert loop["ffma"] > 0
    assert set(loop["shared_loads"]) == {"128"}
    # Two FFMA per float4 read: the compiler cannot fuse or drop either.
    assert loop["ffma"] == 2 * loop["shared_loads"]["128"]
    # The store into the tile and the barrier come before the loop.
    assert loop["barriers"] == 0
    assert results["float4_loop"]["kernel"]["shared_stores"] == {"128": 1}
    assert results["float4_loop"]["kernel"]["barriers"] == 1


def test_scalar_loop_has_32_bit_accesses_and_barriers(results):
    loop = results["scalar_loop"]["loop"]
    assert loop is not None
    assert set(loop["shared_loads"]) == {"32"}
    assert set(loop["shared_stores"]) == {"32"}
    assert set(loop["global_loads"]) == {"32"}
    assert loop["barriers"] >= 2
    assert loop["barriers"] == loop["by_opcode"]["BAR"]


def test_k_loop_is_the_outer_loop_and_inner_loops_are_weighted(cubin, results):
    loop = results["nested_loop"]["loop"]
    assert loop["barriers"] == 2  # the outer loop, not the dot-product loop alone
    assert len(loop["inner_loops"]) == 1
    inner = loop["inner_loops"][0]
    assert inner["ffma"] == loop["ffma"] > 0  # every FFMA is in the inner loop
    assert inner["barriers"] == 0
    assert "per_k_tile" not in loop  # only with a trip count
    [weighted] = sass_mix.analyze_binary(cubin, kernel="nested_loop", inner_trips=16)
    per_tile = weighted["loop"]["per_k_tile"]
    # One trip of the K-loop runs its own instructions once and the inner
    # loop's 16 times.
    assert per_tile["ffma"] == 16 * inner["ffma"]
    assert per_tile["instructions"] == loop["instructions"] + 15 * inner["instructions"]
    assert per_tile["barriers"] == 2


def test_ffma_sharing_an_operand_read_it_from_the_reuse_cache(results):
    """reuse_loop's FFMAs share `a`; float4_loop's share no source register."""
    shared = results["reuse_loop"]["loop"]
    assert shared["ffma"] >= 8
    assert 0 < shared["ffma_reuse"] < shared["ffma"]
    chained = results["float4_loop"]["loop"]
    assert chained["ffma"] > 0 and chained["ffma_reuse"] == 0


def test_kernel_without_loop_has_no_loop(results):
    r = results["no_loop"]
    assert r["loop"] is None
    assert r["kernel"]["instructions"] > 0
    assert "NOP" not in r["kernel"]["by_opcode"]  # the padding after the end is not code


def test_padding_to_130_floats_turns_lds128_into_lds64(results):
    aligned = results["padded_row_read<128>"]["loop"]
    padded = results["padded_row_read<130>"]["loop"]
    assert set(aligned["shared_loads"]) == {"128"}
    assert set(padded["shared_loads"]) == {"64"}
    # The same floats are read, half as many bytes per instruction.
    assert padded["shared_loads"]["64"] == 2 * aligned["shared_loads"]["128"]


def test_counts_add_up(results):
    for r in results.values():
        for counts in (r["kernel"], r["loop"]):
            if counts is None:
                continue
            assert sum(counts["by_opcode"].values()) == counts["instructions"]
            assert counts["ffma"] == counts["by_opcode"].get("FFMA", 0)
            expected_share = counts["ffma"] / counts["instructions"]
            assert counts["ffma_share"] == pytest.approx(expected_share)
    loop, kernel = results["float4_loop"]["loop"], results["float4_loop"]["kernel"]
    assert loop["instructions"] < kernel["instructions"]


def test_saved_dump_gives_the_same_counts(cubin, tmp_path, results):
    dump = tmp_path / "kernels.sass"
    dump.write_text(sass_mix.run_cuobjdump(cubin, "-sass"))
    from_dump = sass_mix.analyze_binary(dump, kernel="scalar_loop")
    assert len(from_dump) == 1
    assert from_dump[0] == results["scalar_loop"]


def test_command_line_prints_json(cubin):
    done = subprocess.run(
        [sys.executable, "-m", "ladder_tools.cli.sass_mix", str(cubin), "--kernel",
         "float4_loop", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    printed = json.loads(done.stdout)
    assert [r["name"].split("(")[0] for r in printed] == ["float4_loop"]


def _chapter_binary(slug: str) -> Path | None:
    build = Path(os.environ.get("LADDER_BUILD_DIR", REPO / "build"))
    binary = build / "bin" / slug
    return binary if binary.is_file() else None


@pytest.mark.skipif(_chapter_binary("01-naive") is None, reason="chapter 01 is not built")
def test_chapter_01_k_loop_has_ffma_and_global_loads():
    results = sass_mix.analyze_binary(_chapter_binary("01-naive"), kernel="ch01::")
    assert results, "no ch01:: kernel in the chapter binary"
    loop = results[0]["loop"]
    assert loop is not None
    assert loop["ffma"] > 0
    # The naive kernel reads both operands of every FFMA from global memory.
    assert sum(loop["global_loads"].values()) == 2 * loop["ffma"]
    assert loop["shared_loads"] == {}


def test_instructions_predicated_never_are_not_counted():
    """ptxas puts `@!PT LDS RZ, [RZ]` beside cp.async: predicated on "not
    true", it never executes, and must not count as a shared load."""
    never = ("        /*0120*/                   @!PT LDS RZ, [RZ] ;"
             "                                   /* 0x000fe20000000800 */")
    real = ("        /*0130*/                   @P0 LDS R4, [R2] ;"
            "                                   /* 0x000fe20000000800 */")
    assert sass_mix.parse_instruction(never) is None
    parsed = sass_mix.parse_instruction(real)
    assert parsed is not None and parsed.opcode == "LDS" and parsed.predicated
