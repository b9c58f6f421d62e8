"""Mutation testing of the CPU tests: does a test fail when the code is wrong?

Each mutation below replaces one exact piece of text in one file (a flipped
comparison, an off-by-one, a dropped rule). The script copies the repository
(the committed HEAD, or with --worktree the working tree) into a temporary
folder, configures one build there, checks that the unmutated copy passes
every test command it will use, then applies the mutations one at a time:
rebuilds only the targets the mutation touches, runs the CPU tests named for
it, and restores the file. A mutation is *caught* when one of those commands
fails (or the mutated code does not build) and *missed* when all pass.

    python3 tests/mutation/run.py                  # every mutation (about 10 minutes on 2 cores)
    python3 tests/mutation/run.py --only sweep-rank-flipped ncu-thousands
    python3 tests/mutation/run.py --list

Run it with the book's Python (build/venv/bin/python, which has pytest). It
needs nvcc and a C++ toolchain, no GPU. Not part of CI: it is slow, and its
answer is a score, not a pass. The mutation list is data: a mutation whose
text is no longer in its file is reported as stale (update the list).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------ the checks
# Each check: the build targets it needs and the command that runs it (in the
# copy's root; {build} and {python} are filled in).
CHECKS = {
    "cpu_tests": (["cpu_tests"], ["{build}/bin/cpu_tests", "--gtest_brief=1"]),
    "timing": (["harness_timing_tests"], ["{build}/bin/harness_timing_tests", "--gtest_brief=1"]),
    "index": (["kernel_index_tests"], ["{build}/bin/kernel_index_tests", "--gtest_brief=1"]),
    "bankmap": (["bankmap"], ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                              "tests/python/test_bankmap.py"]),
    "bankmap-ctest": (["bankmap"], ["{python}", "tests/python/bankmap_check.py", "json",
                                    "{build}/bin/bankmap"]),
    "transpose-ctest": (["transpose"], ["{python}", "tests/python/bankmap_check.py", "transpose",
                                        "{build}/bin/transpose"]),
    "measure": ([], ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                     "tests/python/test_measure.py", "-k", "ncu"]),
    "sweep": ([], ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                   "tests/python/test_sweep.py", "-k", "winner or incorrect or order"]),
    "prose": ([], ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                   "tests/python/test_prose_numbers.py"]),
    # The chapters' own kernels run on the CPU (tests/emulation).
    "emulation-ch04": (["emulation_test_ch04"],
                       ["{build}/bin/emulation_test_ch04", "--gtest_brief=1"]),
    "emulation-ch12": (["emulation_test_ch12"],
                       ["{build}/bin/emulation_test_ch12", "--gtest_brief=1"]),
    "emulation-ch13": (["emulation_test_ch13"],
                       ["{build}/bin/emulation_test_ch13", "--gtest_brief=1"]),
    "emulation-ch15-split": (["emulation_test_ch15"], ["{build}/bin/emulation_test_ch15",
                                                      "--gtest_brief=1",
                                                      "--gtest_filter=*SplitKeeps*"]),
    "emulation-ch14": (["emulation_test_ch14"], ["{build}/bin/emulation_test_ch14",
                                                  "--gtest_brief=1", "--gtest_filter=*Ch14Tf32"]),
    "emulation-ch14-nan": (["emulation_test_ch14"], ["{build}/bin/emulation_test_ch14",
                                                    "--gtest_brief=1", "--gtest_filter=*Nan*"]),
    "emulation-ch14-class": (["emulation_test_ch14"], ["{build}/bin/emulation_test_ch14",
                                                      "--gtest_brief=1", "--gtest_filter=*Class*"]),
    "emulation-ch15-scale": (["emulation_test_ch15"], ["{build}/bin/emulation_test_ch15",
                                                      "--gtest_brief=1",
                                                      "--gtest_filter=*EveryScale*"]),
    "emulation-ch16-store": (["emulation_test_ch16_store"],
                             ["{build}/bin/emulation_test_ch16_store", "--gtest_brief=1"]),
    "fuzz-oracle": (["fuzz_oracle_tests"], ["{build}/bin/fuzz_oracle_tests", "--gtest_brief=1"]),
    "fragments": (["fragment_tests"], ["{build}/bin/fragment_tests", "--gtest_brief=1"]),
    "values": ([], ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                    "tests/python/test_book.py", "-k", "fp64_keys"]),
    "mix": ([], ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                 "tests/python/test_book_analysis.py", "-k", "per_k_tile"]),
    "ch04-build": (["ch04_smem_tiling"], ["true"]),
    "ch12-build": (["ch12_final"], ["true"]),
}


@dataclass
class Mutation:
    name: str
    file: str
    old: str
    new: str
    checks: list[str]
    what: str
    append: bool = field(default=False)  # add `new` at the end of the file instead


AUDIT_SENTENCE = "\nThe winner runs at 52,000 GFLOP/s, 97.3% of cuBLAS at 4096.\n"
BANK = "code/include/ladder/bank_model.hpp"
ACC = "code/include/ladder/accuracy.hpp"
STATS = "code/include/ladder/stats.hpp"
DEVICE = "code/include/ladder/device.cuh"
BANK_CHECKS = ["cpu_tests", "bankmap", "bankmap-ctest", "transpose-ctest"]

MUTATIONS = [
    # The audit's table (issue 16).
    Mutation("bank-no-broadcast", BANK, "if (!seen) distinct[distinct_count++] = word;",
             "distinct[distinct_count++] = word;", BANK_CHECKS,
             "the bank model loses its broadcast rule"),
    Mutation("ch12-smem-index-transposed", "chapters/12-final/kernel.cuh",
             "return as_index<T>(thread_row<T>(tid, wm) + i, dot_idx);",
             "return as_index<T>(dot_idx, thread_row<T>(tid, wm) + i);", ["index", "bankmap-ctest"],
             "chapter 12's shared-memory A load index transposed"),
    Mutation("accuracy-verdict-flipped", ACC,
             "a.max_rel_err <= a.tolerance && a.rel_norm_err <= a.tolerance",
             "a.max_rel_err > a.tolerance && a.rel_norm_err <= a.tolerance", ["cpu_tests"],
             "the accuracy verdict flipped"),
    Mutation("ch12-epilogue-wrong-element", "chapters/12-final/kernel.cuh",
             "c.y = alpha * result[1] + beta * c.y;", "c.y = alpha * result[2] + beta * c.y;",
             ["emulation-ch12"], "chapter 12's epilogue writes the wrong element of C"),
    # Chapter 13: the turns of a shared tile, and stream-K's shares.
    Mutation("ch13-later-turn-applies-beta", "chapters/13-tail/kernel.cuh",
             "const float beta_here = seg.turn == 0 ? beta : 1.0f;",
             "const float beta_here = beta;", ["emulation-ch13"],
             "chapter 13's later turns scale C by beta again"),
    Mutation("ch13-turn-not-passed-back", "chapters/13-tail/kernel.cuh",
             "seg.turn + 1 == seg.turns ? 0 : seg.turn + 1",
             "seg.turn + 1", ["emulation-ch13", "index"],
             "chapter 13's last turn leaves its counter set for the next launch"),
    Mutation("ch13-share-overlap", "chapters/13-tail/kernel.cuh",
             "const long long first = begin > tile_begin ? begin : tile_begin;",
             "const long long first = tile_begin;", ["index", "emulation-ch13"],
             "chapter 13's stream-K segment starts at its tile's first step, not its share's"),
    Mutation("ch04-b-transposed", "chapters/04-smem-tiling/kernel.cuh",
             "Bs[b_store_index(tid)] = B[(tile_k + tile_row(tid)) * N + col];",
             "Bs[b_store_index(tid)] = B[col * K + tile_k + tile_row(tid)];",
             ["emulation-ch04"], "chapter 04 reads B transposed"),
    Mutation("timing-reps-plus-one", DEVICE, "return double(ms) / reps;",
             "return double(ms) / (reps + 1);", ["timing"], "the timing divides by reps + 1"),
    Mutation("ncu-thousands", "code/measure.py",
             'value = row.get("Metric Value", "").replace(",", "")',
             'value = row.get("Metric Value", "")', ["measure"],
             "the ncu CSV parser keeps thousands separators"),
    Mutation("sweep-rank-flipped", "code/sweep.py",
             '(not is_candidate(c), -c["result"].get("gflops", 0.0))',
             '(not is_candidate(c), c["result"].get("gflops", 0.0))', ["sweep"],
             "the sweep ranks the slowest configuration first"),
    Mutation("sweep-incorrect-wins", "code/sweep.py",
             'return config["result"]["status"] == "correct" and "gflops" in config["result"]',
             'return "gflops" in config["result"]', ["sweep"],
             "the sweep lets an incorrect configuration win"),
    Mutation("prose-hand-typed-number", "chapters/09-autotuning/chapter.md", "", AUDIT_SENTENCE,
             ["prose"], "a hand-typed measured number in chapter 09's prose", append=True),
    # The bank model: off-by-ones and flipped comparisons.
    Mutation("bank-of-off-by-one", BANK,
             "return static_cast<int>((byte_address / kBankBytes) % kBanks);",
             "return static_cast<int>((byte_address / kBankBytes) % (kBanks - 1));", BANK_CHECKS,
             "bank_of takes the word modulo 31"),
    Mutation("bank-max-flipped", BANK, "if (count > phase.wavefronts) phase.wavefronts = count;",
             "if (count < phase.wavefronts) phase.wavefronts = count;", BANK_CHECKS,
             "a phase's wavefronts: the busiest bank's count flipped"),
    Mutation("bank-ideal-off-by-one", BANK,
             "if (phase.active_lanes > 0) ++result.ideal_wavefronts;",
             "if (phase.active_lanes >= 0) ++result.ideal_wavefronts;", BANK_CHECKS,
             "an idle phase counts toward the ideal"),
    Mutation("bank-one-word-per-lane", BANK,
             "detail::analyse_phase(addresses, active_mask, width_bytes / kBankBytes, phase);",
             "detail::analyse_phase(addresses, active_mask, 1, phase);", BANK_CHECKS,
             "a wide access touches only its first word"),
    Mutation("bank-phase-size", BANK, "const int lanes_per_phase = kPhaseBytes / width_bytes;",
             "const int lanes_per_phase = kPhaseBytes / kBankBytes;", BANK_CHECKS,
             "every access is one phase of 32 lanes"),
    Mutation("bank-alignment-weakened", BANK, "if (active && addresses[lane] % width_bytes != 0) {",
             "if (active && addresses[lane] % kBankBytes != 0) {", BANK_CHECKS,
             "a misaligned 16-byte access is accepted"),
    # The accuracy verdict.
    Mutation("accuracy-nan-passes", ACC, "a.correct = a.bad_values == 0 && ", "a.correct = ",
             ["cpu_tests"], "a NaN in the output passes"),
    Mutation("accuracy-norm-ignored", ACC,
             "a.max_rel_err <= a.tolerance && a.rel_norm_err <= a.tolerance",
             "a.max_rel_err <= a.tolerance", ["cpu_tests"], "the norm error is not judged"),
    Mutation("accuracy-tf32-tolerance", ACC, "return 32.0 * kFp32UnitRoundoff",
             "return 8192.0 * kFp32UnitRoundoff", ["cpu_tests"],
             "a tolerance loose enough for TF32"),
    Mutation("accuracy-linear-in-k", ACC, "std::sqrt(static_cast<double>(K) + 2.0)",
             "(static_cast<double>(K) + 2.0)", ["cpu_tests"], "the tolerance grows like K"),
    Mutation("accuracy-max-kept-wrong", ACC, "if (!(rel <= a.max_rel_err)) a.max_rel_err = rel;",
             "if (!(rel >= a.max_rel_err)) a.max_rel_err = rel;", ["cpu_tests"],
             "the largest element error is not kept"),
    # Stats.
    Mutation("stats-even-median", STATS, "0.5 * (samples[n / 2 - 1] + samples[n / 2])",
             "0.5 * (samples[n / 2] + samples[n / 2 + 1 < n ? n / 2 + 1 : n / 2])", ["cpu_tests"],
             "the median of an even count takes the wrong pair"),
    Mutation("stats-odd-even-flipped", STATS, "s.median = n % 2 ? samples[n / 2]",
             "s.median = !(n % 2) ? samples[n / 2]", ["cpu_tests"], "odd and even counts swapped"),
    Mutation("stats-gflops-one-flop", STATS, "2.0 * M * N * K / (ms * 1e-3) / 1e9",
             "1.0 * M * N * K / (ms * 1e-3) / 1e9", ["cpu_tests"],
             "a multiply-add counted as one operation"),
    Mutation("stats-gflops-int-overflow", STATS, "2.0 * M * N * K / (ms * 1e-3) / 1e9",
             "2.0 * (M * N * K) / (ms * 1e-3) / 1e9", ["cpu_tests"], "M * N * K in int (overflow)"),
    Mutation("stats-gflops-zero-time", STATS, "return ms > 0 ?", "return ms >= 0 ?", ["cpu_tests"],
             "a zero time divides"),
    # The ncu parser and the sweep, beyond the audit's two.
    Mutation("ncu-last-kernel-only", "code/measure.py",
             'kernels.setdefault(name, {})[row["Metric Name"]] = number',
             'kernels[name] = {row["Metric Name"]: number}', ["measure"],
             "each row replaces its kernel's earlier metrics"),
    Mutation("sweep-untimed-wins", "code/sweep.py",
             'return config["result"]["status"] == "correct" and "gflops" in config["result"]',
             'return config["result"]["status"] == "correct"', ["sweep"],
             "a correct but untimed configuration may win"),
    # Part II: the fragments, the split and the swizzle, and the book's
    # numbers and captions built from them.
    Mutation("ch14-a-fragment-column", "chapters/14-tf32/kernel.cuh",
             "return lane % 4 + 4 * (r / 2); }", "return lane % 4 + 4 * (r % 2); }",
             ["fragments"], "chapter 14's A fragment takes the wrong column for registers 1 and 2"),
    Mutation("ch15-split-not-held", "chapters/14-tf32/kernel.cuh",
             "const uint32_t big = to_tf32(finite ? held : x);",
             "const uint32_t big = to_tf32(x);", ["emulation-ch15-split"],
             "chapter 15's split rounds the largest floats up to infinity"),
    Mutation("ch16-swizzle-dropped", "chapters/16-wgmma/tiling.cuh",
             "((column / 4) ^ (k % 8)) * 4", "(column / 4) * 4", ["index"],
             "chapter 16 reads B's tile as if the copy engine did not swizzle it"),
    Mutation("ch16-store-sends-the-wrong-half", "chapters/16-wgmma/tiling.cuh",
             "sent_half(lane) == 1 ? v[r + 2] : v[r]", "sent_half(lane) == 1 ? v[r] : v[r + 2]",
             ["emulation-ch16-store"],
             "chapter 16's spread stores swap the value a lane keeps, not the one it sends"),
    Mutation("ch16-store-swaps-the-wrong-store", "chapters/16-wgmma/tiling.cuh",
             "return spread && half == sent_half(lane);",
             "return spread && half != sent_half(lane);",
             ["index", "emulation-ch16-store"],
             "chapter 16's spread stores write the value received in the other store"),
    Mutation("ch16-non-finite-has-a-part", "chapters/16-wgmma/tiling.cuh",
             "return std::isfinite(x) ? (x - truncated(x)) * kSmallScale : 0.0f;",
             "return (x - truncated(x)) * kSmallScale;",
             ["index"], "chapter 16's split gives an infinity a NaN small part (inf - inf)"),
    Mutation("ch14-nan-reads-as-infinity", "chapters/14-tf32/kernel.cuh",
             "  if (isnan(x)) bits |= kQuietBit;", "", ["emulation-ch14-nan"],
             "chapter 14's rounding lets a NaN with a low payload reach the tensor cores as an "
             "infinity"),
    Mutation("ch14-tf32-changes-a-class", "chapters/14-tf32/kernel.cuh",
             "  if (all_finite) return;", "  return;",
             ["emulation-ch14-class"],
             "chapter 14 keeps the sum TF32 gives where rounding made a value 0 or infinite"),
    Mutation("ch14-fast-path-on-offset-pointers", "chapters/14-tf32/kernel.cuh",
             "if (!aligned_to(g.A, 16) || !aligned_to(g.B, 16) || !aligned_to(g.C, 8)) "
             "return Path::kGeneral;",
             "", ["emulation-ch14"],
             "chapter 14 takes its 16-byte copies on matrices one float off"),
    Mutation("ch16-operand-nan-reads-as-infinity", "chapters/16-wgmma/tiling.cuh",
             "return std::isnan(x) ? bits | 0x00400000u : bits;", "return bits;", ["index"],
             "chapter 16 hands Bᵀ's NaNs with low payloads to wgmma as they are"),
    Mutation("ch15-small-part-flushes", "chapters/14-tf32/kernel.cuh",
             "constexpr float kSmallScale = 1024.0f;", "constexpr float kSmallScale = 1.0f;",
             ["emulation-ch15-scale"],
             "chapter 15's small parts are not scaled, so below 2^-113 they lose bits"),
    Mutation("ch16-small-part-flushes", "chapters/16-wgmma/tiling.cuh",
             "constexpr float kSmallScale = 1024.0f;", "constexpr float kSmallScale = 1.0f;",
             ["index"],
             "chapter 16's small parts of A are not scaled, so below 2^-113 they lose bits"),
    Mutation("fuzz-oracle-misses-inf-minus-inf", "code/include/ladder/fuzz.cuh",
             "nan || (plus && minus)", "nan", ["fuzz-oracle"],
             "the fuzzer's reference calls Inf - Inf an infinity, not NaN"),
    Mutation("fuzz-draws-no-low-payload-nans", "code/include/ladder/fuzz.cuh",
             "const bool low_only = std::uniform_int_distribution<int>(0, 1)(rng) == 1;",
             "const bool low_only = false;", ["fuzz-oracle"],
             "the fuzzer never draws the NaNs that TF32 turns into infinities"),
    Mutation("fp64max-reads-the-norm", "code/ladder_tools/results/values.py",
             '"fp64max": "max_rel_err"', '"fp64max": "rel_norm_err"', ["values"],
             "the page's worst-element error quotes the norm-wise one"),
    Mutation("sass-per-tile-sum-wrong", "code/ladder_tools/analysis/mix.py",
             'rest = loop["instructions"] - inner', 'rest = loop["instructions"]', ["mix"],
             "the SASS caption's per-K-tile sum counts the inner loop twice"),
]


def sh(cmd: list[str], cwd: Path, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def copy_repo(dest: Path, worktree: bool) -> None:
    if worktree:
        files = sh(["git", "ls-files", "-co", "--exclude-standard", "-z"], ROOT).stdout.split("\0")
        for f in filter(None, files):
            src = ROOT / f
            if src.is_file():
                (dest / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / f)
    else:
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True,
                                 check=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def expand(cmd: list[str], build: Path, python: str) -> list[str]:
    return [c.format(build=build, python=python) for c in cmd]


#: How long one check may run before it counts as hung: unmutated, none takes
#: more than about a minute on 2 cores.
CHECK_TIMEOUT_S = 300


def run_checks(names: list[str], repo: Path, build: Path, python: str,
               env: dict) -> tuple[bool, str]:
    """(all passed, what failed). A build that fails counts as a failure."""
    targets = sorted({t for n in names for t in CHECKS[n][0]})
    if targets:
        done = subprocess.run(["cmake", "--build", str(build), "-j2", "--target", *targets],
                              cwd=repo, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            return False, "does not build"
    for n in names:
        try:
            done = subprocess.run(expand(CHECKS[n][1], build, python), cwd=repo,
                                  capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            # A mutation that makes a test hang (a wait that is never
            # released) fails it, as CTest's timeout would.
            return False, f"{n} (hung)"
        if done.returncode != 0:
            return False, n
    return True, ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=[], help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--worktree", action="store_true",
                        help="copy the working tree (uncommitted changes too), not HEAD")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args()
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:30} {m.file:40} {m.what}")
        return 0
    if args.only and len(chosen) != len(args.only):
        sys.exit(f"unknown mutation in {args.only}")
    try:
        import pytest  # noqa: F401
    except ImportError:
        sys.exit("run it with the book's Python (build/venv/bin/python): pytest is needed")

    tmp = Path(tempfile.mkdtemp(prefix="ladder-mutation-"))
    repo, build = tmp / "repo", tmp / "build"
    repo.mkdir()
    start = time.monotonic()
    print(f"[mutation] copying {'the working tree' if args.worktree else 'HEAD'} to {repo}",
          flush=True)
    copy_repo(repo, args.worktree)
    done = sh(["cmake", "--preset", "default", "-B", str(build)], repo)
    if done.returncode != 0:
        print(done.stdout + done.stderr)
        return 2
    # The book's environment imports this repository's package from the
    # checkout it was installed from (pyproject.toml, editable); the copy's
    # own code/ goes first on the path, so the checks import the mutated copy.
    env = {**os.environ, "LADDER_BUILD_DIR": str(build), "PYTHONPATH": str(repo / "code")}
    checks = sorted({c for m in chosen for c in m.checks})
    print(f"[mutation] baseline: building and running {', '.join(checks)}", flush=True)
    ok, failed = run_checks(checks, repo, build, sys.executable, env)
    if not ok:
        print(f"[mutation] the unmutated copy fails {failed}: fix that first")
        return 2

    results = []
    for m in chosen:
        path = repo / m.file
        original = path.read_text()
        if m.append:
            mutated = original + m.new
        elif original.count(m.old) != 1:
            results.append((m, "stale", f"the text occurs {original.count(m.old)} times"))
            print(f"[mutation] {m.name}: STALE", flush=True)
            continue
        else:
            mutated = original.replace(m.old, m.new)
        path.write_text(mutated)
        try:
            passed, failed = run_checks(m.checks, repo, build, sys.executable, env)
        finally:
            path.write_text(original)
        verdict = "missed" if passed else "caught"
        results.append((m, verdict, failed))
        print(f"[mutation] {m.name}: {verdict}{f' by {failed}' if failed else ''} "
              f"({time.monotonic() - start:.0f} s)", flush=True)

    print(f"\n{'mutation':30} {'verdict':8} {'by':18} what")
    for m, verdict, failed in results:
        print(f"{m.name:30} {verdict:8} {failed:18} {m.what}")
    scored = [r for r in results if r[1] != "stale"]
    caught = sum(1 for r in scored if r[1] == "caught")
    print(f"\nmutation score: {caught}/{len(scored)} caught"
          + (f" ({100 * caught / len(scored):.0f}%)" if scored else "")
          + f"; {len(results) - len(scored)} stale; {time.monotonic() - start:.0f} s")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"[mutation] kept {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
