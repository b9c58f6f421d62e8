"""Tests of code/ladder_tools/analysis/occupancy.py.

Three kinds: cases worked by hand (the arithmetic in the comments), a
comparison with NVIDIA's own occupancy calculator (the cuda_occupancy.h
header, compiled here on the CPU) over a grid of configurations, and the
reading of ``cuobjdump -res-usage`` from kernels compiled for the test.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ladder_tools.analysis import occupancy, sass_mix

REPO = Path(__file__).resolve().parents[2]

KIB = 1024


# sm_90, 256 threads (8 warps), 128 registers: a warp needs 128 * 32 = 4096
# registers (already a multiple of 256). A sub-partition has 65536 / 4 =
# 16384, so 4 warps each, 16 warps per SM: 16 / 8 = 2 blocks. Threads would
# allow 64 / 8 = 8, shared memory (1 KiB reserved) 233472 / 1024 = 228, the cap
# 32. 2 blocks x 8 warps = 16 of 64 warps: 25%.
def test_sm90_256_threads_128_registers_is_register_bound():
    r = occupancy.blocks_per_sm("sm_90", 256, 128, 0)
    assert r["limits"] == {"threads": 8, "registers": 2, "shared_memory": 228, "blocks": 32}
    assert r["blocks_per_sm"] == 2
    assert r["limited_by"] == ["registers"]
    assert r["warps_per_sm"] == 16
    assert r["occupancy"] == pytest.approx(0.25)


# sm_90, 1024 threads (32 warps), 32 registers, 8 KiB shared: threads allow
# 64 / 32 = 2 blocks. Registers: 32 * 32 = 1024 per warp, 16384 / 1024 = 16
# warps per sub-partition, 64 per SM, 64 / 32 = 2 blocks too (any count up to
# 32 registers fills all 64 warp slots, so the two limits tie). Shared:
# 8192 + 1024 = 9216 per block, 233472 / 9216 = 25. 2 blocks, 100%.
def test_sm90_1024_threads_is_thread_bound():
    r = occupancy.blocks_per_sm("sm_90", 1024, 32, 8 * KIB)
    assert r["limits"] == {"threads": 2, "registers": 2, "shared_memory": 25, "blocks": 32}
    assert r["limited_by"] == ["threads", "registers"]
    assert r["occupancy"] == pytest.approx(1.0)


# sm_90, 256 threads, 32 registers, 48 KiB shared: 49152 + 1024 = 50176 B per
# block (a multiple of 128), 233472 / 50176 = 4.65 -> 4 blocks; threads and
# registers allow 8. 4 x 8 = 32 warps of 64: 50%.
def test_sm90_48k_shared_is_shared_memory_bound():
    r = occupancy.blocks_per_sm("sm_90", 256, 32, 48 * KIB)
    assert r["shared_bytes_allocated"] == 50176
    assert r["limits"]["shared_memory"] == 4
    assert r["limited_by"] == ["shared_memory"]
    assert r["occupancy"] == pytest.approx(0.5)
    assert not r["needs_opt_in"]


# The padded SGEMM tile of the reference text: 12416 B of shared memory.
# 12416 + 1024 = 13440, already a multiple of 128: 233472 / 13440 = 17.4 ->
# 17 blocks on sm_90. On sm_86 (100 KiB): 102400 / 13440 = 7.6 -> 7.
def test_shared_memory_is_rounded_and_reserved_per_block():
    assert occupancy.blocks_per_sm("sm_90", 128, 64, 12416)["limits"]["shared_memory"] == 17
    assert occupancy.blocks_per_sm("sm_86", 128, 64, 12416)["limits"]["shared_memory"] == 7
    # 100 B + 1024 = 1124 rounds up to 1152 (9 x 128): 233472 / 1152 = 202.
    assert occupancy.blocks_per_sm("sm_90", 32, 16, 100)["shared_bytes_allocated"] == 1152
    assert occupancy.blocks_per_sm("sm_90", 32, 16, 100)["limits"]["shared_memory"] == 202
    # sm_75 reserves nothing and allocates in 256 B: 100 -> 256, 65536 / 256 = 256.
    assert occupancy.blocks_per_sm("sm_75", 32, 16, 100)["limits"]["shared_memory"] == 256


# 32 threads (1 warp), 16 registers, no shared memory: threads allow 64
# blocks, registers 16 * 32 = 512 per warp, 16384 / 512 = 32 per
# sub-partition, 128 warps -> 128 blocks; the cap of 32 binds: 32 warps, 50%.
def test_small_blocks_hit_the_block_cap():
    r = occupancy.blocks_per_sm("sm_90", 32, 16, 0)
    assert r["limited_by"] == ["blocks"]
    assert r["blocks_per_sm"] == 32
    assert r["occupancy"] == pytest.approx(0.5)


# Registers are held per sub-partition, so the SM's 65536 cannot be shared
# out freely. 80 registers: 2560 per warp; a sub-partition holds
# 16384 // 2560 = 6 warps (not 6.4), the SM 24 (not 65536 // 2560 = 25).
# Blocks of 160 threads (5 warps): 24 // 5 = 4 blocks, not 5.
def test_registers_are_allocated_per_sub_partition():
    assert occupancy.blocks_per_sm("sm_90", 160, 80, 0)["limits"]["registers"] == 4


# 255 registers: 8160 rounds up to 8192 per warp, 2 warps per sub-partition,
# 8 per SM; blocks of 128 threads (4 warps): 2.
def test_register_count_rounds_up_per_warp():
    r = occupancy.blocks_per_sm("sm_90", 128, 255, 0)
    assert r["registers_per_warp"] == 8192
    assert r["limits"]["registers"] == 2


def test_what_cannot_launch_gets_zero_blocks():
    # 1024 threads x 128 registers = 131072 > 65536 registers per block.
    assert occupancy.blocks_per_sm("sm_90", 1024, 128, 0)["limits"]["registers"] == 0
    # More threads than a block may have.
    assert occupancy.blocks_per_sm("sm_90", 2048, 16, 0)["blocks_per_sm"] == 0
    # More shared memory than a block may opt in to (227 KiB on sm_90).
    r = occupancy.blocks_per_sm("sm_90", 128, 32, 228 * KIB)
    assert r["blocks_per_sm"] == 0
    assert r["limited_by"] == ["shared_memory"]
    assert occupancy.blocks_per_sm("sm_90", 128, 32, 100 * KIB)["needs_opt_in"]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        occupancy.blocks_per_sm("sm_99", 128, 32, 0)
    with pytest.raises(ValueError):
        occupancy.blocks_per_sm("sm_90", 0, 32, 0)


# NVIDIA's calculator, cuda_occupancy.h, is a host-only header. This program
# reads "major minor threads_per_sm smem_per_sm smem_optin reserved threads
# regs smem" lines and prints what the header computes: blocks per SM, the
# limits by warps, registers, shared memory and the block cap (INT_MAX for
# "no limit"), and the shared memory allocated per block.
REFERENCE_CALCULATOR = r"""
#include <cuda_occupancy.h>
#include <cstdio>

