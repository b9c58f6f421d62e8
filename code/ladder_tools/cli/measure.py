"""The measure command: everything the book reports, measured on this GPU.

    python3 code/measure.py [--quick] [--chapters 01-naive 02-coalescing ... | --changed]
                            [--seed N]

On a machine with an NVIDIA GPU it
  1. configures and builds Release for this GPU's architecture (build/measure),
  2. measures the two ceilings (FP32 FMA peak, copy bandwidth),
  3. runs the GPU tests (ctest -L gpu),
  4. benchmarks every chapter at 256 ... 8192 against cuBLAS (with
     --changed, only the chapters whose results on this GPU are missing or
     stale),
  5. runs compute-sanitizer (memcheck, racecheck, synccheck) on every chapter
     at a small size,
  6. reads ncu's shared-memory counters for every chapter at one size, and
     for chapters 11 and 12 the issue rate and stall reasons of their kernel
     and of cuBLAS's (results/<gpu>/issue.json),
  7. draws 24 random problems (ladder_tools.results.random_problems: a fresh seed,
     printed, or --seed N to draw the same again) and times the book's three
     final kernels (chapters 13, 16 and 17) on them beside cuBLAS
     (results/<gpu>/random.json): in a run of every chapter, of --chapters
     that names one of the three or "random", and of --changed when one of
     them is re-measured or random.json is missing or stale,
and, only when the run passes the checks CI runs on committed results
(code/ladder_tools/results/results_check.py: the GPU tests passed, every program exited 0, every
chapter binary wrote a result, every size is correct, every sanitizer
verdict is clean), writes all of it to results/<gpu>/, where <gpu> is the
slug the chapter binaries report ("h200" for an NVIDIA H200). A run that
fails them writes nothing there: it lists what failed, says so in one line
and exits with 1. It prints progress as it goes (each benchmark run with an
estimate of the time left) and a summary table last. Nothing in results/ is
written any other way.

--quick is a first look, meant to take under 3 minutes on a Hopper GPU,
build included (not yet timed there): it builds the chapter binaries
alone, caps every size list at 2048 (a square or MxNxK problem with any
dimension over 2048 is dropped),
warms up 50 ms before each size instead of 300, and runs no GPU tests,
sanitizer, ncu or random problems. Its results are
partial, so it writes nothing to results/ (whose full results it would
replace): it prints the table and leaves its files in a temporary folder.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import dataclasses
import functools
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Set
from pathlib import Path

from ladder_tools import provenance, results
from ladder_tools.analysis import binaries
from ladder_tools.process import run
from ladder_tools.results import TIME_BUDGET_S, pending, random_problems, results_check
from ladder_tools.results.metrics import ISSUE_METRICS, NCU_METRICS

ROOT = provenance.ROOT
SIZES = ["256", "512", "1024", "2048", "4096", "8192"]
SANITIZER_TOOLS = results_check.SANITIZER_TOOLS
NCU_SIZE = "4096"
# Where the issue slots go: for these chapters, ncu also reads how often the
# schedulers issue, how many instructions and FFMAs they issue, the SM clock
# during the kernel, and why warps stall (cycles per issued instruction, by
# reason), for the chapter's kernel and for cuBLAS's in the same run
# (ISSUE_METRICS, ladder_tools/results/metrics.py).
ISSUE_CHAPTERS = ["11-double-buffering", "12-final"]
START = time.monotonic()
# The source files of the programs that are not chapters (a chapter's result
# names its own source).
TRANSPOSE_SOURCE = "chapters/10-padding/exercise/transpose.cu"
# The name --chapters takes for chapter 10's transpose exercise.
TRANSPOSE = "transpose"
# The name --chapters takes for the random problems (random.json) alone.
RANDOM = "random"
# The chapters the random problems time (their goals: random_problems).
RANDOM_CHAPTERS = list(random_problems.RANDOM_CHAPTERS)
# --quick's cap: a size with any dimension over it is not measured.
QUICK_LIMIT = 2048
# --quick's warm-up before each size, in ms (the binaries' --warmup-ms; 300
# by default). Warm-up at every size took most of a quick run's time: 16-wgmma
# spent 2.4 s of its 2.5 s warming up its eight sizes. Each binary's first size
# finds the GPU warm from the last binary's run, and the run writes nothing to
# results/, so a first look warms up for less.
QUICK_WARMUP_MS = 50
BASELINE_SOURCE = "code/tools/baseline.cu"
# The fuzzer's own files (each fuzz program is also built from its chapter's
# kernel header, which the chapters' inputs hold).
FUZZ_SOURCES = ["code/include/ladder/fuzz.cuh", "tests/gpu/fuzz.cu", "tests/gpu/CMakeLists.txt"]


def say(message: str) -> None:
    print(f"[measure {time.monotonic() - START:6.1f} s] {message}", flush=True)


def shown(path: Path) -> str:
    """A path as the progress lines show it: from the repository's root when
    it lies inside it (build/measure), else whole (--build-dir /tmp/b)."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


