#!/usr/bin/env python3
"""The sweep command: every valid configuration of a chapter's kernel, timed on this GPU.

    python3 code/sweep.py 09-autotuning [--size 4096] [--jobs N] [--build-dir build/sweep]
                          [--arch sm_90] [--list [--all]] [--limit N] [--no-run]
                          [--commit-winner]

It works on any chapter folder that holds a sweep.json (chapters/09-autotuning/
sweep.json is the example), in four steps:
  1. enumerate: the chapter's own rules (sweep.json's "valid", the constexpr
     function its Tiling checks at compile time) are asked about every point
     of the grid by code/sweep/rules.cu, compiled once for the chapter and
     run on the CPU; the filters ("keep_if", integer expressions over the
     parameters) are evaluated on the valid ones; at most "max_configs" of
     those kept go on, spread evenly over the list. --list prints them and
     stops (--all: every grid point and its verdict);
  2. build: code/sweep/config.cu, which hands the chapter's own description
     with one configuration, chapter<Config>(), to the shared runner, is
     compiled once per configuration (the chapter and the configuration
     given with -D), in parallel; each binary's --describe (its constants,
     registers and shared memory) is recorded with its results; --no-run
     stops here;
  3. run: each binary checks its kernel against cuBLAS and times it at one
     size (--warmup-ms 100 --trials 5 --reps 5, shorter than the measure
     command's 300 ms and 7 trials, so that a sweep of some 80 configurations
     stays within a few minutes); a configuration that is incorrect is
     reported and never wins;
  4. report: results/<gpu>/sweep-<chapter>.json (every configuration's
     parameters and results, the winner, the median, provenance) and a table
     sorted by GFLOP/s; with --commit-winner, the winner is also written into
     the chapter's kernel.cuh as its Chosen configuration (the [chosen] block).
Steps 1 and 2 need no GPU. Without one, step 3 prints why and the command
exits with 77; nothing is written to results/.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ladder_tools import provenance as provenance_tools
from ladder_tools.process import run
from ladder_tools.provenance import ROOT

# The runner's options for a sweep run: shorter than the measure command's
# (300 ms warm-up, 7 trials), enough to rank configurations.
RUN_ARGS = ["--warmup-ms", "100", "--trials", "5", "--reps", "5"]
RUN_TIMEOUT_S = 300
NO_GPU = 77
START = time.monotonic()


def say(message: str) -> None:
    print(f"[sweep {time.monotonic() - START:6.1f} s] {message}", flush=True)


# ---------------------------------------------------------------- the sweep file

REQUIRED_KEYS = ["parameters", "valid", "config", "namespace", "max_configs"]


def load_sweep(chapter_dir: Path) -> dict:
    """The chapter's sweep.json, checked for the keys this command needs."""
    path = chapter_dir / "sweep.json"
    if not path.exists():
        sys.exit(f"sweep: {path.relative_to(ROOT)} does not exist: nothing to sweep")
    sweep = json.loads(path.read_text())
    missing = [key for key in REQUIRED_KEYS if key not in sweep]
    if missing:
        sys.exit(f"sweep: {path.relative_to(ROOT)} lacks {', '.join(missing)}")
    for name, values in sweep["parameters"].items():
        if not values or not all(isinstance(v, int) for v in values):
            sys.exit(f"sweep: parameter {name} needs a non-empty list of integers")
    sweep.setdefault("filters", [])
    return sweep


def config_name(params: dict) -> str:
    """A file-name-safe name of one configuration: BM64_BN128_..."""
    return "_".join(f"{name}{value}" for name, value in params.items())


def config_label(params: dict) -> str:
    return " ".join(f"{name}={value}" for name, value in params.items())


def spread(items: list, count: int) -> list:
    """`count` of `items`, evenly spaced over the list, first and last included."""
    if count >= len(items):
        return list(items)
    if count == 1:
        return [items[0]]
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


# ---------------------------------------------------------------- building

PROGRAMS = ROOT / "code" / "sweep"


