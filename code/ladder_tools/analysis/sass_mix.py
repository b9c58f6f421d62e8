"""The instruction mix of each kernel's K-loop, read from its SASS.

Runs ``cuobjdump -sass`` on a binary (an executable, a cubin, or a dump saved
earlier), splits the listing into functions, finds each kernel's K-loop and
counts the opcodes of its body, and of the whole kernel:

* total instructions, FFMA and its share of the total;
* shared-memory loads and stores by width in bits (``LDS`` is 32,
  ``LDS.64`` 64, ``LDS.128`` 128, ``LDS.U8`` 8 ...);
* global loads and stores by width (``LDG.E.128.CONSTANT`` is a 128-bit
  load; modifiers other than the width are ignored);
* barriers (``BAR.SYNC`` and its variants);
* every base opcode (the part before the first dot).

Finding the K-loop: every backward branch (a ``BRA`` whose target is below
its own address) closes a loop whose body is the instructions from the
target to the branch. The K-loop is the loop whose body holds the most
FFMA; between loops that hold as many, the widest (an outer loop that
encloses a fully counted inner one: the K-loop with its loads and barriers
rather than only its arithmetic). A kernel with loops but no FFMA gets its
widest loop; a kernel with no backward branch has no loop. This reads the
layout ptxas chose, so it assumes a loop body is laid out contiguously,
which is what ptxas does for these kernels; counts are static (each
instruction once), not executed counts.

The closing ``BRA`` to its own address and the ``NOP`` padding after it are
not code and are not counted.

``analyze_binary(path)`` and ``analyze_sass(text)`` return the counts as
dictionaries; the command ladder_tools.cli.sass_mix prints them (as text,
or as JSON with ``--json``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

# One instruction line of ``cuobjdump -sass``:
#   /*0240*/   @!P1 LDS.128 R8, [R8+UR5] ;   /* 0x0000000508087984 */
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(?P<text>[^;]*?)\s*;")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_ARCH = re.compile(r"^\s*code for (sm_\w+)")
_PREDICATE = re.compile(r"^@!?U?P(?:T|\d+)\s+")
_NEVER = re.compile(r"^@!U?PT\s+")
_HEX = re.compile(r"0x([0-9a-fA-F]+)")

# Width suffixes of memory opcodes, in bits; a memory opcode without one is 32-bit.
_WIDTH_SUFFIX = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}

# The memory opcodes whose widths are counted, by the name used in the output.
MEMORY_KINDS = {
    "LDS": "shared_loads",
    "STS": "shared_stores",
    "LDG": "global_loads",
    "STG": "global_stores",
    "LDGSTS": "async_copies",  # cp.async: global -> shared without registers
}


@dataclasses.dataclass
class Instruction:
    address: int
    opcode: str  # with modifiers, e.g. "LDS.128", "ISETP.GE.AND"
    operands: str
    predicated: bool

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]

    def branch_target(self) -> int | None:
        """Target address of a BRA, or None for anything else."""
        if self.base != "BRA":
            return None
        targets = _HEX.findall(self.operands)
        return int(targets[-1], 16) if targets else None


@dataclasses.dataclass
class Function:
    arch: str
    mangled: str
    name: str
    instructions: list[Instruction]


def parse_instruction(line: str) -> Instruction | None:
    """The instruction on one listing line, or None for any other line."""
    match = _INSTRUCTION.match(line)
    if not match:
        return None
    text = match.group("text")
    if _NEVER.match(text):
        # @!PT: predicated on "not true", so it never executes. ptxas places
        # such LDS RZ, [RZ] beside cp.async; they are not loads, skip them.
        return None
    predicated = bool(_PREDICATE.match(text))
    text = _PREDICATE.sub("", text)
    opcode, _, operands = text.partition(" ")
    return Instruction(int(match.group(1), 16), opcode, operands.strip(), predicated)


def memory_width(opcode: str) -> int:
    """Width in bits of a memory opcode: LDS.128 -> 128, LDG.E.64 -> 64, LDS -> 32."""
    for modifier in opcode.split(".")[1:]:
        if modifier in _WIDTH_SUFFIX:
            return _WIDTH_SUFFIX[modifier]
    return 32


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled -> readable names, through c++filt when it is there."""
    if not names or shutil.which("c++filt") is None:
        return {n: n for n in names}
    out = subprocess.run(
        ["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return dict(zip(names, out, strict=True)) if len(out) == len(names) else {n: n for n in names}


def _strip_padding(instructions: list[Instruction]) -> list[Instruction]:
    """Drops the closing self-branch and the NOPs after it."""
    for i in range(len(instructions) - 1, -1, -1):
        if instructions[i].branch_target() == instructions[i].address:
            return instructions[:i]
    return instructions


def split_functions(sass: str) -> list[Function]:
    """The functions of a ``cuobjdump -sass`` listing, in listing order."""
    functions: list[Function] = []
    arch = "unknown"
    current: Function | None = None
    for line in sass.splitlines():
        if m := _ARCH.match(line):
            arch = m.group(1)
        elif m := _FUNCTION.match(line):
            current = Function(arch, m.group(1), m.group(1), [])
            functions.append(current)
        elif current is not None and (ins := parse_instruction(line)):
            current.instructions.append(ins)
    readable = demangle(sorted({f.mangled for f in functions}))
    for f in functions:
        f.name = readable.get(f.mangled, f.mangled)
        f.instructions = _strip_padding(f.instructions)
    return functions


def count(instructions: list[Instruction]) -> dict[str, Any]:
    """Opcode counts of a stretch of code."""
    by_opcode = Counter(ins.base for ins in instructions)
    widths: dict[str, Counter[str]] = {kind: Counter() for kind in MEMORY_KINDS.values()}
    for ins in instructions:
        kind = MEMORY_KINDS.get(ins.base)
        if kind:
            widths[kind][str(memory_width(ins.opcode))] += 1
    total = len(instructions)
    ffma = by_opcode.get("FFMA", 0)
    result: dict[str, Any] = {
        "instructions": total,
        "ffma": ffma,
        "ffma_share": ffma / total if total else 0.0,
        # FFMAs with an operand marked .reuse: ptxas flags a source register
        # that the next instruction reads in the same slot, and the operand
        # reuse cache then serves that read instead of the register file.
        "ffma_reuse": sum(1 for ins in instructions
                          if ins.base == "FFMA" and ".reuse" in ins.operands),
        "barriers": by_opcode.get("BAR", 0),
    }
    for kind, counter in widths.items():
        result[kind] = dict(sorted(counter.items(), key=lambda kv: int(kv[0])))
    result["by_opcode"] = dict(sorted(by_opcode.items(), key=lambda kv: (-kv[1], kv[0])))
    return result


def find_loops(instructions: list[Instruction]) -> list[tuple[int, int]]:
    """(start, end) index pairs, inclusive, of every loop closed by a backward branch."""
    index_of = {ins.address: i for i, ins in enumerate(instructions)}
    loops = []
    for i, ins in enumerate(instructions):
        target = ins.branch_target()
        if target is not None and target < ins.address and target in index_of:
            loops.append((index_of[target], i))
    return loops


def find_k_loop(instructions: list[Instruction]) -> tuple[int, int] | None:
    """The loop with the most FFMA in its body; the widest among equals (see above)."""
    def key(loop: tuple[int, int]) -> tuple[int, int]:
        start, end = loop
        body = instructions[start : end + 1]
        return (sum(1 for ins in body if ins.base == "FFMA"), end - start)

    loops = find_loops(instructions)
    return max(loops, key=key) if loops else None


def inner_loops(instructions: list[Instruction], loop: tuple[int, int]) -> list[tuple[int, int]]:
    """The loops directly inside ``loop`` (not inside another inner loop)."""
    start, end = loop
    inside = [(s, e) for s, e in find_loops(instructions) if start <= s and e <= end]
    inside = [span for span in inside if span != loop]
    return [span for span in inside
            if not any(o != span and o[0] <= span[0] and span[1] <= o[1] for o in inside)]


def _span(instructions: list[Instruction], start: int, end: int) -> dict:
    return {
        "start": f"0x{instructions[start].address:04x}",
        "end": f"0x{instructions[end].address:04x}",
    }


def analyze_function(f: Function, inner_trips: int | None = None) -> dict:
    """Whole-kernel and K-loop counts of one function.

    The K-loop's body is counted once, as laid out. A loop inside it (the
    dot-product loop over BK, when ptxas did not unroll it) runs several
    times per trip of the K-loop; given its trip count ``inner_trips``, the
    result also has ``per_k_tile``: the instructions one trip of the K-loop
    executes, with each inner-loop instruction counted ``inner_trips`` times.
    """
    ins = f.instructions
    result: dict[str, Any] = {"name": f.name, "mangled": f.mangled, "arch": f.arch,
                              "kernel": count(ins)}
    loop = find_k_loop(ins)
    if loop is None:
        result["loop"] = None
        return result
    start, end = loop
    nested = inner_loops(ins, loop)
    result["loop"] = {
        **_span(ins, start, end),
        "loops_in_kernel": len(find_loops(ins)),
        **count(ins[start : end + 1]),
        "inner_loops": [{**_span(ins, s, e), **count(ins[s : e + 1])} for s, e in nested],
    }
    if inner_trips is not None and nested:
        in_inner = {i for s, e in nested for i in range(s, e + 1)}
        executed = [ins[i] for i in range(start, end + 1) for _ in
                    range(inner_trips if i in in_inner else 1)]
        result["loop"]["per_k_tile"] = {"inner_trips": inner_trips, **count(executed)}
    return result


def analyze_sass(
    sass: str, kernel: str | None = None, inner_trips: int | None = None
) -> list[dict]:
    """Counts for every function of a listing (or those whose name contains ``kernel``)."""
    functions = split_functions(sass)
    if kernel:
        functions = [f for f in functions if kernel in f.name or kernel == f.mangled]
    return [analyze_function(f, inner_trips) for f in functions]


def find_cuobjdump() -> str | None:
    """cuobjdump from $CUOBJDUMP, PATH, the CUDA toolkit, or pip's nvidia-cuda-cuobjdump."""
    candidates = [os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates.append(os.path.join(root, "bin", "cuobjdump"))
    spec = importlib.util.find_spec("nvidia")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidates.extend(str(p) for p in sorted(Path(location).glob("*/bin/cuobjdump")))
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_cuobjdump(binary: str | os.PathLike, option: str) -> str:
    """The text of ``cuobjdump <option> binary``.

    cuobjdump calls nvdisasm for ``-sass``; the one installed beside it is put
    on PATH so that a pip-installed pair works without further set-up.
    """
    tool = find_cuobjdump()
    if tool is None:
        raise FileNotFoundError(
            "cuobjdump not found: install the CUDA toolkit, or set CUOBJDUMP, or "
            "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"
        )
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(tool) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(
        [tool, option, str(binary)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"cuobjdump {option} {binary} failed: {done.stderr.strip()}")
    return done.stdout


def _is_saved_dump(path: Path) -> bool:
    try:
        head = path.read_bytes()[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return "code for sm_" in head or "Function :" in head


def analyze_binary(
    path: str | os.PathLike, kernel: str | None = None, inner_trips: int | None = None
) -> list[dict]:
    """Counts for the kernels of a binary, or of a saved ``cuobjdump -sass`` dump."""
    path = Path(path)
    sass = path.read_text() if _is_saved_dump(path) else run_cuobjdump(path, "-sass")
    return analyze_sass(sass, kernel, inner_trips)