class Progress:
    """The progress line of each benchmark run: how far the run is, and an
    estimate of the time the runs left will take: their count times the
    mean time of the runs so far (before the first has ended, times the
    time budget of one size, results.TIME_BUDGET_S). An estimate, not a
    bound: a run of larger sizes takes longer than the mean."""

    def __init__(self, total: int, budget_s: float = TIME_BUDGET_S,
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.budget_s, self.clock = total, budget_s, clock
        self.done, self.spent = 0, 0.0
        self.started: float | None = None

    def start(self, what: str) -> None:
        left = self.total - self.done
        each, basis = ((self.spent / self.done, "their mean so far") if self.done
                       else (self.budget_s, "the time budget of one size"))
        say(f"[{self.done + 1}/{self.total}] {what}; about {left * each:.0f} s of benchmark "
            f"runs left (an estimate: {left} runs \u00d7 {each:.1f} s, {basis})")
        self.started = self.clock()

    def end(self) -> None:
        if self.started is not None:
            self.spent += self.clock() - self.started
            self.done += 1
            self.started = None


PROGRESS = Progress(0)


def build(build_dir: Path, targets: list[str] | None = None) -> None:
    """Configures and builds Release in `build_dir`: everything, or only
    `targets` (--quick: the binaries it runs, no tests or fuzzers)."""
    say(f"configuring and building Release in {shown(build_dir)}"
        + (f" ({len(targets)} targets)" if targets else ""))
    configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release", "-DLADDER_FUZZ_ALL=ON"]
    compile_ = ["cmake", "--build", str(build_dir), "--parallel"]
    if targets:
        compile_ += ["--target", *targets]
    for cmd in (configure, compile_):
        done = run(cmd)
        if done.returncode != 0:
            sys.exit(f"measure: {' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")


@dataclasses.dataclass(frozen=True)
class Program:
    """One thing the measure command measures: a chapter's binary run as one
    of its variants. `name` is the result's name (the chapter's folder, or
    "<folder>-<variant>"), `chapter` the chapter's folder."""
    name: str
    chapter: str
    command: tuple[str, ...]  # the binary, and --variant NAME for a variant


def describe(binary: Path) -> dict:
    """What a chapter binary says of itself (--describe, read by
    binaries.describe()), with no GPU work; the command stops with one line
    where it cannot say."""
    try:
        return binaries.describe(binary)
    except binaries.AnalysisError as error:
        sys.exit(f"measure: {error}")


def built_chapters(build_dir: Path) -> list[str]:
    """The chapters whose binary the build holds: all of them, but where the
    build targets a GPU older than a chapter needs (cmake/Ladder.cmake's
    MIN_ARCH leaves Part II's chapters out there)."""
    return [c for c in chapter_folders() if (build_dir / "bin" / c).is_file()]


def declared_binaries(build_dir: Path) -> list[str]:
    """Every chapter binary the build holds, as the built chapters describe
    them: each chapter's own and its variants (binaries.declared_binaries)."""
    return binaries.declared_binaries(ROOT, build_dir, built_chapters(build_dir))


def chapter_folders() -> list[str]:
    """The chapters' folder names, in order."""
    return sorted(p.name for p in (ROOT / "chapters").iterdir() if (p / "kernel.cu").exists())


def chapter_target(chapter: str) -> str:
    """What builds the chapter's binary: its file, bin/<chapter>, which Ninja
    (the generator build() configures) takes as a target, whatever the CMake
    target is called."""
    return f"bin/{chapter}"


def chapter_programs(build_dir: Path, wanted: list[str]) -> list[Program]:
    """Every chapter (of those `wanted`, all when empty) and every variant
    its binary describes, the chapter's own first."""
    programs = []
    for chapter in chapter_folders():
        if wanted and chapter not in wanted:
            continue
        binary = build_dir / "bin" / chapter
        for variant in describe(binary)["variants"]:
            flags = () if variant["slug"] == chapter else ("--variant", variant["name"])
            programs.append(Program(variant["slug"], chapter, (str(binary), *flags)))
    return programs


@functools.cache
def inputs_of(source: str) -> dict[str, str]:
    """{path: SHA-256} of every project file the program built from `source`
    depends on (ladder_tools.provenance), computed once per source."""
    return provenance.inputs_of(ROOT / source)


def with_inputs(result: dict, source: str) -> dict:
    """A results file's content with its provenance's `inputs` filled in."""
    return {**result, "provenance": {**result["provenance"], "inputs": inputs_of(source)}}


def merge_write(path: Path, common: dict, key: str, entries: dict, sources: dict,
                ran: Set[str] = frozenset()) -> None:
    """Writes common + {key: entries}; a partial run (--chapters) keeps the
    entries of chapters it did not run from the file already there, and
    drops those of the chapters it ran (`ran`, their folders) that it did
    not write: variants the chapter no longer has. Each new entry records
    the commit and date it was measured at, since after a partial run the
    file's header speaks only for the latest one, and the inputs of its
    program (`sources`: entry name -> source file), so that each entry can
    be found stale on its own."""
    merged = {}
    if path.exists():
        merged = {name: entry for name, entry in results.read_json(path).get(key, {}).items()
                  if not any(name == c or name.startswith(f"{c}-") for c in ran)}
    stamp = {"git_commit": common["git_commit"], "date": common["date"]}
    merged.update({name: {**entry, "measured": {**stamp, "inputs": inputs_of(sources[name])}}
                   for name, entry in entries.items()})
    path.write_text(json.dumps({**common, key: dict(sorted(merged.items()))}, indent=2) + "\n")


def gpu_tests(build_dir: Path) -> dict:
    say("running the GPU tests (ctest -L gpu)")
    junit = build_dir / "gpu-tests.xml"
    fuzz_dir = build_dir / "fuzz"
    for old in fuzz_dir.glob("*.json"):  # each fuzz test writes its own anew
        old.unlink()
    done = run(["ctest", "--test-dir", str(build_dir), "-L", "gpu", "--output-on-failure",
                "-j", "4", "--output-junit", str(junit)])
    summary = ctest_summary(done.returncode, done.stdout)
    # The differential fuzzer's runs (tests/gpu): per chapter, its seeds and
    # how many problems it tried and failed.
    summary["fuzz"] = {path.stem: results.read_json(path)
                       for path in sorted(fuzz_dir.glob("*.json"))}
    tried = sum(f["problems"] for f in summary["fuzz"].values())
    say(f"the fuzzer tried {tried} problems over {len(summary['fuzz'])} chapters")
    return summary


def ctest_summary(returncode: int, stdout: str) -> dict:
    """gpu-tests.json's fields from ctest's exit status and output: its
    summary line, and the lines of the tests that failed or were skipped
    (on a GPU no GPU test skips; one that does has not tested anything)."""
    lines = stdout.splitlines()
    summary = [line for line in lines if "tests passed" in line]
    failed: list[str] = []
    skipped: list[str] = []
    for line in lines:
        # One progress line per test: " 3/17 Test  #3: gpu.03-flat-block ....   Passed    1.20 sec"
        # (or ***Failed, ***Skipped, ***Timeout, ***Exception: ..., ***Not Run).
        match = re.match(r"\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(.*?)\s+[\d.]+ sec$", line)
        if not match or match.group(2) == "Passed":
            continue
        name, outcome = match.group(1), match.group(2).lstrip("*")
        (skipped if outcome == "Skipped" else failed).append(f"{name} ({outcome})")
    say(summary[0] if summary else "ctest printed no summary")
    return {"returncode": returncode, "summary": summary[0] if summary else "",
            "failed": failed, "skipped": skipped}


def baseline(build_dir: Path, out: Path) -> None:
    say("measuring the ceilings (FMA peak, copy bandwidth)")
    done = run([str(build_dir / "bin" / "baseline"), "--json", str(out)])
    say(done.stdout.strip() or done.stderr.strip())


def read_sizes(listing: Path) -> list[str]:
    """The sizes (or names) in a list, one or more per line (# starts a comment)."""
    if not listing.exists():
        return []
    lines = [line.split("#")[0] for line in listing.read_text().splitlines()]
    return " ".join(lines).split()


def extra_sizes(program: Program) -> list[str]:
    """Sizes a chapter asks to be measured at besides the standard ones:
    chapters/<chapter>/extra-sizes for the chapter and its variants, and
    chapters/<chapter>/own-sizes for the chapter's own binary alone (sizes
    a figure of the chapter's kernel needs, which its variants would only
    make the run longer) and for the variants named in
    chapters/<chapter>/own-sizes-variants."""
    folder = ROOT / "chapters" / program.chapter
    sizes = read_sizes(folder / "extra-sizes")
    variant = program.name.removeprefix(program.chapter).removeprefix("-")
    if not variant or variant in read_sizes(folder / "own-sizes-variants"):
        sizes += read_sizes(folder / "own-sizes")
    return sizes


def dims(size: str) -> tuple[int, int, int]:
    """M, N, K of a size as the chapter binaries take it: "4096" or "MxNxK"."""
    parts = [int(d) for d in size.lower().split("x")]
    return (parts[0],) * 3 if len(parts) == 1 else (parts[0], parts[1], parts[2])


def distinct(sizes: list[str]) -> list[str]:
    """The sizes in order, each product once: "256" and "256x256x256" are
    one size, and a second would be measured (and recorded) twice."""
    seen: set[tuple[int, int, int]] = set()
    kept = []
    for size in sizes:
        if dims(size) not in seen:
            seen.add(dims(size))
            kept.append(size)
    return kept


def capped(sizes: list[str], limit: int | None) -> list[str]:
    """The sizes with no dimension over `limit` (all of them when None):
    --quick's cap, for squares and MxNxK problems alike."""
    return [s for s in sizes if limit is None or max(dims(s)) <= limit]


def benchmark(program: Program, out: Path, sizes: list[str], extras: bool = True,
              limit: int | None = None, warmup_ms: float | None = None) -> dict:
    """Times `program` at `sizes` and, with `extras`, at the sizes its
    chapter lists besides (extra_sizes()), leaving out every size with a
    dimension over `limit` (--quick: QUICK_LIMIT), each size after a warm-up
    of `warmup_ms` (None: the binary's own; --quick: QUICK_WARMUP_MS)."""
    sizes = capped(distinct(sizes + (extra_sizes(program) if extras else [])), limit)
    if not sizes:  # --quick --sizes 4096: nothing under the cap (no run, no result)
        say(f"{program.name}: no size within {limit} in every dimension; not run")
        PROGRESS.total -= 1
        return {"returncode": 0}
    PROGRESS.start(f"benchmarking {program.name} at {' '.join(sizes)}")
    warmup = [] if warmup_ms is None else ["--warmup-ms", f"{warmup_ms:g}"]
    done = run([*program.command, "--sizes", *sizes, "--budget-s", str(TIME_BUDGET_S),
                *warmup, "--json", str(out)])
    PROGRESS.end()
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        print(done.stderr, end="", flush=True)
    return {"returncode": done.returncode}


def random_pass(build_dir: Path, folder: Path, seed: int) -> tuple[list[dict], dict]:
    """Times the final kernels (RANDOM_CHAPTERS) on the problems of `seed`,
    each binary once with all of them, its inputs filled from the seed too,
    writing <folder>/<chapter>.json. Returns the problems and each binary's
    exit status ({"random <chapter>": {"returncode": ...}})."""
    problems = random_problems.draw(seed)
    say(f"random problems, seed {seed} (--seed {seed} draws them again): "
        + " ".join(random_problems.size_text(p) for p in problems))
    folder.mkdir(parents=True, exist_ok=True)
    status = {}
    for chapter in RANDOM_CHAPTERS:
        PROGRESS.start(f"timing {chapter} on the {len(problems)} random problems")
        done = run([str(build_dir / "bin" / chapter), "--sizes",
                    *(random_problems.size_text(p) for p in problems),
                    "--budget-s", str(random_problems.RANDOM_BUDGET_S), "--seed", str(seed),
                    "--json", str(folder / f"{chapter}.json")])
        PROGRESS.end()
        print(done.stdout, end="", flush=True)
        if done.returncode != 0:
            print(done.stderr, end="", flush=True)
        status[f"random {chapter}"] = {"returncode": done.returncode}
    return problems, status


def random_result(seed: int, problems: list[dict], folder: Path) -> dict | None:
    """random.json's content from the final kernels' runs in `folder`
    (random_pass), None when none of them wrote a file: the seed, the
    problems, the inputs of the three programs together (the file is stale
    when any changes), and for each chapter its goal, its sizes as the
    binary wrote them (one per problem) and its provenance, inputs included."""
    runs = {c: folder / f"{c}.json" for c in RANDOM_CHAPTERS}
    if not any(path.exists() for path in runs.values()):
        return None
    chapters, inputs = {}, {}
    for chapter, path in runs.items():
        source = f"chapters/{chapter}/kernel.cu"
        inputs.update(inputs_of(source))
        if not path.exists():
            continue
        written = with_inputs(results.read_json(path), source)
        goal = random_problems.RANDOM_CHAPTERS[chapter]
        chapters[chapter] = {"goal": {"percent": goal.percent, "against": goal.against},
                             "sizes": written["sizes"], "provenance": written["provenance"]}
    first = next(iter(chapters.values()))["provenance"]
    return {"schema": 1, "gpu": first["gpu"], "gpu_slug": first.get("gpu_slug"),
            "date": first["date"], "git_commit": first.get("git_commit"), "seed": seed,
            "budget_s": random_problems.RANDOM_BUDGET_S, "problems": problems,
            "inputs": dict(sorted(inputs.items())), "chapters": chapters}


def smallest_accepted(program: Program) -> str | None:
    """The smallest of 128, 256, 512 the chapter accepts. A refused size
    exits with 2 before anything is launched, so asking costs nothing."""
    for size in ["128", "256", "512"]:
        if run([*program.command, "--sizes", size, "--check-only"], timeout=120).returncode != 2:
            return size
    return None


def sanitizer_sizes(program: Program, smallest: str) -> list[str]:
    """The smallest square size the chapter accepts, and its small extra
    sizes (edges and the general path of a chapter that takes any size)."""
    def small(size: str) -> bool:
        m, n, k = dims(size)
        return m * n * k <= 1 << 24
    return distinct([smallest] + [s for s in extra_sizes(program) if small(s)])


def sanitize(command: tuple[str, ...], sizes: list[str]) -> dict:
    """compute-sanitizer's tools on one program (its command line) at `sizes`."""
    verdicts = {}
    size = " ".join(sizes)
    for tool in SANITIZER_TOOLS:
        cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99",
               *command, "--sizes", *sizes, "--check-only"]
        if tool == "memcheck":
            cmd[3:3] = ["--leak-check", "full"]
        done = run(cmd, timeout=300)
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        verdicts[tool] = {"clean": done.returncode == 0, "returncode": done.returncode,
                         "size": size, "tail": tail}
    return verdicts


