"""The book's analysis: what the compiled chapters and the counters say.

Plain functions of files and values, with no Sphinx in them, so that the
tests call them directly; ``ladder_analysis.py`` turns what they return into
tables and figures. Two kinds of input:

* computed on this machine, from the chapters' binaries in the build folder
  ($LADDER_BUILD_DIR, default <repo>/build): the K-loop's instruction mix
  (code/analysis/sass_mix.py), registers, shared memory and the occupancy
  they allow (code/analysis/occupancy.py), and lane-to-bank maps
  (build/bin/bankmap). Each binary is analysed once per process;
* measured on a GPU by the measure command, under results/<gpu>/: ncu.json
  (shared-memory and global-load counters), sweep-<chapter>.json (the
  autotuning sweep), transpose.json (chapter 10's exercise) and issue.json
  (the issue rate and stall reasons of chapters 11 and 12 and of cuBLAS).
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import ladder_data as data

#: Environment variable naming the CMake build folder that holds bin/.
BUILD_DIR_VARIABLE = "LADDER_BUILD_DIR"
#: The architecture the book's binaries are compiled for (the H200's).
BOOK_ARCH = "sm_90"
#: Every chapter kernel's name starts with this (measure.py's ncu filter too).
KERNEL_PREFIX = "sgemm_"

ANALYSIS_DIR = Path(__file__).resolve().parents[2] / "code" / "analysis"
if str(ANALYSIS_DIR) not in sys.path:
    sys.path.insert(0, str(ANALYSIS_DIR))

import occupancy  # noqa: E402  (code/analysis must be on the path first)
import sass_mix  # noqa: E402


class AnalysisError(ValueError):
    """An input the analysis cannot use: a missing binary, a bad option."""


# --------------------------------------------------------------------------
# Binaries and kernel names
# --------------------------------------------------------------------------


def build_dir(repo_root: str | os.PathLike) -> Path:
    """The CMake build folder: $LADDER_BUILD_DIR when set, else <repo>/build."""
    override = os.environ.get(BUILD_DIR_VARIABLE)
    return Path(override) if override else Path(repo_root) / "build"


def binary_path(build: str | os.PathLike, name: str) -> Path:
    return Path(build) / "bin" / name


def require_binary(build: str | os.PathLike, name: str) -> Path:
    """build/bin/<name>, or an error that says how to make it."""
    path = binary_path(build, name)
    if not path.is_file():
        raise AnalysisError(
            f"{path} does not exist: build the chapters first (cmake --build {build}), "
            f"or point ${BUILD_DIR_VARIABLE} at the build folder that has bin/{name}"
        )
    return path


def _cut_balanced(text: str, opening: str, closing: str) -> str:
    """``text`` up to its first ``opening`` that is outside any <...>."""
    depth = 0
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == opening and depth == 0:
            return text[:index]
    return text


def _strip_template_arguments(text: str) -> str:
    """'ns::f<A<1>, 2> ' -> 'ns::f'."""
    text = text.rstrip()
    if not text.endswith(">"):
        return text
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += {">": 1, "<": -1}.get(text[index], 0)
        if depth == 0:
            return text[:index].rstrip()
    return text


def base_name(name: str) -> str:
    """The bare function name of a demangled signature:
    'void ch08::sgemm_warptiled<ch08::Tiling<64> >(int, float*)' -> 'sgemm_warptiled'."""
    head = _strip_template_arguments(_cut_balanced(name, "(", ")"))
    head = head.rsplit("::", 1)[-1]
    return head.rsplit(" ", 1)[-1]


def short_name(name: str) -> str:
    """The name without return type, namespaces and parameters, but with its
    template arguments: 'sgemm_warptiled<Tiling<64, 128> >'."""
    head = _cut_balanced(name, "(", ")").strip()
    bare = base_name(name)
    start = head.find(bare)
    shown = head[start:] if start >= 0 else bare
    return re.sub(r"\b[A-Za-z_]\w*::", "", shown)


def is_chapter_kernel(name: str) -> bool:
    return base_name(name).startswith(KERNEL_PREFIX)


def select_kernels(entries: list[dict], part: str | None) -> list[dict]:
    """The chapter kernels among ``entries`` (dicts with "name"), those whose
    name contains ``part`` when given."""
    return [e for e in entries if is_chapter_kernel(e["name"]) and (not part or part in e["name"])]


_CACHE: dict[tuple, object] = {}


def _cached(key: tuple, compute):
    """compute() once per key (the key holds the file's modification time)."""
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]