def build(program: Path, defines: list[str], exe: Path, nvcc_flags: list[str],
          deps: list[Path]) -> tuple[bool, str]:
    """Compiles `program` (code/sweep/rules.cu or config.cu) with `defines`
    (-D options) to `exe`, unless `exe` was built with the same command and
    is newer than every file in `deps`. Returns whether it succeeded and
    nvcc's messages."""
    command = ["nvcc", *nvcc_flags, *defines, str(program), "-o", str(exe), "-lcublas"]
    # The command each binary was built with, kept beside bin/ so that a
    # binary built for another configuration or flags is never reused.
    stamp = exe.parent.parent / "commands" / f"{exe.parent.name}-{exe.name}"
    if exe.exists() and stamp.exists() and stamp.read_text() == "\n".join(command):
        if exe.stat().st_mtime > max(p.stat().st_mtime for p in [program, *deps]):
            return True, ""
    exe.parent.mkdir(parents=True, exist_ok=True)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    done = run(command)
    if done.returncode == 0:
        stamp.write_text("\n".join(command))
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def define(name: str, value: str) -> str:
    """-Dname=value for nvcc, which splits an option's value at its commas
    unless they are escaped (a template's arguments have commas)."""
    escaped = value.replace(",", "\\,")
    return f"-D{name}={escaped}"


def chapter_defines(chapter: str) -> list[str]:
    """The -D options that name the chapter's header for the two programs."""
    header = ROOT / "chapters" / chapter / "kernel.cuh"
    return [define("LADDER_CHAPTER_HEADER", f'"{header}"')]


def sources(chapter: str) -> list[Path]:
    """The files a sweep program for `chapter` is built from: the chapter's
    folder and the shared harness."""
    return [p for folder in [ROOT / "chapters" / chapter, ROOT / "code" / "include"]
            for p in folder.rglob("*") if p.is_file()]


# The filters are integer arithmetic over the parameters, as C++ would read
# them: names, whole numbers, + - * / %, comparisons, && and ||.
_FILTER_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.Add, ast.Sub,
                 ast.Mult, ast.FloorDiv, ast.Mod, ast.Compare, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
                 ast.Eq, ast.NotEq, ast.Name, ast.Load, ast.Constant, ast.UnaryOp, ast.USub)