int main() {
  int major, minor, threads_per_sm, threads, regs;
  size_t smem_per_sm, smem_optin, reserved, smem;
  while (std::scanf("%d %d %d %zu %zu %zu %d %d %zu", &major, &minor, &threads_per_sm,
                    &smem_per_sm, &smem_optin, &reserved, &threads, &regs, &smem) == 9) {
    cudaOccDeviceProp prop;
    prop.computeMajor = major;
    prop.computeMinor = minor;
    prop.maxThreadsPerBlock = 1024;
    prop.maxThreadsPerMultiprocessor = threads_per_sm;
    prop.regsPerBlock = 65536;
    prop.regsPerMultiprocessor = 65536;
    prop.warpSize = 32;
    prop.sharedMemPerBlock = 48 * 1024;
    prop.sharedMemPerMultiprocessor = smem_per_sm;
    prop.numSms = 1;
    prop.sharedMemPerBlockOptin = smem_optin;
    prop.reservedSharedMemPerBlock = reserved;
    cudaOccFuncAttributes attr;
    attr.maxThreadsPerBlock = 1024;
    attr.numRegs = regs;
    attr.sharedSizeBytes = 0;  // all of it passed as dynamic, opted in
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = smem_optin;
    attr.numBlockBarriers = 1;
    cudaOccDeviceState state;
    cudaOccResult result;
    const cudaOccError err =
        cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, threads, smem);
    if (err != CUDA_OCC_SUCCESS) {
      std::printf("error\n");
      continue;
    }
    std::printf("%d %d %d %d %d %zu\n", result.activeBlocksPerMultiprocessor,
                result.blockLimitWarps, result.blockLimitRegs, result.blockLimitSharedMem,
                result.blockLimitBlocks, result.allocatedSharedMemPerBlock);
  }
  return 0;
}
"""


def _cuda_include() -> Path | None:
    nvcc = shutil.which("nvcc")
    candidates = [Path(nvcc).resolve().parent.parent / "include"] if nvcc else []
    candidates.append(Path("/usr/local/cuda/include"))
    for c in candidates:
        if (c / "cuda_occupancy.h").is_file():
            return c
    return None


@pytest.mark.skipif(_cuda_include() is None or shutil.which("g++") is None,
                    reason="cuda_occupancy.h or g++ not found")
def test_agrees_with_nvidias_occupancy_calculator(tmp_path):
    source = tmp_path / "calc.cpp"
    source.write_text(REFERENCE_CALCULATOR)
    program = tmp_path / "calc"
    subprocess.run(["g++", "-std=c++17", "-O1", f"-I{_cuda_include()}", str(source), "-o",
                    str(program)], check=True, capture_output=True)
    cases = []
    for arch in occupancy.ARCHS.values():
        major, minor = int(arch.name[3:-1]), int(arch.name[-1])
        for threads in (32, 64, 96, 128, 160, 256, 384, 512, 768, 1024):
            for regs in (16, 32, 40, 64, 72, 80, 96, 128, 168, 255):
                # 12600 B: 13624 with the reservation, 13696 in 128 B units
                # (17 blocks on sm_90) but 13824 in 256 B units (16).
                for smem in (0, 100, 4 * KIB, 12416, 12600, 40 * KIB, 48 * KIB, 64 * KIB,
                             99 * KIB, 160 * KIB, 227 * KIB):
                    if smem > arch.smem_per_block_optin:
                        continue  # the header refuses it as an input error
                    cases.append((arch, major, minor, threads, regs, smem))
    lines = "".join(
        f"{major} {minor} {a.max_threads_per_sm} {a.smem_per_sm} {a.smem_per_block_optin} "
        f"{a.reserved_smem_per_block} {threads} {regs} {smem}\n"
        for a, major, minor, threads, regs, smem in cases
    )
    out = subprocess.run([str(program)], input=lines, capture_output=True, text=True, check=True)
    rows = out.stdout.splitlines()
    assert len(rows) == len(cases)
    no_limit = 2**31 - 1  # the header's INT_MAX
    mismatches = []
    for (a, _, _, threads, regs, smem), row in zip(cases, rows, strict=True):
        r = occupancy.blocks_per_sm(a, threads, regs, smem)
        ours = [r["blocks_per_sm"]]
        ours += [no_limit if r["limits"][k] is None else r["limits"][k] for k in occupancy.LIMITS]
        ours.append(r["shared_bytes_allocated"])
        theirs = [int(x) for x in row.split()] if row != "error" else None
        if ours != theirs:
            mismatches.append((a.name, threads, regs, smem, ours, theirs))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ, e.g. {mismatches[:5]}"


# Reading cuobjdump -res-usage from real kernels.
KERNELS = r"""
// 1024 floats of static shared memory: 4096 bytes of the program's own.
__global__ void with_shared(const float* in, float* out) {
  __shared__ float tile[1024];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[1023 - threadIdx.x];
}

