"""The chapter binaries' command line, run for real: bad input is refused
with one line and exit code 2 before any GPU work, and a machine without a
GPU gets its own message and exit code 77 (CTest's skip), never a pass; the
same for every variant a binary runs with --variant NAME."""
import functools
import json
import subprocess

import pytest

from common import has_gpu


def chapters(build_dir):
    found = sorted(p for p in (build_dir / "bin").iterdir() if p.name[:2].isdigit())
    assert found, "no chapter binaries were built"
    return found


def run(binary, *args):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60)


@functools.cache
def description(binary) -> dict:
    """What `binary --describe` prints, run once per binary and test file:
    without a GPU each run reads the binary's cubin with cuobjdump, and the
    tests below only take the variants' names and slugs from it."""
    done = run(binary, "--describe")
    assert done.returncode == 0, f"{binary.name} --describe: {done.stderr}"
    return json.loads(done.stdout)


def runs(build_dir):
    """Every variant of every chapter binary, as (binary, the arguments that
    pick it, the name its results and messages go by), from --describe."""
    found = []
    for binary in chapters(build_dir):
        for index, variant in enumerate(description(binary)["variants"]):
            picks = [] if index == 0 else ["--variant", variant["name"]]
            found.append((binary, picks, variant["slug"]))
    return found


BAD = [
    ["--sizes", "0"],
    ["--sizes", "abc"],
    ["--sizes", "-256"],
    ["--sizes", "64x64"],
    ["--sizes"],
    ["--trials", "0"],
    ["--beta", "zero"],
    ["--device", "x"],
    ["--no-such-flag"],
    ["--sizes", "70000"],  # past 32-bit indexing for every chapter
]


def assert_refused(done, slug, binary, args):
    assert done.returncode == 2, f"{slug} {args}: exit {done.returncode}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and binary.name in lines[0], f"{slug}: {done.stderr!r}"
    assert done.stdout == ""


# The harness reads the command line before it looks for the variant
# (run_chapter, ladder/runner.cuh): each bad line is tried on every binary,
# and one of them on every variant too.
@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(a) or "none")
def test_bad_input_is_refused_with_one_line(build_dir, args):
    for binary in chapters(build_dir):
        assert_refused(run(binary, *args), binary.name, binary, args)


def test_every_variant_refuses_bad_input_with_one_line(build_dir):
    args = ["--sizes", "0"]
    for binary, picks, slug in runs(build_dir):
        assert_refused(run(binary, *picks, *args), slug, binary, args)


def test_an_unknown_variant_is_refused_with_one_line_that_lists_the_variants(build_dir):
    for binary in chapters(build_dir):
        names = [v["name"] for v in description(binary)["variants"]]
        done = run(binary, "--variant", "no-such-variant", "--sizes", "256")
        assert done.returncode == 2, f"{binary.name}: exit {done.returncode}"
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "unknown variant 'no-such-variant'" in lines[0], done.stderr
        assert lines[0].endswith(", ".join(names)), lines[0]
        assert done.stdout == ""


def test_sizes_a_chapter_cannot_compute_are_refused_before_launch(build_dir):
    """A prime size no tiled chapter can take: chapters that compute any size
    must not refuse it; those that refuse must say why, with exit code 2,
    under the name of the variant that refuses."""
    for binary, picks, slug in runs(build_dir):
        done = run(binary, *picks, "--sizes", "4099", "--check-only")
        if done.returncode == 2:
            assert f"{slug}: cannot compute 4099x4099x4099" in done.stderr
        else:
            assert done.returncode in (0, 77), f"{slug}: {done.stderr}"


def test_help_names_the_program_as_it_was_called_and_lists_its_variants(build_dir):
    for binary in chapters(build_dir):
        done = run(binary, "--help")
        assert done.returncode == 0, f"{binary.name}: exit {done.returncode}"
        assert f"usage: {binary.name} [--sizes" in done.stdout, done.stdout
        names = [v["name"] for v in description(binary)["variants"]]
        assert f"Variants: {', '.join(names)}" in done.stdout, done.stdout


@pytest.mark.parametrize("size", ["4294967297", "2000000000x64x64", "64x64x99999999999999999999"])
def test_a_size_too_large_is_called_too_large(build_dir, size):
    too_large = [part for part in size.split("x") if int(part) > 2**30][0]
    for binary in chapters(build_dir):
        done = run(binary, "--sizes", size)
        assert done.returncode == 2, f"{binary.name}: exit {done.returncode}"
        assert f"{too_large} is too large" in done.stderr, done.stderr
        assert "positive integer" not in done.stderr


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_without_a_gpu_the_binary_skips_with_77(build_dir):
    for binary, picks, slug in runs(build_dir):
        done = run(binary, *picks, "--sizes", "256", "--check-only")
        assert done.returncode == 77, f"{slug}: exit {done.returncode}"
        assert f"{slug}: no CUDA GPU found" in done.stderr
        # Without NVIDIA's kernel driver, CUDA's "driver version is
        # insufficient" would send the user off to upgrade a driver.
        assert "driver" not in done.stderr, done.stderr


#: The CPU tools of code/tools and the GPU probe, which share one parser
#: (code/tools/cli.hpp over the harness's ArgParser).
TOOLS = ("bankmap", "warpmap", "fragmap", "tailplan", "lastround", "archs", "hopper_probe")


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_refuses_an_unknown_argument_in_one_line(build_dir, tool):
    binary = build_dir / "bin" / tool
    if not binary.is_file():
        pytest.skip(f"{tool} is not built (hopper_probe: only where the build targets sm_90)")
    done = run(binary, "--no-such-option")
    if done.returncode == 77 and "compiled as a check only" in done.stderr:
        pytest.skip(f"{tool} was compiled as a check alone (no GPU at configure time)")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"{tool}: unknown argument '--no-such-option' "
                                        "(try --help)"]
    helped = run(binary, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith(f"usage: {tool}")