def keeps(expression: str, params: dict) -> bool:
    """Whether a filter's `keep_if` expression holds for `params`. Division
    is C++'s integer division (the parameters are positive, so it is
    Python's //). Raises ValueError for anything but that arithmetic."""
    text = expression.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _FILTER_NODES):
            raise ValueError(f"filter {expression!r}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int):
            raise ValueError(f"filter {expression!r}: only whole numbers are allowed")
        if isinstance(node, ast.Name) and node.id not in params:
            raise ValueError(f"filter {expression!r}: {node.id} is not a parameter")
    return bool(eval(compile(tree, "<filter>", "eval"), {"__builtins__": {}}, dict(params)))


# ---------------------------------------------------------------- step 1: enumerate

def enumerate_grid(chapter: str, sweep: dict, build_dir: Path, nvcc_flags: list[str]) -> list[dict]:
    """Every point of the grid: its parameters, the broken rule's sentence
    (None when valid) and, per filter, whether it keeps the point."""
    say(f"building the rules program for {chapter} (it runs on the CPU)")
    names = list(sweep["parameters"])
    exe = build_dir / "rules"
    defines = [*chapter_defines(chapter), define("LADDER_RULES", sweep["valid"]),
               define("LADDER_PARAMETERS", str(len(names)))]
    ok, messages = build(PROGRAMS / "rules.cu", defines, exe, nvcc_flags, sources(chapter))
    if not ok:
        sys.exit(f"sweep: the rules program did not compile:\n{messages}")
    grid = [dict(zip(names, values))
            for values in itertools.product(*sweep["parameters"].values())]
    stdin = "".join(" ".join(str(v) for v in params.values()) + "\n" for params in grid)
    done = run([str(exe)], input=stdin)
    verdicts = done.stdout.splitlines()
    if done.returncode != 0 or len(verdicts) != len(grid):
        sys.exit(f"sweep: the rules program failed:\n{done.stdout}\n{done.stderr}")
    points = []
    for params, answer in zip(grid, verdicts):
        error = None if answer == "ok" else answer
        keep = [error is None and keeps(f["keep_if"], params) for f in sweep["filters"]]
        points.append({"params": params, "error": error, "keep": keep})
    return points


def verdict(point: dict, sweep: dict) -> str:
    if point["error"]:
        return f"invalid: {point['error']}"
    for kept, rule in zip(point["keep"], sweep["filters"]):
        if not kept:
            return f"filtered: not {rule['keep_if']}"
    return "kept"


def select(points: list[dict], sweep: dict, limit: int | None) -> list[dict]:
    """The configurations to sweep: valid, kept by every filter, capped."""
    valid = [p for p in points if p["error"] is None]
    kept = [p["params"] for p in valid if all(p["keep"])]
    say(f"{len(points)} points in the grid, {len(valid)} valid, {len(kept)} kept by the filters")
    cap = sweep["max_configs"]
    if len(kept) > cap:
        say(f"more than max_configs ({cap}): sweeping {cap}, spread evenly over the list")
        kept = spread(kept, cap)
    if limit is not None and limit < len(kept):
        say(f"--limit {limit}: sweeping {limit}, spread evenly over the list")
        kept = spread(kept, limit)
    return kept


# ---------------------------------------------------------------- step 2: build

def build_all(chapter: str, sweep: dict, configs: list[dict], build_dir: Path,
              nvcc_flags: list[str], jobs: int) -> dict[str, Path | None]:
    """Compiles every configuration, `jobs` at a time. Returns each
    configuration's binary, or None where it did not compile."""
    say(f"building {len(configs)} configurations, {jobs} at a time")
    binaries: dict[str, Path | None] = {}
    deps = sources(chapter)

    def one(params: dict) -> tuple[str, bool, str, float]:
        name = config_name(params)
        started = time.monotonic()
        defines = [*chapter_defines(chapter), define("LADDER_CHAPTER_NAMESPACE", sweep["namespace"]),
                   define("LADDER_CONFIG", sweep["config"].format(**params))]
        ok, messages = build(PROGRAMS / "config.cu", defines, build_dir / "bin" / name,
                             nvcc_flags, deps)
        return name, ok, messages, time.monotonic() - started

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for count, job in enumerate(
                concurrent.futures.as_completed([pool.submit(one, p) for p in configs]), 1):
            name, ok, messages, seconds = job.result()
            binaries[name] = build_dir / "bin" / name if ok else None
            say(f"built {count}/{len(configs)} {name} ({seconds:.1f} s)" if ok else
                f"FAILED to build {name}:\n{messages}")
    return binaries


# ---------------------------------------------------------------- step 3: run

def gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    return smi is not None and run([smi, "-L"]).returncode == 0


def describe_config(binary: Path) -> dict:
    """What a configuration's binary says of its kernel (--describe): the
    tiling's constants, the kernel, its registers and shared memory."""
    done = run([str(binary), "--describe"])
    if done.returncode != 0:
        return {"error": done.stderr.strip()}
    variant = json.loads(done.stdout)["variants"][0]
    return {"constants": variant["constants"], "kernel": variant["kernel"]}


def run_config(binary: Path, size: str, json_path: Path) -> dict:
    """Runs one configuration at one size; returns what it measured."""
    json_path.unlink(missing_ok=True)
    try:
        done = run([str(binary), "--sizes", size, *RUN_ARGS, "--json", str(json_path)],
                   timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:  # a hang is a verdict on the configuration
        return {"status": "failed", "why": f"did not finish in {RUN_TIMEOUT_S} s"}
    if done.returncode == NO_GPU:
        return {"status": "no-gpu", "why": done.stderr.strip()}
    if not json_path.exists():
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        why = f"exited with {done.returncode} and wrote no results"
        return {"status": "failed", "why": " / ".join([why, *tail]), "returncode": done.returncode}
    report = json.loads(json_path.read_text())
    measured = report["sizes"][0]
    result = {"status": "correct" if measured["correct"] else "incorrect",
              "returncode": done.returncode, "resources": report.get("resources", {}),
              "describe": describe_config(binary), "provenance": report["provenance"]}
    for key in ["gflops", "pct_cublas", "time_ms", "cublas_gflops", "max_rel_err",
                "rel_norm_err", "tolerance", "timing_skipped"]:
        if key in measured:
            result[key] = measured[key]
    return result


def describe(result: dict) -> str:
    if result["status"] in ("failed", "build failed"):
        return f"{result['status'].upper()}: {result.get('why', '')}"
    resources = result.get("resources", {})
    rate = (f"{result['gflops']:9.1f} GFLOP/s ({result['pct_cublas']:5.1f}% of cuBLAS)"
            if "gflops" in result else "not timed")
    spills = resources.get("local_bytes_per_thread", 0)
    return (f"{rate}, {resources.get('registers_per_thread', '?')} registers, "
            + (f"{spills} bytes of local memory (spills), " if spills else "")
            + f"{resources.get('blocks_per_sm', '?')} blocks/SM, {result['status']}")


# ---------------------------------------------------------------- step 4: report

def is_candidate(config: dict) -> bool:
    """Whether a swept configuration may win: it is correct and was timed."""
    return config["result"]["status"] == "correct" and "gflops" in config["result"]


def rank(configs: list[dict]) -> list[dict]:
    """The candidates first, fastest first; the rest after."""
    return sorted(configs, key=lambda c: (not is_candidate(c), -c["result"].get("gflops", 0.0)))


def inputs(chapter: str) -> dict[str, str]:
    """What a sweep of `chapter` is built from (ladder_tools.provenance): the
    chapter's files, the harness, the build files, the grid (sweep.json) and
    this command with its two programs, with every [chosen] block left out."""
    source = ROOT / "chapters" / chapter / "kernel.cu"
    own = ["code/sweep.py", "code/sweep/config.cu", "code/sweep/rules.cu",
           f"chapters/{chapter}/sweep.json"]
    return {**provenance_tools.inputs_of(source, ROOT, exclude="chosen"),
            **provenance_tools.hash_files(own, ROOT, exclude="chosen")}


def pick_winner(configs: list[dict]) -> dict | None:
    """The fastest correct, timed configuration; None when there is none. An
    incorrect configuration never wins, however fast it ran."""
    return next((c for c in rank(configs) if is_candidate(c)), None)


def print_table(ranked: list[dict], names: list[str]) -> None:
    header = " ".join(f"{n:>{max(len(n), 4)}}" for n in names)
    print(f"\n{'#':>3} {header} {'GFLOP/s':>9} {'% cuBLAS':>8} {'regs':>4} {'blk/SM':>6}  verdict")
    for i, c in enumerate(ranked, 1):
        r = c["result"]
        cells = " ".join(f"{c['params'][n]:>{max(len(n), 4)}}" for n in names)
        rate = (f"{r['gflops']:9.1f} {r['pct_cublas']:7.1f}%" if "gflops" in r
                else f"{'-':>9} {'-':>8}")
        res = r.get("resources", {})
        print(f"{i:>3} {cells} {rate} {res.get('registers_per_thread', '-'):>4} "
              f"{res.get('blocks_per_sm', '-'):>6}  {r['status']}")


def report(chapter: str, sweep: dict, size: str, counts: dict,
           configs: list[dict]) -> tuple[int, Path | None]:
    """Writes results/<gpu>/sweep-<chapter>.json and prints the table and the
    winner. Returns the exit code, 1 when a configuration failed or was
    incorrect (the chapter's rules promise that every valid one is correct),
    and the file written (None when nothing was)."""
    measured = [c for c in configs if "provenance" in c["result"]]
    if not measured:
        print("sweep: no configuration ran; nothing was written")
        return 1, None
    # The GPU's slug comes from what the binaries recorded, as in measure.py.
    provenance = measured[0]["result"]["provenance"]
    # What the sweep was built from: the chapter's files, the harness, the
    # build files, and this command (its flags and run arguments). Every
    # configuration of the grid is timed, whichever one the chapter commits
    # as Chosen: the hashes leave the [chosen] block out, so that committing
    # the winner does not make the sweep stale.
    provenance["source"] = f"chapters/{chapter}/kernel.cu"
    provenance["inputs"] = inputs(chapter)
    provenance["inputs_exclude"] = "chosen"
    for c in configs:
        c["result"].pop("provenance", None)
    ranked = rank(configs)
    candidates = [c for c in ranked if is_candidate(c)]
    winner = pick_winner(configs)
    summary = {"schema": 1, "chapter": chapter, "size": size, "run_args": RUN_ARGS,
               "parameters": sweep["parameters"], "filters": sweep["filters"],
               "counts": counts, "provenance": provenance, "configs": ranked}
    if winner is not None:
        best = winner["result"]
        median = statistics.median(c["result"]["gflops"] for c in candidates)
        summary["winner"] = {"params": winner["params"],
                             "config": sweep["config"].format(**winner["params"]),
                             "gflops": best["gflops"], "pct_cublas": best["pct_cublas"]}
        summary["median_gflops"] = median
        summary["winner_over_median"] = best["gflops"] / median
    target = ROOT / "results" / provenance["gpu_slug"]
    target.mkdir(parents=True, exist_ok=True)
    out = target / f"sweep-{chapter}.json"
    out.write_text(json.dumps(summary, indent=2) + "\n")

    print_table(ranked, list(sweep["parameters"]))
    print()
    say(f"wrote {out.relative_to(ROOT)}")
    others = [c for c in configs if c["result"]["status"] != "correct"]
    for c in others:
        print(f"  not a candidate: {config_label(c['params'])}: {describe(c['result'])}")
    if not candidates:
        print("sweep: no configuration was correct and timed: there is no winner")
        return 1, out
    print(f"winner: {summary['winner']['config']}\n"
          f"        {best['gflops']:.1f} GFLOP/s, {best['pct_cublas']:.1f}% of cuBLAS, "
          f"{100 * (summary['winner_over_median'] - 1):.1f}% above the median of "
          f"{len(candidates)} correct configurations ({median:.1f} GFLOP/s)")
    return (1 if others else 0), out


# ---------------------------------------------------------------- --commit-winner

def chosen_block(chapter: str, config: str, gpu: str, gpu_slug: str) -> str:
    """The [chosen] block that --commit-winner writes into the chapter's
    kernel.cu: the winner's configuration, without its namespace (the block
    is inside it), and where it came from."""
    inside = config.split("::", 1)[1] if "::" in config.split("<", 1)[0] else config
    return "\n".join([
        "// [chosen]",
        f"/// The configuration this chapter runs: the winner of the sweep on the {gpu}",
        f"/// (results/{gpu_slug}/sweep-{chapter}.json), written here by",
        f"/// `python3 code/sweep.py {chapter} --commit-winner`. Run that on your own",
        "/// GPU and its winner replaces this line.",
        f"using Chosen = {inside};",
        "// [end]",
        "",
    ])


def replace_chosen(text: str, block: str) -> str:
    """`text` (a kernel file) with its [chosen] block replaced by `block`.
    Raises ValueError when it has no single [chosen] block."""
    lines = text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines)
              if line.lstrip().startswith(provenance_tools.CHOSEN_BEGIN)]
    if len(begins) != 1:
        raise ValueError(f"expected one '{provenance_tools.CHOSEN_BEGIN}' line, "
                         f"found {len(begins)}")
    without = provenance_tools.without_chosen(text)
    begin = begins[0]
    before = "".join(lines[:begin])
    return before + block + without[len(before):]