def ncu_chapter(program: Program, size: str, metrics: list[str], kernels: str,
                launches: int) -> dict:
    """ncu's `metrics` for the first `launches` kernels whose function name
    matches the regular expression `kernels`, in a correctness run of one
    program at `size`."""
    cmd = ["ncu", "--clock-control", "none", "--csv", "--metrics", ",".join(metrics),
           "--kernel-name-base", "function", "--kernel-name", f"regex:{kernels}",
           "--launch-count", str(launches), *program.command, "--sizes", size, "--check-only"]
    return parse_ncu_csv(run(cmd, timeout=300), size)


def ncu_counters(program: Program, size: str) -> dict:
    """ncu's shared-memory counters for the chapter's kernel (every chapter
    kernel's name starts with sgemm_; cuBLAS's and the input fill's do not),
    one launch of a correctness run."""
    return ncu_chapter(program, size, NCU_METRICS, "^sgemm_", 1)


def issue_profile(program: Program, size: str) -> dict:
    """ISSUE_METRICS for the chapter's kernel and for cuBLAS's, one launch of
    each in a correctness run (the fill kernel's name has no "gemm")."""
    return ncu_chapter(program, size, ISSUE_METRICS, "gemm", 2)


def parse_ncu_csv(done: subprocess.CompletedProcess, size: str) -> dict:
    """{"size", "kernels": {kernel name: {metric: value}}} from ncu's --csv."""
    kernels: dict[str, dict] = {}
    text = done.stdout
    start = text.find('"ID"')
    if start < 0:
        return {"error": (done.stdout + done.stderr).strip().splitlines()[-5:]}
    for row in csv.DictReader(io.StringIO(text[start:])):
        name = row.get("Kernel Name", "?")
        value = row.get("Metric Value", "").replace(",", "")
        try:
            number = float(value)
        except ValueError:
            continue
        kernels.setdefault(name, {})[row["Metric Name"]] = number
    return {"size": size, "kernels": kernels}


