"""Registers, shared memory, spills and the occupancy they allow, per kernel.

Computed from a chapter's binary (ladder_tools.analysis.occupancy on ``cuobjdump
-res-usage``), with the launch a kernel needs besides: its block size and
dynamic shared memory, which the binary's ``--describe`` gives for each
variant (Launch.of). A GPU's result may report what the driver said of the
same kernel (its "resources"); resources_rows sets the two side by side and
says whether they agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ladder_tools.analysis import occupancy
from ladder_tools.analysis.binaries import AnalysisError, cached, stamp
from ladder_tools.analysis.kernels import short_name
from ladder_tools.formatting import DASH, format_bytes, format_percent

#: The architecture the book's binaries are compiled for (the H200's).
BOOK_ARCH = "sm_90"


def kernel_resources(path: Path) -> list[dict]:
    """occupancy.read_resources of a binary, cached."""
    def compute() -> list[dict[str, Any]]:
        try:
            return occupancy.read_resources(path)
        except (OSError, RuntimeError) as error:
            raise AnalysisError(f"cannot read the resources of {path}: {error}") from error
    return cached(("res", *stamp(path)), compute, about=path, code=(Path(occupancy.__file__),))


def arch_of_capability(capability: str | None) -> str | None:
    """'9.0' -> 'sm_90', when occupancy.py knows that architecture."""
    match = re.fullmatch(r"(\d+)\.(\d+)", capability or "")
    arch = f"sm_{match.group(1)}{match.group(2)}" if match else None
    return arch if arch in occupancy.ARCHS else None


def computed_occupancy(resource: dict, threads: int, dynamic_smem: int = 0) -> dict:
    """occupancy.blocks_per_sm for one kernel of a binary, on its own
    architecture, launched with ``threads`` and ``dynamic_smem`` bytes."""
    arch = resource["arch"] if resource["arch"] in occupancy.ARCHS else BOOK_ARCH
    return occupancy.blocks_per_sm(arch, threads, resource["registers"],
                                   resource["shared_bytes"] + dynamic_smem)


def format_shared(static: int, dynamic: int) -> str:
    """'12 KiB', or '0 B + 48 KiB dynamic' for memory sized at launch."""
    text = format_bytes(static)
    return f"{text} + {format_bytes(dynamic)} dynamic" if dynamic else text


LIMIT_NAMES = {"threads": "threads", "registers": "registers",
               "shared_memory": "shared memory", "blocks": "blocks per SM cap"}


@dataclass(frozen=True)
class ReportedResources:
    """What one GPU reported for a chapter's kernel (a result's "resources"):
    the kernel of the variant it measured, not the other paths of its tiling."""

    gpu: str  #: the GPU's name, for the table
    arch: str | None  #: its architecture when occupancy.py knows it
    data: dict  #: the result's "resources" object
    kernel: str  #: the mangled name of the kernel reported (the variant's, per --describe)


def agreement(computed: dict, occ: dict, reported: ReportedResources) -> str:
    """'agrees' when the GPU reported what was computed; 'differs' otherwise.

    On the binary's own architecture the registers and the blocks per SM are
    compared with the computation from the binary; on another architecture
    (whose build has other registers) the blocks per SM the GPU reported are
    compared with blocks_per_sm for its registers and shared memory.
    """
    r = reported.data
    if reported.arch is None:
        return "not comparable"
    if reported.arch == occ["arch"]:
        same = (r.get("registers_per_thread") == computed["registers"]
                and r.get("blocks_per_sm") == occ["blocks_per_sm"])
    else:
        expected = occupancy.blocks_per_sm(
            reported.arch, r["threads_per_block"], r["registers_per_thread"],
            r.get("static_smem_bytes", 0) + r.get("dynamic_smem_bytes", 0))
        same = r.get("blocks_per_sm") == expected["blocks_per_sm"]
    return "agrees" if same else "differs"


@dataclass(frozen=True)
class Launch:
    """How a kernel is launched: its block size and dynamic shared memory."""

    threads: int
    dynamic_smem: int = 0

    @classmethod
    def of(cls, variant: dict) -> Launch:
        """The launch of a variant's kernels, from its --describe entry (the
        same for every path of its tiling)."""
        kernel = variant["kernel"]
        return cls(kernel["threads_per_block"], kernel["dynamic_smem_bytes"])


RESOURCES_HEADER = ["kernel", "", "threads/block", "registers/thread", "shared memory",
                    "spills (local B/thread)", "blocks/SM", "limited by", "occupancy", "check"]


def resources_rows(resources: list[dict], launch: Launch,
                   reported: list[ReportedResources]) -> list[list[str]]:
    """The {ladder-resources} table: per kernel (each launched as ``launch``
    says) a computed row, then one row per GPU that reported that kernel's
    resources."""
    rows = []
    for resource in resources:
        occ = computed_occupancy(resource, launch.threads, launch.dynamic_smem)
        rows.append([
            short_name(resource["name"]), f"computed, {occ['arch']}", str(launch.threads),
            str(resource["registers"]),
            format_shared(resource["shared_bytes"], launch.dynamic_smem),
            # Local memory per thread: the stack frame (where spills go) and
            # any other local arrays, as the GPU's localSizeBytes counts it.
            str(resource["local_bytes"] + resource["stack_bytes"]), str(occ["blocks_per_sm"]),
            ", ".join(LIMIT_NAMES[name] for name in occ["limited_by"]),
            format_percent(100 * occ["occupancy"]), "",
        ])
        for gpu in (g for g in reported if g.kernel == resource["mangled"]):
            r = gpu.data
            occupancy_text = (format_percent(100 * r["occupancy"])
                              if isinstance(r.get("occupancy"), (int, float)) else DASH)
            smem = r.get("static_smem_bytes")
            dynamic = r.get("dynamic_smem_bytes")
            rows.append([
                "", f"reported by {gpu.gpu}", str(r.get("threads_per_block", DASH)),
                str(r.get("registers_per_thread", DASH)),
                format_shared(smem, dynamic if isinstance(dynamic, int) else 0)
                if isinstance(smem, int) else DASH,
                str(r.get("local_bytes_per_thread", DASH)), str(r.get("blocks_per_sm", DASH)),
                "", occupancy_text, agreement(resource, occ, gpu),
            ])
    return rows