__global__ void without_shared(float* out) { out[threadIdx.x] += 1.0f; }
"""


def _tools_missing() -> bool:
    return shutil.which("nvcc") is None or sass_mix.find_cuobjdump() is None


@pytest.mark.skipif(_tools_missing(), reason="nvcc or cuobjdump not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_reads_resources_of_a_compiled_kernel(tmp_path, arch):
    source = tmp_path / "k.cu"
    source.write_text(KERNELS)
    cubin = tmp_path / "k.cubin"
    done = subprocess.run(
        ["nvcc", f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(cubin), str(source)],
        check=True, capture_output=True, text=True,
    )
    # ptxas -v reports, per function, "Compiling entry function 'NAME'" and
    # then "Used N registers": the reader must agree with the compiler.
    ptxas_regs = dict(re.findall(r"entry function '(\w+)'.*?Used (\d+) registers",
                                 done.stderr, flags=re.DOTALL))
    kernels = {k["name"].split("(")[0]: k for k in occupancy.read_resources(cubin)}
    assert set(kernels) == {"with_shared", "without_shared"}
    for k in kernels.values():
        assert k["arch"] == arch
        assert k["registers"] == int(ptxas_regs[k["mangled"]])
        assert k["stack_bytes"] == 0 and k["local_bytes"] == 0
    # The program's own shared memory whatever the image counts (on sm_90 the
    # image includes the driver's 1 KiB).
    assert kernels["with_shared"]["shared_bytes"] == 4096
    assert kernels["without_shared"]["shared_bytes"] == 0


@pytest.mark.skipif(_tools_missing(), reason="nvcc or cuobjdump not found")
def test_command_line_gives_occupancy_per_kernel(tmp_path):
    source = tmp_path / "k.cu"
    source.write_text(KERNELS)
    cubin = tmp_path / "k.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(cubin), str(source)], check=True)
    threads_map = tmp_path / "threads.json"
    threads_map.write_text(json.dumps({"with_shared": 1024}))
    done = subprocess.run(
        [sys.executable, "-m", "ladder_tools.cli.occupancy", str(cubin),
         "--threads-map", str(threads_map), "--json"],
        capture_output=True, text=True, check=True,
    )
    by_name = {r["name"].split("(")[0]: r for r in json.loads(done.stdout)}
    with_shared = by_name["with_shared"]
    expected = occupancy.blocks_per_sm("sm_90", 1024, with_shared["registers"], 4096)
    assert with_shared["occupancy"] == expected
    assert by_name["without_shared"]["occupancy"] is None  # no block size given


def test_command_line_without_binary():
    done = subprocess.run(
        [sys.executable, "-m", "ladder_tools.cli.occupancy", "--arch", "sm_90",
         "--threads", "256", "--regs", "128", "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(done.stdout) == occupancy.blocks_per_sm("sm_90", 256, 128, 0)