def transpose_exercise(build_dir: Path, out: Path) -> dict:
    """Chapter 10's exercise: the transpose variants at their default sizes."""
    binary = build_dir / "bin" / "transpose"
    if not binary.exists():
        return {}
    say("benchmarking the transpose exercise (chapter 10)")
    done = run([str(binary), "--json", str(out)])
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        print(done.stderr, end="", flush=True)
    return {"returncode": done.returncode}


def transpose_counters(build_dir: Path, size: str) -> dict:
    """ncu's shared-memory counters for every transpose variant's kernel,
    named in full (the tiled variants are one template, three layouts)."""
    cmd = ["ncu", "--clock-control", "none", "--csv", "--metrics", ",".join(NCU_METRICS),
           "--kernel-name-base", "demangled", "--kernel-name", "regex:transpose|copy_tiles",
           "--launch-count", "10", str(build_dir / "bin" / "transpose"), "--sizes", size,
           "--check-only"]
    return parse_ncu_csv(run(cmd, timeout=300), size)


def refusal(tests: dict | None, status: dict, chapters: dict, expected: list[str],
            sanitizer: dict, sanitized: list[str], random: dict | None = None) -> list[str]:
    """Why a run's results must not be written, one line each (empty: they
    may be). `tests` is the GPU tests' summary (ctest_summary; None when
    they did not run, in a --quick run, which writes nothing), `status` each
    program's exit status ({name: {"returncode": ...}}), `chapters` the
    chapter results the run wrote ({name: result}), `expected` the chapter
    binaries it ran, `sanitizer` the sanitizer verdicts ({name: {tool:
    verdict}}) and `sanitized` the binaries that must have one (none when
    the sanitizer was not run), `random` random.json's content when the run
    drew random problems. The checks are the ones CI runs on committed
    results (code/ladder_tools/results/results_check.py)."""
    problems = results_check.gpu_test_failures(tests) if tests is not None else []
    problems += [f"{name} exited with {s['returncode']}" for name, s in status.items()
                 if s["returncode"] != 0]
    problems += results_check.missing_results(chapters, expected)
    problems += results_check.incorrect_sizes(chapters)
    problems += results_check.identity_errors(chapters)
    problems += results_check.unclean_sanitizers(sanitizer, sanitized)
    problems += results_check.random_problems(random)
    return problems


