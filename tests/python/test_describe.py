"""What every chapter binary says about itself with --describe: JSON that
parses, names the chapter's real source files, lists its variants with their
constants and the sizes they accept (which the binary then really refuses
or takes), and, without a GPU, reads every variant's registers from the
binary's own cubin with cuobjdump."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import describe_check
from common import ROOT, has_gpu
from ladder_tools.analysis import sass_mix

CUOBJDUMP = sass_mix.find_cuobjdump()


def describe(binary, **env) -> dict:
    done = subprocess.run([str(binary), "--describe"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})
    assert done.returncode == 0, f"{binary.name} --describe: exit {done.returncode}: {done.stderr}"
    assert done.stderr == "", done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def descriptions(build_dir) -> dict:
    """Every chapter binary's --describe, by binary; cuobjdump found as the
    analysis finds it."""
    binaries = sorted(p for p in (build_dir / "bin").iterdir() if p.name[:2].isdigit())
    assert binaries, "no chapter binaries were built"
    env = {"CUOBJDUMP": CUOBJDUMP} if CUOBJDUMP else {}
    return {binary: describe(binary, **env) for binary in binaries}


def test_every_description_names_the_chapter_and_its_existing_sources(descriptions):
    for binary, d in descriptions.items():
        assert d["schema"] == 1
        assert d["chapter"] == binary.name and d["title"]
        assert d["sources"] == [f"chapters/{binary.name}/kernel.cu",
                                f"chapters/{binary.name}/kernel.cuh"], d["sources"]
        for source in d["sources"]:
            assert (ROOT / source).is_file(), source


def test_every_variant_has_a_result_slug_title_constants_and_a_kernel(descriptions):
    for binary, d in descriptions.items():
        assert describe_check.problems(d, binary.name,
                                       [v["name"] for v in d["variants"][1:]]) == []
        for v in d["variants"]:
            assert v["title"], v["slug"]
            constants = v["constants"]
            assert constants and all(isinstance(x, int) for x in constants.values()), v["slug"]
            kernel = v["kernel"]
            assert kernel["name"].startswith("_Z"), kernel
            assert kernel["threads_per_block"] == constants.get(
                "NUM_THREADS", constants.get("BLOCK", 0) ** 2), v["slug"]
            if "SMEM_BYTES" in constants and kernel["dynamic_smem_bytes"]:
                assert kernel["dynamic_smem_bytes"] == constants["SMEM_BYTES"], v["slug"]


def test_the_accepted_sizes_are_the_ones_the_binary_takes(descriptions):
    """The step --describe reports for each dimension is what the binary's
    own check refuses or takes: with the other sides at 4096, a side one past
    the step is refused with exit code 2 when the step is above 1, and the
    step itself is not refused.

    A binary checks every size of its --sizes before it runs any, and refuses
    the whole line for one it cannot compute. So the sizes it must take go in
    one run per variant, and each it must refuse in a run of its own: each
    run maps cuBLAS, a tenth of a second of system time."""
    def run(binary, picks: list[str], sizes: list[list[int]]) -> subprocess.CompletedProcess:
        return subprocess.run([str(binary), *picks, "--check-only", "--sizes",
                               *("x".join(map(str, size)) for size in sizes)],
                              capture_output=True, text=True, timeout=60)

    for binary, d in descriptions.items():
        for index, v in enumerate(d["variants"]):
            accepts = v["accepts"]
            assert accepts["max_elements"] == 2**31 - 1
            picks = [] if index == 0 else ["--variant", v["name"]]
            taken, refused = [], []
            for dim, name in enumerate("MNK"):
                step = accepts[name]["multiple_of"]
                assert isinstance(step, int) and step >= 1, (v["slug"], name, accepts[name])
                for side, refuse in [(step, False), (step + 1, step > 1)]:
                    size = [4096] * 3
                    size[dim] = side
                    (refused if refuse else taken).append(size)
            done = run(binary, picks, taken)
            assert done.returncode != 2, (v["slug"], taken, done.stderr)
            for size in refused:
                done = run(binary, picks, [size])
                assert done.returncode == 2, (v["slug"], size, done.stderr)


def test_the_cmake_check_catches_a_variant_list_that_drifted(descriptions):
    binary, d = next((b, d) for b, d in descriptions.items() if len(d["variants"]) > 1)
    others = [v["name"] for v in d["variants"][1:]]
    assert describe_check.problems(d, binary.name, others) == []
    assert describe_check.problems(d, binary.name, others[:-1])
    assert describe_check.problems(d, binary.name, [*others, "extra"])
    assert describe_check.problems(d, "another-binary", others)


@pytest.mark.skipif(has_gpu(), reason="with a GPU the resources come from cudaFuncGetAttributes")
@pytest.mark.skipif(CUOBJDUMP is None, reason="no cuobjdump to read the cubin with")
def test_without_a_gpu_the_resources_come_from_cuobjdump(descriptions):
    for d in descriptions.values():
        for v in d["variants"]:
            kernel = v["kernel"]
            assert kernel["resources_from"] == "cuobjdump", (v["slug"], kernel)
            assert kernel["registers_per_thread"] > 0, v["slug"]
            assert kernel["local_bytes_per_thread"] >= 0 and kernel["static_smem_bytes"] >= 0


@pytest.mark.skipif(has_gpu(), reason="with a GPU the resources come from cudaFuncGetAttributes")
def test_without_cuobjdump_or_a_gpu_the_resources_are_null_and_say_why(build_dir):
    if os.access("/usr/local/cuda/bin/cuobjdump", os.X_OK):
        pytest.skip("/usr/local/cuda/bin/cuobjdump is always searched")
    binary = build_dir / "bin" / "01-naive"
    d = describe(binary, CUOBJDUMP="/nonexistent", PATH="/usr/bin:/bin", CUDA_HOME="/nonexistent",
                 CUDA_PATH="/nonexistent")
    kernel = d["variants"][0]["kernel"]
    assert kernel["resources_from"] is None and "cuobjdump" in kernel["why"], kernel
    assert "registers_per_thread" not in kernel
