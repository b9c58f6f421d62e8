"""Resident blocks per SM and occupancy, from a kernel's resources.

Reads each kernel's registers, shared memory, stack and local memory from
``cuobjdump -res-usage`` and computes, for one GPU architecture, how many
blocks of a given size fit on one SM at once, which resource limits that
number, and the occupancy it gives (resident warps / the SM's maximum).

The arithmetic is the one the CUDA occupancy calculator uses (the
``cuda_occupancy.h`` header; the tests compare the two):

* threads: ``max_warps_per_sm // warps_per_block``;
* registers: a warp is given ``regs * 32`` registers rounded up to 256; the
  SM's registers are split evenly over 4 sub-partitions (schedulers), each
  holds ``(regs_per_sm / 4) // regs_per_warp`` warps, so the SM holds four
  times that, and ``// warps_per_block`` blocks;
* shared memory: a block is given its own shared memory (static + dynamic)
  plus the 1 KiB the driver reserves per block on sm_80 and newer, rounded up
  to the allocation granularity (256 B on sm_75, 128 B after); the SM's
  usable shared memory (the largest carveout, the default) ``//`` that;
* the architecture's cap on resident blocks per SM.

The smallest of these is the answer. Not modelled: a carveout preference
other than the default, thread-block clusters, and the per-SM barrier limit
of sm_90 (it binds only for blocks that use more than 2 named barriers).

Threads per block is not in the binary: the caller gives it, or a map from
kernel-name substring to threads.

``blocks_per_sm(arch, threads, regs, smem_bytes)`` returns the occupancy as
a dictionary; ``read_resources(path)`` the per-kernel resources. The command
ladder_tools.cli.occupancy prints them (as text, or as JSON with ``--json``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from ladder_tools.analysis.sass_mix import (  # the same cuobjdump and demangling
    demangle,
    run_cuobjdump,
)

KIB = 1024


@dataclasses.dataclass(frozen=True)
class Arch:
    """What one compute capability offers per SM and per block."""

    name: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm: int  # usable by blocks, with the default (largest) carveout
    smem_per_block_optin: int  # the most one block may ask for (after opting in)
    reserved_smem_per_block: int  # taken by the driver from every block
    smem_granularity: int  # shared memory is allocated in multiples of this
    regs_per_sm: int = 64 * KIB
    regs_per_block: int = 64 * KIB
    reg_granularity: int = 256  # registers per warp are allocated in multiples of this
    max_regs_per_thread: int = 255
    sub_partitions: int = 4  # registers are split evenly over these
    max_threads_per_block: int = 1024
    smem_per_block_default: int = 48 * KIB  # more needs cudaFuncSetAttribute (opt-in)
    warp_size: int = 32

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


ARCHS = {
    a.name: a
    for a in (
        Arch("sm_75", 1024, 16, 64 * KIB, 64 * KIB, 0, 256),
        Arch("sm_80", 2048, 32, 164 * KIB, 163 * KIB, 1 * KIB, 128),
        Arch("sm_86", 1536, 16, 100 * KIB, 99 * KIB, 1 * KIB, 128),
        Arch("sm_89", 1536, 24, 100 * KIB, 99 * KIB, 1 * KIB, 128),
        Arch("sm_90", 2048, 32, 228 * KIB, 227 * KIB, 1 * KIB, 128),
    )
}

# The order in which binding limits are listed (and the first one named).
LIMITS = ("threads", "registers", "shared_memory", "blocks")


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def _arch(arch: str | Arch) -> Arch:
    if isinstance(arch, Arch):
        return arch
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}")
    return ARCHS[arch]


def blocks_per_sm(arch: str | Arch, threads: int, regs: int, smem_bytes: int) -> dict:
    """Resident blocks per SM for blocks of ``threads`` threads that use
    ``regs`` registers per thread and ``smem_bytes`` of shared memory of the
    program's own (static + dynamic, without the driver's reservation).

    Comparable with ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``: its
    answer is ``result["blocks_per_sm"]``. A configuration that cannot launch
    at all (too many threads, registers or shared memory for one block) gets
    0 blocks and the limit that refuses it.
    """
    a = _arch(arch)
    if threads < 1 or regs < 0 or smem_bytes < 0:
        raise ValueError("threads must be positive, registers and shared memory non-negative")
    warps_per_block = -(-threads // a.warp_size)

    # Threads (warp slots).
    by_threads = a.max_warps_per_sm // warps_per_block if threads <= a.max_threads_per_block else 0

    # Registers, allocated per warp and held in 4 equal sub-partitions.
    regs_per_warp = _round_up(regs * a.warp_size, a.reg_granularity)
    # The launch check assumes a block's warps spread over every sub-partition.
    regs_per_block = regs_per_warp * _round_up(warps_per_block, a.sub_partitions)
    if regs > a.max_regs_per_thread or regs_per_block > a.regs_per_block:
        by_registers = 0
    elif regs_per_warp == 0:
        by_registers = None  # no limit
    else:
        warps_per_sub_partition = (a.regs_per_sm // a.sub_partitions) // regs_per_warp
        by_registers = warps_per_sub_partition * a.sub_partitions // warps_per_block

    # Shared memory, with the driver's reservation, in allocation units.
    smem_per_block = _round_up(smem_bytes + a.reserved_smem_per_block, a.smem_granularity)
    if smem_bytes > a.smem_per_block_optin:
        by_shared = 0
    elif smem_per_block == 0:
        by_shared = None  # no limit
    else:
        by_shared = a.smem_per_sm // smem_per_block

    limits = {
        "threads": by_threads,
        "registers": by_registers,
        "shared_memory": by_shared,
        "blocks": a.max_blocks_per_sm,
    }
    blocks = min(v for v in limits.values() if v is not None)
    warps = blocks * warps_per_block
    return {
        "arch": a.name,
        "threads_per_block": threads,
        "warps_per_block": warps_per_block,
        "registers_per_thread": regs,
        "registers_per_warp": regs_per_warp,
        "shared_bytes": smem_bytes,
        "shared_bytes_allocated": smem_per_block,
        "needs_opt_in": smem_bytes > a.smem_per_block_default,
        "limits": limits,
        "blocks_per_sm": blocks,
        "limited_by": [name for name in LIMITS if limits[name] == blocks],
        "warps_per_sm": warps,
        "max_warps_per_sm": a.max_warps_per_sm,
        "occupancy": warps / a.max_warps_per_sm,
    }


# ``cuobjdump -res-usage`` prints, per cubin, a header with "arch = sm_90" and
# then, per function:
#    Function _Z6kernelPf:
#     REG:32 STACK:0 SHARED:5120 LOCAL:0 CONSTANT[0]:548 TEXTURE:0 SURFACE:0 SAMPLER:0
_ARCH_LINE = re.compile(r"^\s*arch\s*=\s*(sm_\w+)")
_FUNCTION_LINE = re.compile(r"^\s*Function\s+(\S+?):?\s*$")
_FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")


def _reservation_in_image(arch: str, image_shared: int) -> int:
    """Bytes of the driver's per-block reservation already counted in SHARED.

    From sm_90 on, the cubin's SHARED of a kernel that uses shared memory
    includes the 1 KiB reservation (user data starts at offset 0x400): a
    kernel with 4096 B of ``__shared__`` shows SHARED:5120, where ``ptxas -v``
    and an sm_80 build both say 4096 (checked with CUDA 13.0). Earlier
    architectures do not include it.
    """
    digits = re.sub(r"\D", "", arch)
    major = int(digits[:-1]) if len(digits) >= 2 else 0
    return KIB if major >= 9 and image_shared >= KIB else 0


def parse_res_usage(text: str) -> list[dict]:
    """Per-function resources from the text of ``cuobjdump -res-usage``."""
    kernels: list[dict[str, Any]] = []
    arch = "unknown"
    pending: str | None = None
    for line in text.splitlines():
        if m := _ARCH_LINE.match(line):
            arch = m.group(1)
        elif m := _FUNCTION_LINE.match(line):
            pending = m.group(1)
        elif pending is not None and "REG:" in line:
            fields = {k: int(v) for k, v in _FIELD.findall(line)}
            image_shared = fields.get("SHARED", 0)
            kernels.append(
                {
                    "mangled": pending,
                    "arch": arch,
                    "registers": fields.get("REG", 0),
                    "shared_bytes": image_shared - _reservation_in_image(arch, image_shared),
                    "shared_bytes_in_image": image_shared,
                    "stack_bytes": fields.get("STACK", 0),
                    "local_bytes": fields.get("LOCAL", 0),
                }
            )
            pending = None
    names = demangle(sorted({k["mangled"] for k in kernels}))
    for k in kernels:
        k["name"] = names.get(k["mangled"], k["mangled"])
    return kernels


def read_resources(path: str | Path) -> list[dict]:
    """Per-kernel resources of a binary, or of a saved ``cuobjdump -res-usage`` text."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
        if "REG:" not in text:
            raise ValueError
        return parse_res_usage(text)
    except (UnicodeDecodeError, ValueError):
        pass
    kernels = parse_res_usage(run_cuobjdump(path, "-res-usage"))
    if any(k["arch"] == "unknown" for k in kernels):
        # A bare cubin's listing names no architecture; its ELF file name does.
        archs = set(re.findall(r"\.(sm_\w+?)\.cubin", run_cuobjdump(path, "-lelf")))
        if len(archs) == 1:
            arch = archs.pop()
            for k in kernels:  # "unknown" had nothing subtracted
                k["arch"] = arch
                k["shared_bytes"] -= _reservation_in_image(arch, k["shared_bytes_in_image"])
    return kernels


def _threads_for(name: str, threads: int | None, threads_map: dict[str, int]) -> int | None:
    for key, value in threads_map.items():
        if key in name:
            return value
    return threads


def analyze_binary(
    path: str | Path,
    threads: int | None = None,
    threads_map: dict[str, int] | None = None,
    kernel: str | None = None,
    arch: str | None = None,
    dynamic_smem: int = 0,
) -> list[dict]:
    """Resources and occupancy of each kernel of a binary (those whose name
    contains ``kernel``); a kernel whose block size is not given gets its
    resources only."""
    results = []
    for k in read_resources(path):
        if kernel and kernel not in k["name"] and kernel != k["mangled"]:
            continue
        entry = dict(k)
        block = _threads_for(k["name"], threads, threads_map or {})
        target = arch or k["arch"]
        if block is not None and target in ARCHS:
            entry["occupancy"] = blocks_per_sm(
                target, block, k["registers"], k["shared_bytes"] + dynamic_smem
            )
        else:
            entry["occupancy"] = None
        results.append(entry)
    return results