def _stamp(path: Path) -> tuple[str, int]:
    return (str(path.resolve()), path.stat().st_mtime_ns)


def _cuobjdump(path: Path, option: str) -> str:
    """The text of ``cuobjdump <option>`` of a binary, cached."""
    def compute():
        try:
            return sass_mix.run_cuobjdump(path, option)
        except (OSError, RuntimeError) as error:
            raise AnalysisError(f"cannot read {path} with cuobjdump {option}: {error}") from error
    return _cached(("cuobjdump", option, *_stamp(path)), compute)


def kernel_mix(path: Path, inner_trips: int | None = None) -> list[dict]:
    """sass_mix's counts for every function of a binary, cached."""
    return _cached(("sass", *_stamp(path), inner_trips),
                   lambda: sass_mix.analyze_sass(_cuobjdump(path, "-sass"), None, inner_trips))


def kernel_resources(path: Path) -> list[dict]:
    """occupancy.read_resources of a binary, cached."""
    def compute():
        try:
            return occupancy.read_resources(path)
        except (OSError, RuntimeError) as error:
            raise AnalysisError(f"cannot read the resources of {path}: {error}") from error
    return _cached(("res", *_stamp(path)), compute)


_SECTION = re.compile(r"^\.nv\.info\.(\S+)")
_VALUES = re.compile(r"0x([0-9a-fA-F]+)")


def parse_launch_bounds(elf_text: str) -> dict[str, int]:
    """Mangled kernel name -> the block size its __launch_bounds__ (PTX
    .maxntid) allows, from ``cuobjdump -elf``: each kernel's .nv.info section
    holds EIATTR_MAX_THREADS with x, y, z. A kernel without launch bounds has
    none. The first architecture listed wins."""
    bounds: dict[str, int] = {}
    section = None
    wanted = False
    for line in elf_text.splitlines():
        if match := _SECTION.match(line.strip()):
            section, wanted = match.group(1), False
        elif section and "EIATTR_MAX_THREADS" in line:
            wanted = True
        elif wanted and line.strip().startswith("Value:"):
            threads = math.prod(int(v, 16) for v in _VALUES.findall(line)[:3])
            bounds.setdefault(section, threads)
            wanted = False
    return bounds


def launch_bounds(path: Path) -> dict[str, int]:
    """parse_launch_bounds of a binary, cached."""
    return _cached(("bounds", *_stamp(path)),
                   lambda: parse_launch_bounds(_cuobjdump(path, "-elf")))


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------

DASH = "\u2014"