def binaries_of(chapter: str, declared: list[str]) -> list[str]:
    """The binaries of `declared` that chapter folder `chapter` builds: itself
    and its variants, <chapter>-<variant>."""
    return [name for name in declared if name == chapter or name.startswith(chapter + "-")]


def changed_chapters(root: Path, gpu_folder: Path, declared: list[str],
                     folders: list[str] | None = None) -> list[str]:
    """The chapters (folder names, TRANSPOSE for chapter 10's exercise and
    RANDOM for the random problems) that `gpu_folder` (results/<gpu>) holds
    no result for, or a result of which was built from a file that has
    changed since: what `--changed` measures. A chapter counts when any
    binary it declares does. (A run that measures one of RANDOM_CHAPTERS
    draws the random problems too: measures_random.)"""

    def fresh(path: Path) -> bool:
        # A result records its inputs in its provenance; random.json, one
        # file for three programs, records them at its top.
        if not path.exists():
            return False
        content = results.read_json(path)
        return pending.changed(content.get("provenance", content), root) == []

    wanted = []
    for chapter in folders if folders is not None else chapter_folders():
        if not all(fresh(gpu_folder / "chapters" / f"{n}.json")
                   for n in binaries_of(chapter, declared)):
            wanted.append(chapter)
    if not fresh(gpu_folder / "transpose.json"):
        wanted.append(TRANSPOSE)
    if not fresh(gpu_folder / "random.json"):
        wanted.append(RANDOM)
    return wanted