def commit_winner(chapter: str, summary_path: Path) -> None:
    """Writes the winner of the sweep in `summary_path` into the chapter's
    kernel.cu (see chosen_block())."""
    summary = json.loads(summary_path.read_text())
    if "winner" not in summary:
        sys.exit("sweep: --commit-winner: the sweep has no winner")
    provenance = summary["provenance"]
    kernel = ROOT / "chapters" / chapter / "kernel.cuh"
    block = chosen_block(chapter, summary["winner"]["config"], provenance["gpu"].removeprefix("NVIDIA "),
                         provenance["gpu_slug"])
    kernel.write_text(replace_chosen(kernel.read_text(), block))
    say(f"wrote the winner into {kernel.relative_to(ROOT)}: {summary['winner']['config']}")


# ---------------------------------------------------------------- main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapter", help="a chapter folder with a sweep.json, e.g. 09-autotuning")
    parser.add_argument("--size", default="4096", help="the size to time: N or MxNxK (4096)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="compilations at a time (default: the CPU count)")
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "sweep"))
    parser.add_argument("--arch", default=None,
                        help="nvcc -arch (default: native with a GPU, sm_90 without)")
    parser.add_argument("--list", action="store_true",
                        help="print the configurations the sweep would run, and stop")
    parser.add_argument("--all", action="store_true",
                        help="with --list: every grid point and why it is or is not swept")
    parser.add_argument("--limit", type=int, default=None,
                        help="sweep only this many configurations, spread evenly over the list")
    parser.add_argument("--no-run", action="store_true", help="build, and stop before running")
    parser.add_argument("--commit-winner", action="store_true",
                        help="after the sweep, write its winner into the chapter's kernel.cu "
                             "(the [chosen] block)")
    args = parser.parse_args()

    chapter = args.chapter.strip("/").split("/")[-1]
    chapter_dir = ROOT / "chapters" / chapter
    if not (chapter_dir / "kernel.cu").exists():
        sys.exit(f"sweep: no chapter folder chapters/{chapter} with a kernel.cu")
    if args.limit is not None and args.limit < 1:
        sys.exit("sweep: --limit needs a positive count")
    sweep = load_sweep(chapter_dir)
    has_gpu = gpu_present()
    arch = args.arch or ("native" if has_gpu else "sm_90")
    nvcc_flags = ["-O3", "-std=c++17", "-lineinfo", f"-arch={arch}",
                  "-I", str(ROOT / "code" / "include")]
    build_dir = Path(args.build_dir).resolve() / chapter

    points = enumerate_grid(chapter, sweep, build_dir, nvcc_flags)
    configs = select(points, sweep, args.limit)
    if args.list:
        for point in points if args.all else [{"params": c} for c in configs]:
            line = config_label(point["params"])
            print(f"{line}  {verdict(point, sweep)}" if args.all else line)
        return 0
    if not configs:
        sys.exit("sweep: no configuration is left to sweep")

    binaries = build_all(chapter, sweep, configs, build_dir, nvcc_flags, max(1, args.jobs))
    if args.no_run:
        built = sum(b is not None for b in binaries.values())
        say(f"--no-run: built {built} of {len(configs)}, ran none")
        return 0 if built == len(configs) else 1
    if not has_gpu:
        print("sweep: no NVIDIA GPU here (nvidia-smi finds none); built, but nothing was run")
        return NO_GPU

    say(f"running {len(configs)} configurations at {args.size} ({' '.join(RUN_ARGS)})")
    swept = []
    runs_dir = build_dir / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    for i, params in enumerate(configs, 1):
        binary = binaries[config_name(params)]
        if binary is None:
            result = {"status": "build failed", "why": "did not compile"}
        else:
            result = run_config(binary, args.size, runs_dir / f"{binary.name}.json")
        if result["status"] == "no-gpu":
            print(f"sweep: the GPU could not be used: {result['why']}; nothing was written")
            return NO_GPU
        say(f"{i}/{len(configs)} {config_label(params)}: {describe(result)}")
        swept.append({"params": params, "result": result})
    counts = {"grid": len(points), "valid": sum(p["error"] is None for p in points),
              "kept": sum(p["error"] is None and all(p["keep"]) for p in points),
              "swept": len(configs)}
    status, written = report(chapter, sweep, args.size, counts, swept)
    if args.commit_winner and written is not None:
        commit_winner(chapter, written)
    return status


if __name__ == "__main__":
    sys.exit(main())