def format_count(value: float) -> str:
    """An event count, short: 812, 12,345, 2.68 M, 3.22 G."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) < 100_000:
        return f"{round(value):,}"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            number = value / scale
            decimals = max(0, 2 - math.floor(math.log10(abs(number))))
            return f"{number:.{decimals}f} {suffix}"
    return f"{round(value):,}"


def format_ratio(value: float | None, decimals: int = 2) -> str:
    return DASH if value is None else f"{value:.{decimals}f}"


def format_bytes(value: int) -> str:
    """Bytes as B below 1 KiB, else KiB: 512 B, 8 KiB, 12.5 KiB."""
    if value < 1024:
        return f"{value} B"
    kib = value / 1024
    return f"{kib:g} KiB" if kib == round(kib, 1) else f"{kib:.1f} KiB"


def format_difference(measured: float | None, model: float | None) -> str:
    """(measured - model) / model as a signed percentage."""
    if measured is None or model is None or model == 0:
        return DASH
    return f"{100 * (measured - model) / model:+.1f}%"


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


# --------------------------------------------------------------------------
# Resources and occupancy
# --------------------------------------------------------------------------


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


_EXTERN_SHARED = re.compile(r"^\s*\.extern\s+\.shared\b.*?([\w$]+)\s*\[\s*\]", re.MULTILINE)
_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", re.MULTILINE)


def parse_dynamic_shared(ptx: str) -> set[str] | None:
    """The kernels (mangled) whose PTX uses dynamic shared memory (an
    ``.extern .shared`` array, sized at launch), from ``cuobjdump -ptx``;
    None when the binary holds no PTX to tell."""
    entries = list(_ENTRY.finditer(ptx))
    if not entries:
        return None
    arrays = set(_EXTERN_SHARED.findall(ptx))
    users = set()
    for index, entry in enumerate(entries):
        end = entries[index + 1].start() if index + 1 < len(entries) else len(ptx)
        body = ptx[entry.end():end]
        if any(re.search(rf"\b{re.escape(name)}\b", body) for name in arrays):
            users.add(entry.group(1))
    return users


LIMIT_NAMES = {"threads": "threads", "registers": "registers",
               "shared_memory": "shared memory", "blocks": "blocks per SM cap"}


@dataclass(frozen=True)
class ReportedResources:
    """What one GPU reported for a chapter's kernel (a result's "resources")."""

    gpu: str  #: the GPU's name, for the table
    arch: str | None  #: its architecture when occupancy.py knows it
    data: dict  #: the result's "resources" object


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


def dynamic_shared_users(path: Path) -> set[str] | None:
    """parse_dynamic_shared of a binary, cached."""
    return _cached(("dynamic", *_stamp(path)),
                   lambda: parse_dynamic_shared(_cuobjdump(path, "-ptx")))


@dataclass(frozen=True)
class Launch:
    """How a kernel is launched: its block size and dynamic shared memory."""

    threads: int
    dynamic_smem: int = 0


RESOURCES_HEADER = ["kernel", "", "threads/block", "registers/thread", "shared memory",
                    "spills (local B/thread)", "blocks/SM", "limited by", "occupancy", "check"]


def resources_rows(resources: list[dict], launches: list[Launch],
                   reported: list[ReportedResources]) -> list[list[str]]:
    """The {ladder-resources} table: per kernel (launched as ``launches``
    says) a computed row, then one row per GPU that reported the kernel's
    resources."""
    rows = []
    for resource, launch in zip(resources, launches, strict=True):
        occ = computed_occupancy(resource, launch.threads, launch.dynamic_smem)
        rows.append([
            short_name(resource["name"]), f"computed, {occ['arch']}", str(launch.threads),
            str(resource["registers"]),
            format_shared(resource["shared_bytes"], launch.dynamic_smem),
            str(resource["local_bytes"]), str(occ["blocks_per_sm"]),
            ", ".join(LIMIT_NAMES[name] for name in occ["limited_by"]),
            data.format_percent(100 * occ["occupancy"]), "",
        ])
        for gpu in reported:
            r = gpu.data
            occupancy_text = (data.format_percent(100 * r["occupancy"])
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


# --------------------------------------------------------------------------
# The K-loop's instruction mix
# --------------------------------------------------------------------------

#: Opcode families of the mix, as sass_mix names them, with their SASS spelling.
_MEMORY_ROWS = (("shared_loads", "shared load", "LDS"),
                ("shared_stores", "shared store", "STS"),
                ("global_loads", "global load", "LDG"))


def _opcode(prefix: str, width: str) -> str:
    """The SASS spelling of one width: LDS (32-bit), LDS.128, LDG.E.64."""
    if width == "32":
        return prefix
    return f"{prefix}.E.{width}" if prefix == "LDG" else f"{prefix}.{width}"


def mix_categories(counts: dict) -> dict[str, int]:
    """A K-loop's instructions in the figure's families; they sum to the total."""
    families = {
        "FFMA": counts["ffma"],
        "shared loads": sum(counts["shared_loads"].values()),
        "shared stores": sum(counts["shared_stores"].values()),
        "global loads": sum(counts["global_loads"].values()) + sum(
            counts["async_copies"].values()),
        "barriers": counts["barriers"],
    }
    families["other"] = counts["instructions"] - sum(families.values())
    return families


#: The mix table's row of FFMAs with a .reuse operand; its share is of the
#: FFMAs, not of all instructions.
REUSE_ROW = "FFMA with a .reuse operand (share of FFMA)"


def mix_rows(counts: dict) -> list[tuple[str, int]]:
    """The {ladder-sass} table's rows for one stretch of code: (label, count)."""
    rows = [("instructions", counts["instructions"]), ("FFMA", counts["ffma"]),
            (REUSE_ROW, counts.get("ffma_reuse", 0))]
    for kind, what, prefix in _MEMORY_ROWS:
        widths = counts[kind]
        if not widths:
            rows.append((f"{what}s", 0))
        for width, number in widths.items():
            rows.append((f"{what}s, {width}-bit ({_opcode(prefix, width)})", number))
    rows.append(("cp.async copies (LDGSTS)", sum(counts["async_copies"].values())))
    rows.append(("barriers (BAR)", counts["barriers"]))
    rows.append(("other", mix_categories(counts)["other"]))
    return rows