def measures_transpose(wanted: list[str]) -> bool:
    """Whether a run of --chapters `wanted` measures the transpose exercise:
    a run of every chapter does, and a run that names it."""
    return not wanted or TRANSPOSE in wanted


def measures_random(wanted: list[str], quick: bool = False) -> bool:
    """Whether a run of --chapters `wanted` draws the random problems: a run
    of every chapter does, and one that names RANDOM or one of the
    RANDOM_CHAPTERS (a re-measured final kernel would leave random.json
    stale); --quick never does (every random problem has a dimension over
    its cap, QUICK_LIMIT)."""
    return not quick and (not wanted or RANDOM in wanted
                          or any(c in RANDOM_CHAPTERS for c in wanted))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", nargs="*", default=[],
                        help=f"only these chapters (folder names, '{TRANSPOSE}' for chapter 10's "
                             f"exercise and '{RANDOM}' for the random problems); default all")
    parser.add_argument("--quick", action="store_true",
                        help=f"a first look, meant for under 3 minutes: the chapter binaries "
                             f"alone are built, every size with a dimension over {QUICK_LIMIT} "
                             "is dropped, "
                             f"each size warms up {QUICK_WARMUP_MS:g} ms, no GPU tests, "
                             "sanitizer, ncu or random problems, and nothing is written to "
                             "results/")
    parser.add_argument("--sizes", nargs="*", default=None,
                        help=f"square sizes to benchmark (default {' '.join(SIZES)})")
    parser.add_argument("--changed", action="store_true",
                        help="only the chapters (and the transpose exercise, and the random "
                             "problems) whose results on this GPU are missing or stale: built "
                             "from files that have changed since (what the book marks stale)")
    parser.add_argument("--seed", type=int, default=None,
                        help="the random problems' seed (default: a fresh one, printed), to "
                             "draw a past run's problems again")
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "measure"))
    parser.add_argument("--no-sanitizer", action="store_true")
    parser.add_argument("--no-ncu", action="store_true")
    args = parser.parse_args()

    unknown = [c for c in args.chapters if c not in chapter_folders() and c not in (TRANSPOSE,
                                                                                   RANDOM)]
    if unknown:
        sys.exit(f"measure: no chapter {', '.join(unknown)} (the chapters are the folders "
                 f"of chapters/; '{TRANSPOSE}' is chapter 10's exercise, '{RANDOM}' the "
                 "random problems)")
    if args.seed is not None and not 0 <= args.seed < random_problems.SEED_LIMIT:
        sys.exit(f"measure: --seed takes a whole number in [0, {random_problems.SEED_LIMIT})")

    if shutil.which("nvidia-smi") is None or run(["nvidia-smi", "-L"]).returncode != 0:
        print("measure: no NVIDIA GPU here (nvidia-smi finds none); nothing was measured")
        return 77
    if args.changed and args.chapters:
        sys.exit("measure: --changed picks the chapters itself; leave out --chapters")
    if args.quick and args.chapters == [RANDOM]:
        sys.exit("measure: --quick draws no random problems (each has a dimension over "
                 f"{QUICK_LIMIT})")
    build_dir = Path(args.build_dir)
    if args.quick:
        # The binaries a quick run runs, and nothing else (no tests, no fuzzers).
        wanted = [c for c in args.chapters if c not in (TRANSPOSE, RANDOM)] or (
            [] if args.chapters else chapter_folders())
        build(build_dir, ["baseline", *(chapter_target(c) for c in wanted),
                          *(["transpose"] if measures_transpose(args.chapters) else [])])
    else:
        build(build_dir)
    staging = Path(tempfile.mkdtemp(prefix="ladder-measure-"))
    (staging / "chapters").mkdir()
    # The ceilings first: their file names the GPU, whose results --changed reads.
    baseline(build_dir, staging / "baseline.json")
    if args.changed:
        slug = results.read_json(staging / "baseline.json")["provenance"]["gpu_slug"]
        args.chapters = changed_chapters(ROOT, ROOT / "results" / slug,
                                         declared_binaries(build_dir))
        if not args.chapters:
            say(f"nothing to measure: every result in results/{slug} is up to date")
            return 0
        say(f"measuring what changed on {slug}: {' '.join(args.chapters)}")
    transpose = measures_transpose(args.chapters)
    drawn = measures_random(args.chapters, args.quick)
    seed = args.seed if args.seed is not None else random_problems.fresh_seed()
    programs = chapter_programs(build_dir, args.chapters)  # none for --chapters random
    # The inputs every result will record, read now (inputs_of caches them):
    # a source that cannot be read stops the run before anything is measured,
    # and the hashes are of the tree that was built.
    for source in [*(f"chapters/{c}/kernel.cu" for c in chapter_folders()),
                   TRANSPOSE_SOURCE, BASELINE_SOURCE]:
        inputs_of(source)
    sizes = args.sizes or (SIZES[:4] if args.quick else SIZES)
    limit = QUICK_LIMIT if args.quick else None

    # The benchmark runs, counted for the progress lines' estimate of the time left.
    PROGRESS.total = len(programs) + (len(RANDOM_CHAPTERS) if drawn else 0)
    tests = None if args.quick else gpu_tests(build_dir)
    status = {}
    for program in programs:
        status[program.name] = benchmark(program, staging / "chapters" / f"{program.name}.json",
                                         sizes, limit=limit,
                                         warmup_ms=QUICK_WARMUP_MS if args.quick else None)

    transpose_json = staging / "transpose.json"
    if transpose:
        status["transpose"] = transpose_exercise(build_dir, transpose_json) or {"returncode": 0}

    random = None
    if drawn:
        problems, random_status = random_pass(build_dir, staging / "random", seed)
        status.update(random_status)
        random = random_result(seed, problems, staging / "random")

    sanitizer, counters, issue = {}, {}, {}
    if not (args.quick or args.no_sanitizer):
        say("running compute-sanitizer (memcheck, racecheck, synccheck), 4 chapters at a time")
        small = {p.name: smallest_accepted(p) for p in programs}
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            jobs = {p.name: pool.submit(sanitize, p.command, sanitizer_sizes(p, smallest))
                    for p in programs if (smallest := small[p.name])}
            if (build_dir / "bin" / "transpose").exists() and transpose:
                jobs["transpose"] = pool.submit(sanitize, (str(build_dir / "bin" / "transpose"),),
                                                ["33x65"])
            for name, job in jobs.items():
                sanitizer[name] = job.result()
                verdict = ", ".join(f"{t} {'clean' if r['clean'] else 'NOT CLEAN'}"
                                    for t, r in sanitizer[name].items())
                say(f"sanitizer {name}: {verdict}")
    if not (args.quick or args.no_ncu) and shutil.which("ncu"):
        for program in programs:
            say(f"ncu shared-memory counters for {program.name} at {NCU_SIZE}")
            counters[program.name] = ncu_counters(program, NCU_SIZE)
            if program.name in ISSUE_CHAPTERS:
                say(f"ncu issue and stall profile for {program.name} and cuBLAS at {NCU_SIZE}")
                issue[program.name] = issue_profile(program, NCU_SIZE)
        if (build_dir / "bin" / "transpose").exists() and transpose:
            say(f"ncu shared-memory counters for the transpose variants at {NCU_SIZE}")
            counters["transpose"] = transpose_counters(build_dir, NCU_SIZE)

    # Everything the run measured is in memory or in the staging folder.
    # It is checked first (code/ladder_tools/results/results_check.py, the checks CI runs on
    # committed results), and written to results/<gpu>/ only if it passes.
    written = sorted((staging / "chapters").glob("*.json"))
    if not written and not transpose_json.exists() and random is None:
        sys.exit("measure: no chapter wrote results")
    chapters = {path.stem: results.read_json(path) for path in written}
    # The provenance the files share (the GPU, the date, the commit): the
    # first chapter's, or the transpose exercise's when it ran alone, or
    # the first final kernel's on the random problems.
    if written:
        first = chapters[written[0].stem]["provenance"]
    elif transpose_json.exists():
        first = results.read_json(transpose_json)["provenance"]
    else:
        assert random is not None, "no chapter, transpose or random problems were measured"
        first = next(iter(random["chapters"].values()))["provenance"]
    print_table(chapters, capped(sizes, limit))
    if random is not None:
        print_random(random)
    # Every program the run's chapters describe (chapter_programs) must have a result.
    expected = [program.name for program in programs]
    refusals = refusal(tests, status, chapters, expected, sanitizer,
                       expected if sanitizer else [], random)
    if drawn and random is None:
        refusals.append("no final kernel wrote a result on the random problems")
    if args.quick:
        # The GPU tests did not run, and the sizes stop at QUICK_LIMIT: a
        # first look, not results the book can show.
        for reason in refusals:
            print(f"measure: {reason}")
        say(f"--quick writes nothing to results/; this run's files are in {staging}")
        return 1 if refusals else 0
    if refusals:
        print()
        for reason in refusals:
            print(f"measure: {reason}")
        slug = first.get("gpu_slug", "<gpu>")
        print(f"measure: refusing to write results/{slug}/: {len(refusals)} check(s) failed "
              f"(listed above); this run's files are in {staging}")
        return 1
    assert tests is not None  # a run that is not --quick ran the GPU tests

    # The GPU's slug comes from what the binaries recorded, so the folder
    # name and the files inside it can never disagree.
    # Every file records what its programs were built from (their inputs),
    # so that the book can tell when the tree has moved on from it.
    target = ROOT / "results" / first["gpu_slug"]
    (target / "chapters").mkdir(parents=True, exist_ok=True)
    sources = {p.name: f"chapters/{p.chapter}/kernel.cu" for p in programs}
    sources["transpose"] = TRANSPOSE_SOURCE
    for name, result in chapters.items():
        write_json(target / "chapters" / f"{name}.json", with_inputs(result, sources[name]))
    if transpose_json.exists():
        write_json(target / "transpose.json",
                   with_inputs(results.read_json(transpose_json), TRANSPOSE_SOURCE))
    if random is not None:
        write_json(target / "random.json", random)
    if (staging / "baseline.json").exists():
        shutil.copy(staging / "baseline.json", target / "baseline.json")
    common = {"schema": 1, "gpu": first["gpu"], "date": first["date"],
              "git_commit": first["git_commit"]}
    # The GPU tests ran every program, whichever chapters were measured:
    # their summary is stale when any of them changes.
    # The chapters this run measured: their entries it did not write are
    # variants that are gone.
    ran = {program.chapter for program in programs}
    tested = {}
    every_main_file = [f"chapters/{c}/kernel.cu" for c in chapter_folders()]
    for source in sorted({*every_main_file, TRANSPOSE_SOURCE}):
        tested.update(inputs_of(source))
    tested.update(provenance.hash_files(FUZZ_SOURCES))
    write_json(target / "gpu-tests.json",
               {**common, **tests, "inputs": dict(sorted(tested.items()))})
    if sanitizer:
        merge_write(target / "sanitizer.json", common, "chapters", sanitizer, sources, ran)
    if counters:
        merge_write(target / "ncu.json", {**common, "metrics": NCU_METRICS}, "chapters", counters,
                    sources, ran)
    if issue:
        merge_write(target / "issue.json", {**common, "metrics": ISSUE_METRICS}, "chapters", issue,
                    sources, ran)
    say(f"wrote {target.relative_to(ROOT)}")
    # What tests/pending_measurement.txt still says, and no longer needs to.
    skipped = sorted(set(chapter_folders()) - set(built_chapters(build_dir)))
    if skipped:
        say(f"tests/pending_measurement.txt not checked: the build leaves out "
            f"{' '.join(skipped)} (they need a newer GPU than it targets)")
    else:
        for unexplained in pending.problems(ROOT, declared_binaries(build_dir)):
            say(unexplained)
    return 0


def print_random(random: dict) -> None:
    """The random problems' summary: per final kernel, how many problems
    meet its goal, and every miss."""
    from ladder_tools.results import RandomResult

    drawn = RandomResult("", Path("random.json"), random, None)
    print(f"\nrandom problems, seed {drawn.seed} ({len(drawn.problems)} problems)")
    for slug in random["chapters"]:
        v = drawn.verdict(slug)
        print(f"{slug:28} {v.met} of {v.total} at least {v.percent:g}% of {v.against}")
        for (m, n, k), pct, why in v.misses:
            shown_pct = f"{pct:.1f}%" if pct is not None else "-"
            print(f"{'':28}   {m}x{n}x{k}: {shown_pct} ({why})")


def write_json(path: Path, content: dict) -> None:
    path.write_text(json.dumps(content, indent=2) + "\n")


def print_table(chapters: dict, sizes: list[str]) -> None:
    """The summary: % of cuBLAS per chapter binary and square size."""
    print(f"\n{'chapter':28} " + " ".join(f"{s:>9}" for s in sizes) + "   (% of cuBLAS)")
    for name, result in chapters.items():
        by_size = {f"{r['M']}": r for r in result["sizes"] if r["M"] == r["N"] == r["K"]}
        cells = []
        for s in sizes:
            r = by_size.get(s, {})
            cells.append(f"{r['pct_cublas']:8.1f}%" if "pct_cublas" in r
                         else ("     FAIL" if not r.get("correct", True) else "        -"))
        print(f"{result.get('chapter', name):28} " + " ".join(cells))

if __name__ == "__main__":
    sys.exit(main())