def mix_table(loop: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows: count and share of the K-loop's body as laid out, and,
    when sass_mix counted it, per K-tile with the inner loop's trips."""
    columns = [("body", loop)]
    if "per_k_tile" in loop:
        columns.append((f"per K-tile (inner loop \u00d7 {loop['per_k_tile']['inner_trips']})",
                        loop["per_k_tile"]))
    header = ["in the K-loop"]
    for title, _ in columns:
        header += [title, "share"]
    table = [mix_rows(counts) for _, counts in columns]
    rows = []
    for index, (label, _) in enumerate(table[0]):
        row = [label]
        for (_, counts), column in zip(columns, table):
            number = dict(column).get(label, 0)
            total = counts["ffma"] if label == REUSE_ROW else counts["instructions"]
            row += [str(number), data.format_percent(100 * number / total) if total else DASH]
        rows.append(row)
    return header, rows


def pick_kernel(results: list[dict], part: str | None, binary: Path) -> dict:
    """The one chapter kernel of a binary (matching ``part``), or an error."""
    kernels = select_kernels(results, part)
    if not kernels:
        wanted = f" whose name contains {part!r}" if part else ""
        raise AnalysisError(f"{binary} has no {KERNEL_PREFIX}* kernel{wanted}")
    if len(kernels) > 1:
        names = "; ".join(short_name(k["name"]) for k in kernels)
        raise AnalysisError(f"{binary} has {len(kernels)} {KERNEL_PREFIX}* kernels ({names}): "
                            "choose one with :kernel:")
    return kernels[0]


# --------------------------------------------------------------------------
# Bank maps (build/bin/bankmap)
# --------------------------------------------------------------------------


def run_bankmap(tool: Path, name: str | None = None, stride: int | None = None,
                width: int = 4) -> dict:
    """One access as ``bankmap --json`` reports it, cached per call."""
    if (name is None) == (stride is None):
        raise AnalysisError("give an access name or a stride, not both and not neither")
    arguments = [name] if name else ["--stride", str(stride), "--width", str(width)]

    def compute():
        done = subprocess.run([str(tool), *arguments, "--json"], capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise AnalysisError(done.stderr.strip() or f"{tool} exited {done.returncode}")
        reports = json.loads(done.stdout)
        if len(reports) != 1:
            raise AnalysisError(f"bankmap returned {len(reports)} reports for {arguments}")
        return reports[0]
    return _cached(("bankmap", *_stamp(tool), *arguments), compute)


def bank_span(bank: int, width_bytes: int) -> str:
    """The banks a lane's access covers: '5', '4\u20135', '4\u20137'."""
    banks = max(1, width_bytes // 4)
    return str(bank) if banks == 1 else f"{bank}\u2013{bank + banks - 1}"


def bank_rows(report: dict, per_row: int = 8) -> list[list[str]]:
    """The lanes in rows of ``per_row`` cells 'lane\u2192bank' ('lane: off' if inactive)."""
    cells = [f"{lane['lane']}\u2192{bank_span(lane['bank'], report['width_bytes'])}"
             if lane["active"] else f"{lane['lane']}: off" for lane in report["lanes"]]
    cells += [""] * (-len(cells) % per_row)
    return [cells[i:i + per_row] for i in range(0, len(cells), per_row)]


def _number(value: float) -> str:
    return f"{value:g}" if value == round(value) else f"{value:.2f}"


def bank_summary(report: dict) -> str:
    """'32 wavefronts, 32-way (ideal 1)'."""
    return (f"{report['wavefronts']} wavefronts, {_number(report['conflict_degree'])}-way "
            f"(ideal {report['ideal_wavefronts']})")


# --------------------------------------------------------------------------
# ncu counters (results/<gpu>/ncu.json)
# --------------------------------------------------------------------------

METRIC = {
    "ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "ld_instructions": "smsp__inst_executed_op_shared_ld.sum",
    "st_instructions": "smsp__inst_executed_op_shared_st.sum",
    "global_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
}


def ncu_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / "ncu.json"


def load_chapters_file(path: Path) -> dict | None:
    """A results file of per-chapter entries written by the measure command
    (ncu.json, issue.json), or None when there is none."""
    if not path.is_file():
        return None
    content = data.read_json(path)
    if not isinstance(content.get("chapters", {}), dict):
        raise data.ResultsError(f"{path}: chapters is not an object")
    return content


def load_ncu(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's ncu.json, or None when it has none."""
    return load_chapters_file(ncu_path(root, gpu))


def ncu_entry(ncu: dict, name: str) -> dict | None:
    """The counters of one chapter (or of "transpose"): {"size", "kernels"}."""
    entry = ncu.get("chapters", {}).get(name)
    if entry is None and isinstance(ncu.get(name), dict):
        entry = ncu[name]
    return entry if isinstance(entry, dict) else None


@dataclass(frozen=True)
class KernelCounters:
    """One kernel's counters, with the ratios the book shows."""

    name: str
    metrics: dict

    def get(self, key: str) -> float | None:
        value = self.metrics.get(METRIC[key])
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def per_instruction(self, op: str) -> float | None:
        """Wavefronts per shared load (op 'ld') or store ('st') instruction."""
        return ratio(self.get(f"{op}_wavefronts"), self.get(f"{op}_instructions"))

    @property
    def sectors_per_request(self) -> float | None:
        return ratio(self.get("global_sectors"), self.get("global_requests"))


def entry_kernels(entry: dict, only_chapter_kernels: bool = True) -> list[KernelCounters]:
    kernels = entry.get("kernels")
    if not isinstance(kernels, dict):
        return []
    return [KernelCounters(name, metrics) for name, metrics in kernels.items()
            if isinstance(metrics, dict) and (not only_chapter_kernels or is_chapter_kernel(name))]


def parse_model(text: str | None, count: int, resolve=None) -> list[float | None]:
    """A model option: one value for every chapter, or one per chapter,
    separated by spaces or commas; a value is a number, '-' for none, or (with
    ``resolve``) a name that resolve(name) turns into a number, e.g. a bankmap
    access whose wavefronts are the model."""
    if text is None:
        return [None] * count
    parts = text.replace(",", " ").split()
    if len(parts) not in (1, count):
        raise AnalysisError(f"give one model value, or {count} (one per chapter): {text!r}")
    values: list[float | None] = []
    for part in parts:
        if part in ("-", DASH):
            values.append(None)
            continue
        try:
            values.append(float(part))
        except ValueError:
            if resolve is None:
                raise AnalysisError(f"a model value is not a number: {part!r}") from None
            values.append(float(resolve(part)))
    return values * count if len(values) == 1 else values


def ncu_header(models: tuple[bool, bool]) -> tuple[list, list[str]]:
    """The two header rows of the {ladder-ncu} table; ``models`` says whether
    the loads and the stores have a model column."""
    top, bottom = ["", ""], ["chapter", "kernel"]
    for op, modelled in zip(("loads", "stores"), models):
        names = ["instructions", "wavefronts", "wavefronts/instr."]
        if modelled:
            names += ["model", "difference"]
        names.append("bank conflicts")
        top.append((f"shared {op}", len(names)))
        bottom += names
    top.append(("global loads", 1))
    bottom.append("sectors/request")
    return top, bottom


def ncu_row(slug: str, kernel: KernelCounters, model_ld: float | None, model_st: float | None,
            models: tuple[bool, bool]) -> list[str]:
    # The base name only: the chapter names the configuration, and the
    # template arguments would make this wide table wider still.
    row = [slug, base_name(kernel.name)]
    for op, model, modelled in (("ld", model_ld, models[0]), ("st", model_st, models[1])):
        instructions = kernel.get(f"{op}_instructions")
        wavefronts = kernel.get(f"{op}_wavefronts")
        per = kernel.per_instruction(op)
        row += [DASH if instructions is None else format_count(instructions),
                DASH if wavefronts is None else format_count(wavefronts), format_ratio(per)]
        if modelled:
            row += [format_ratio(model), format_difference(per, model)]
        conflicts = kernel.get(f"{op}_conflicts")
        row.append(DASH if conflicts is None else format_count(conflicts))
    row.append(format_ratio(kernel.sectors_per_request))
    return row


# --------------------------------------------------------------------------
# The autotuning sweep (results/<gpu>/sweep-<chapter>.json)
# --------------------------------------------------------------------------


def sweep_path(root: str | os.PathLike, gpu: str, chapter: str) -> Path:
    return Path(root) / gpu / f"sweep-{chapter}.json"


@dataclass(frozen=True)
class Sweep:
    """A sweep's configurations, each flattened to: params, status, correct,
    gflops, pct_cublas, registers, blocks_per_sm (the last four may be absent)."""

    data: dict
    configs: list[dict]

    @property
    def correct(self) -> list[dict]:
        """The candidates: correct and timed."""
        return [c for c in self.configs if c["correct"] and "gflops" in c]

    @property
    def winner(self) -> dict | None:
        """The configuration the sweep chose: its "winner" params, else the fastest correct."""
        chosen = self.data.get("winner")
        params = chosen.get("params") if isinstance(chosen, dict) else None
        if params is not None:
            for config in self.configs:
                if config["params"] == params:
                    return config
        return max(self.correct, key=lambda c: c["gflops"], default=None)

    @property
    def median_gflops(self) -> float | None:
        value = self.data.get("median_gflops")
        if _is_number(value):
            return float(value)
        rates = [c["gflops"] for c in self.correct]
        return statistics.median(rates) if rates else None

    @property
    def size(self) -> tuple[int, int, int] | None:
        size = self.data.get("size")
        if isinstance(size, str):
            return data.parse_size(size)
        if isinstance(size, list) and len(size) == 3:
            return tuple(size)
        return None

    def top(self, count: int = 10) -> list[dict]:
        return sorted(self.correct, key=lambda c: -c["gflops"])[:count]

    def parameter_names(self) -> list[str]:
        names: list[str] = []
        for config in self.configs:
            for name in config["params"]:
                if name not in names:
                    names.append(name)
        return names


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _flatten_config(config: dict, where: str) -> dict:
    """One configuration in either layout: code/sweep.py's {"params", "result":
    {"status", "gflops", ..., "resources": {...}}}, or flat {"params",
    "correct", "gflops", ..., "registers", "blocks_per_sm"}."""
    if not isinstance(config, dict) or not isinstance(config.get("params"), dict):
        raise data.ResultsError(f"{where}.params is missing")
    result = config.get("result")
    if isinstance(result, dict):
        status = result.get("status")
        if not isinstance(status, str):
            raise data.ResultsError(f"{where}.result.status is missing")
        resources = result.get("resources") or {}
        flat = {"params": config["params"], "status": status, "correct": status == "correct",
                "gflops": result.get("gflops"), "pct_cublas": result.get("pct_cublas"),
                "registers": resources.get("registers_per_thread"),
                "blocks_per_sm": resources.get("blocks_per_sm")}
    else:
        if not isinstance(config.get("correct"), bool):
            raise data.ResultsError(f"{where}.correct is missing")
        flat = {key: config.get(key) for key in
                ("params", "correct", "gflops", "pct_cublas", "registers", "blocks_per_sm")}
        flat["status"] = "correct" if config["correct"] else "incorrect"
    return {key: value for key, value in flat.items()
            if key in ("params", "status", "correct") or _is_number(value)}


def parse_sweep(content: dict, where: str) -> Sweep:
    """A sweep file's content, checked, its configurations flattened."""
    configs = content.get("configs")
    if not isinstance(configs, list) or not configs:
        raise data.ResultsError(f"{where}: configs is missing or empty")
    flat = [_flatten_config(config, f"{where}: configs[{index}]")
            for index, config in enumerate(configs)]
    return Sweep(content, flat)


def load_sweep(root: str | os.PathLike, gpu: str, chapter: str) -> Sweep | None:
    path = sweep_path(root, gpu, chapter)
    if not path.is_file():
        return None
    return parse_sweep(data.read_json(path), str(path))


_CHOSEN = re.compile(r"using\s+Chosen\s*=\s*Tiling<([^>]*)>\s*;")


def committed_config(sweep: Sweep, kernel_source: str) -> dict | None:
    """The configuration the chapter's kernel file commits to (its
    ``using Chosen = Tiling<...>;``), found among the sweep's configurations;
    None when the file names none or the sweep did not run it."""
    match = _CHOSEN.search(kernel_source)
    if not match:
        return None
    try:
        values = [int(v) for v in match.group(1).split(",")]
    except ValueError:
        return None
    names = sweep.parameter_names()
    if len(values) != len(names):
        return None
    params = dict(zip(names, values))
    return next((c for c in sweep.configs if c["params"] == params), None)


def sweep_rows(sweep: Sweep, count: int = 10,
               committed: dict | None = None) -> tuple[list[str], list[list[str]]]:
    """The top ``count`` correct configurations: rank, parameters, rate, % of
    cuBLAS; the fastest and the one the kernel file commits to are marked."""
    names = sweep.parameter_names()
    winner = sweep.winner
    header = ["#", *names, "GFLOP/s", "% of cuBLAS", "registers", "blocks/SM"]
    rows = []
    for rank, config in enumerate(sweep.top(count), start=1):
        pct = config.get("pct_cublas")
        marks = [m for m, c in (("fastest", winner), ("committed", committed)) if config is c]
        rows.append([
            f"{rank} ({', '.join(marks)})" if marks else str(rank),
            *(str(config["params"].get(name, DASH)) for name in names),
            data.format_gflops(config["gflops"]),
            data.format_percent(pct) if isinstance(pct, (int, float)) else DASH,
            str(config.get("registers", DASH)), str(config.get("blocks_per_sm", DASH)),
        ])
    return header, rows


def sweep_pairs(sweep: Sweep, name: str) -> dict | None:
    """How one two-valued parameter of a sweep moves the rate: the correct
    configurations are paired when they differ in ``name`` only, and for each
    pair the ratio of rates (the larger value of ``name`` over the smaller) is
    taken. Returns the two values, the number of pairs, how many the larger
    value wins, and the median, smallest and largest ratio; None when there
    is no pair (also when the sweep did not vary ``name``)."""
    values = sorted({c["params"][name] for c in sweep.configs if name in c["params"]})
    if len(values) > 2:
        raise data.ResultsError(f"sweep parameter {name!r} must take two values, not {values}")
    if len(values) < 2:
        return None  # an older sweep, or one that did not vary it
    low, high = values
    rates: dict[tuple, dict] = {}
    for config in sweep.correct:
        rest = tuple(sorted((k, v) for k, v in config["params"].items() if k != name))
        rates.setdefault(rest, {})[config["params"][name]] = config["gflops"]
    ratios = [pair[high] / pair[low] for pair in rates.values() if len(pair) == 2]
    if not ratios:
        return None
    return {"low": low, "high": high, "pairs": len(ratios),
            "high_wins": sum(1 for r in ratios if r > 1.0),
            "median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


# --------------------------------------------------------------------------
# Chapter 10's transpose exercise (results/<gpu>/transpose.json)
# --------------------------------------------------------------------------

TRANSPOSE_FILE = "transpose.json"
#: Which kernel of the transpose binary each variant runs (a part of its name).
TRANSPOSE_KERNELS = {
    "copy": "copy_tiles",
    "naive": "transpose_naive",
    "tiled_32x32": "Layout32x32",
    "tiled_32x33": "Layout32x33",
    "tiled_swizzled": "LayoutSwizzled",
}


def transpose_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / TRANSPOSE_FILE


def load_transpose(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's transpose.json, checked, or None when it has none."""
    path = transpose_path(root, gpu)
    if not path.is_file():
        return None
    content = data.read_json(path)
    sizes = content.get("sizes")
    if not isinstance(sizes, list) or not sizes:
        raise data.ResultsError(f"{path}: sizes is missing or empty")
    for index, size in enumerate(sizes):
        if not (isinstance(size, dict) and isinstance(size.get("rows"), int)
                and isinstance(size.get("cols"), int) and isinstance(size.get("variants"), dict)):
            raise data.ResultsError(f"{path}: sizes[{index}] needs rows, cols and variants")
    return content


TRANSPOSE_HEADER = ["variant", "ms: median [min\u2013max]", "GB/s", "% of cudaMemcpy", "correct"]


def transpose_rows(size: dict) -> list[list[str]]:
    """One size's table: every variant, then cudaMemcpy."""
    rows = []
    for name, variant in size["variants"].items():
        timed = isinstance(variant.get("time_ms"), dict)
        correct = "yes" if variant.get("correct") else "NO"
        if variant.get("mismatches"):
            correct += f" ({format_count(variant['mismatches'])} differ)"
        rows.append([
            name,
            data.format_time_range(variant["time_ms"]) if timed else "not timed",
            f"{variant['gbs']:,.0f}" if timed else DASH,
            data.format_percent(variant["pct_memcpy"]) if timed else DASH,
            correct,
        ])
    memcpy = size.get("memcpy")
    if isinstance(memcpy, dict) and isinstance(memcpy.get("time_ms"), dict):
        rows.append(["cudaMemcpy", data.format_time_range(memcpy["time_ms"]),
                     f"{memcpy['gbs']:,.0f}", data.format_percent(100.0), ""])
    return rows


def transpose_counter_rows(entry: dict, variants: list[str]) -> list[list[str]]:
    """Per variant, the shared-load counters of the kernel it runs."""
    kernels = entry_kernels(entry, only_chapter_kernels=False)
    rows = []
    for variant in variants:
        part = TRANSPOSE_KERNELS.get(variant, variant)
        kernel = next((k for k in kernels if part in k.name), None)
        if kernel is None:
            rows.append([variant, DASH, DASH, DASH, DASH])
            continue
        counts = [kernel.get(key) for key in ("ld_instructions", "ld_wavefronts", "ld_conflicts")]
        shown = [DASH if value is None else format_count(value) for value in counts]
        rows.append([variant, shown[0], shown[1], format_ratio(kernel.per_instruction("ld")),
                     shown[2]])
    return rows


# --------------------------------------------------------------------------
# issue.json: where the issue slots go (the measure command, chapters 11, 12)
# --------------------------------------------------------------------------

#: Stall reasons shown, in this order: cycles per issued instruction that an
#: average warp spent stalled for each (ncu's ..._per_issue_active.ratio).
ISSUE_STALLS = [
    ("not_selected", "another warp was issued instead (not selected)"),
    ("dispatch_stall", "held back at dispatch (dispatch stall)"),
    ("short_scoreboard", "waiting for a shared-memory load (short scoreboard)"),
    ("wait", "waiting a fixed latency (wait)"),
    ("barrier", "waiting at __syncthreads() (barrier)"),
    ("no_instruction", "no instruction fetched (no instruction)"),
    ("long_scoreboard", "waiting for a global load (long scoreboard)"),
    ("math_pipe_throttle", "FMA pipe busy (math pipe throttle)"),
    ("mio_throttle", "shared-memory queue full (MIO throttle)"),
]


def issue_path(root: str | os.PathLike, gpu: str) -> Path:
    return Path(root) / gpu / "issue.json"


def load_issue(root: str | os.PathLike, gpu: str) -> dict | None:
    """A GPU's issue.json, or None when it has none."""
    return load_chapters_file(issue_path(root, gpu))


def issue_kernels(entry: dict) -> tuple[tuple[str, dict], tuple[str, dict]] | None:
    """(the chapter's kernel, cuBLAS's kernel), each as (name, metrics), from
    one chapter's entry of issue.json; None when either is missing. Every
    chapter kernel is named sgemm_*; cuBLAS's is the other one."""
    kernels = entry.get("kernels") if isinstance(entry, dict) else None
    if not isinstance(kernels, dict):
        return None
    ours = [(n, m) for n, m in kernels.items() if "sgemm_" in n]
    theirs = [(n, m) for n, m in kernels.items() if "sgemm_" not in n]
    if len(ours) != 1 or len(theirs) != 1:
        return None
    return ours[0], theirs[0]


def issue_rows(ours: dict, theirs: dict) -> list[list[str]]:
    """The rows of the issue table: a quantity, then its value for the
    chapter's kernel and for cuBLAS's. A metric that is missing shows a dash."""

    def get(metrics: dict, name: str) -> float | None:
        value = metrics.get(name)
        return float(value) if isinstance(value, (int, float)) else None

    def fmt(value: float | None, spec: str, scale: float = 1.0) -> str:
        return DASH if value is None else format(value * scale, spec)

    def ffma_share(metrics: dict) -> float | None:
        ffma = get(metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
        issued = get(metrics, "smsp__inst_executed.sum")
        return None if not ffma or not issued else 100.0 * ffma / 32.0 / issued

    rows = []
    for label, name, spec, scale in [
        ("registers per thread", "launch__registers_per_thread", ".0f", 1.0),
        ("threads per block", "launch__block_size", ".0f", 1.0),
        ("blocks", "launch__grid_size", ".0f", 1.0),
        ("time (ms)", "gpu__time_duration.sum", ".3f", 1e-6),
        ("SM clock during the kernel (GHz)", "sm__cycles_elapsed.avg.per_second", ".3f", 1e-9),
        ("warp instructions issued (billions)", "smsp__inst_executed.sum", ".3f", 1e-9),
    ]:
        rows.append([label, fmt(get(ours, name), spec, scale), fmt(get(theirs, name), spec, scale)])
    rows.append(["FFMA share of the instructions (%)", fmt(ffma_share(ours), ".1f"),
                 fmt(ffma_share(theirs), ".1f")])
    for label, name in [
        ("warps per scheduler", "smsp__warps_active.avg.per_cycle_active"),
        ("instructions issued per scheduler per cycle", "smsp__issue_active.avg.per_cycle_active"),
    ]:
        rows.append([label, fmt(get(ours, name), ".2f"), fmt(get(theirs, name), ".2f")])
    for reason, label in ISSUE_STALLS:
        name = f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
        rows.append([f"stall: {label}", fmt(get(ours, name), ".2f"), fmt(get(theirs, name), ".2f")])
    return rows
