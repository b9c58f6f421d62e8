"""The measure command: it refuses to write anything on a machine with no GPU,
and a partial run merges into the results it does not redo."""
import json
import shutil
import subprocess
import sys

import pytest

from common import ROOT, has_gpu, load_command


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_measure_without_a_gpu_writes_nothing(tmp_path):
    before = sorted((ROOT / "results").rglob("*")) if (ROOT / "results").exists() else []
    done = subprocess.run([sys.executable, str(ROOT / "code" / "measure.py"),
                           "--build-dir", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 77
    assert "no NVIDIA GPU" in done.stdout
    after = sorted((ROOT / "results").rglob("*")) if (ROOT / "results").exists() else []
    assert before == after
    assert not (tmp_path / "build").exists()


def test_chapters_names_a_chapter_or_the_transpose_exercise(tmp_path):
    # A name that is neither stops the run before it builds or asks for a GPU.
    done = subprocess.run([sys.executable, str(ROOT / "code" / "measure.py"),
                           "--chapters", "13-tail", "13-tails",
                           "--build-dir", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "no chapter 13-tails" in done.stderr
    assert not (tmp_path / "build").exists()
    measure = load_command("measure")
    assert measure.measures_transpose([])
    assert measure.measures_transpose(["13-tail", measure.TRANSPOSE])
    assert not measure.measures_transpose(["13-tail"])


def test_a_partial_run_keeps_other_chapters_and_stamps_its_own(tmp_path):
    measure = load_command("measure")

    path = tmp_path / "ncu.json"
    sources = {"01-naive": "chapters/01-naive/kernel.cu",
               "02-coalescing": "chapters/02-coalescing/kernel.cu"}
    first = {"schema": 1, "gpu": "G", "date": "2026-01-01T00:00:00Z", "git_commit": "aaa"}
    measure.merge_write(path, first, "chapters", {"01-naive": {"size": "4096"},
                                                  "02-coalescing": {"size": "4096"}}, sources)
    second = {**first, "date": "2026-01-02T00:00:00Z", "git_commit": "bbb"}
    measure.merge_write(path, second, "chapters", {"02-coalescing": {"size": "1024"}}, sources)
    written = json.loads(path.read_text())
    assert written["git_commit"] == "bbb"
    assert written["chapters"]["01-naive"]["measured"]["git_commit"] == "aaa"
    entry = written["chapters"]["02-coalescing"]
    assert entry["size"] == "1024"
    assert (entry["measured"]["git_commit"], entry["measured"]["date"]) == (
        "bbb", "2026-01-02T00:00:00Z")
    # Each entry records what its own program was built from.
    assert entry["measured"]["inputs"] == measure.inputs_of(sources["02-coalescing"])
    assert "chapters/02-coalescing/kernel.cu" in entry["measured"]["inputs"]


def test_a_run_drops_the_entries_of_variants_its_chapters_no_longer_have(tmp_path):
    measure = load_command("measure")

    path = tmp_path / "sanitizer.json"
    sources = {"01-naive": "chapters/01-naive/kernel.cu",
               "01-naive-gone": "chapters/01-naive/kernel.cu",
               "02-coalescing": "chapters/02-coalescing/kernel.cu"}
    common = {"schema": 1, "gpu": "G", "date": "2026-01-01T00:00:00Z", "git_commit": "aaa"}
    measure.merge_write(path, common, "chapters",
                        {name: {"clean": True} for name in sources}, sources)
    # Chapter 01 ran again and no longer has the variant "gone"; 02 did not run.
    measure.merge_write(path, common, "chapters", {"01-naive": {"clean": True}}, sources,
                        {"01-naive"})
    assert sorted(json.loads(path.read_text())["chapters"]) == ["01-naive", "02-coalescing"]


# ---------------------------------------------------------------- ncu's --csv

NCU_FIXTURES = ROOT / "tests" / "fixtures" / "ncu"


def parse_fixture(name: str, size: str = "4096") -> dict:
    measure = load_command("measure")

    done = subprocess.CompletedProcess(["ncu"], 0, (NCU_FIXTURES / name).read_text(), "")
    return measure.parse_ncu_csv(done, size)


@pytest.mark.parametrize("name", ["counters-09-autotuning", "issue-11-double-buffering"])
def test_ncu_csv_gives_back_what_the_results_held(name):
    # Past the ==PROF== lines and the program's output, every row's value,
    # thousands separators and all, lands under its kernel and metric: what
    # the measure command recorded from ncu's real output (the .expected.json
    # beside each fixture is a copy of that record).
    expected = json.loads((NCU_FIXTURES / f"{name}.expected.json").read_text())
    parsed = parse_fixture(f"{name}.txt", expected["size"])
    assert parsed == {"size": expected["size"], "kernels": expected["kernels"]}


def test_ncu_csv_values_with_thousands_separators_are_whole_numbers():
    text = (NCU_FIXTURES / "counters-09-autotuning.txt").read_text()
    assert '"402,668,655"' in text  # the fixture is written as ncu writes it
    [counters] = parse_fixture("counters-09-autotuning.txt")["kernels"].values()
    # 402,668,655 shared-load wavefronts: four hundred and two million, not 402.
    shared_loads = counters["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    assert shared_loads == 402 * 10**6 + 668 * 10**3 + 655
    global_loads = counters["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    assert global_loads == 12 * 10**6 + 582 * 10**3 + 912


def test_ncu_csv_keeps_each_kernel_apart():
    kernels = parse_fixture("issue-11-double-buffering.txt")["kernels"]
    assert len(kernels) == 2
    ours = next(name for name in kernels if "ch11::sgemm_warptiled" in name)
    cublas = next(name for name in kernels if name.endswith("_cublas"))
    assert kernels[ours]["launch__registers_per_thread"] == 127
    assert kernels[cublas]["launch__registers_per_thread"] == 254
    # 2,715,296 ns against 2,683,712 ns.
    assert kernels[ours]["gpu__time_duration.sum"] == 2715296
    assert kernels[cublas]["gpu__time_duration.sum"] == 2683712


def test_ncu_without_a_table_reports_its_last_lines():
    measure = load_command("measure")

    out = ("==PROF== Connected to process 5120 (/tmp/bin/09-autotuning)\n"
           "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
           "NVIDIA GPU Performance Counters on the target device 0.\n")
    parsed = measure.parse_ncu_csv(subprocess.CompletedProcess(["ncu"], 1, out, ""), "4096")
    assert list(parsed) == ["error"]
    assert parsed["error"][-1].startswith("==ERROR== ERR_NVGPUCTRPERM")


def test_every_program_the_measure_command_writes_for_can_be_hashed():
    """The measure command records the inputs of every result it writes
    (measure.inputs_of, nvcc -M over the source). A source that nvcc -M cannot
    read stops the run with nothing written, as a chapter whose header refuses
    GPUs before sm_80 did when nvcc -M was given no architecture."""
    measure = load_command("measure")

    sources = [f"chapters/{c}/kernel.cu" for c in measure.chapter_folders()]
    sources += [measure.TRANSPOSE_SOURCE, measure.BASELINE_SOURCE]
    for source in sources:
        inputs = measure.inputs_of(source)
        assert source in inputs, source
        header = source.rsplit("/", 1)[0] + "/kernel.cuh"
        if (ROOT / header).is_file():
            assert header in inputs, source


def test_a_build_folder_outside_the_repository_is_shown_whole(tmp_path):
    """--build-dir may lie outside the repository (a scratch disk); the
    progress line names it whole instead of failing."""
    measure = load_command("measure")

    assert measure.shown(ROOT / "build" / "measure") == "build/measure"
    assert measure.shown(tmp_path / "b") == str((tmp_path / "b").resolve())


def test_a_size_named_twice_is_measured_once():
    """A chapter's extra sizes may name a standard size again in another
    spelling (13-tail lists 256x256x256 beside the standard 256): the
    benchmark and the sanitizer take each product once."""
    measure = load_command("measure")

    assert measure.distinct(["256", "512", "256x256x256", "129x130x1000", "512X512X512"]) == \
        ["256", "512", "129x130x1000"]
    assert measure.dims("4097x4097x4097") == (4097,) * 3
    assert measure.dims("1024") == (1024,) * 3
    program = measure.Program("13-tail", "13-tail", ("bin/13-tail",))
    sizes = measure.sanitizer_sizes(program, "256")
    assert len({measure.dims(s) for s in sizes}) == len(sizes)


def test_own_sizes_reach_the_chapter_and_the_variants_it_names(tmp_path, monkeypatch):
    """own-sizes is for the chapter's own binary and the variants that
    own-sizes-variants names; the others get extra-sizes alone."""
    measure = load_command("measure")
    from types import SimpleNamespace

    def sizes(name, chapter="16-wgmma"):
        return measure.extra_sizes(SimpleNamespace(chapter=chapter, name=name))

    own = measure.read_sizes(ROOT / "chapters" / "16-wgmma" / "own-sizes")
    extra = measure.read_sizes(ROOT / "chapters" / "16-wgmma" / "extra-sizes")
    assert own and extra
    assert sizes("16-wgmma") == extra + own
    assert sizes("16-wgmma-square") == extra
    # A variant that own-sizes-variants names gets them; one whose name only
    # starts like a named one does not.
    folder = tmp_path / "chapters" / "99-made-up"
    folder.mkdir(parents=True)
    (folder / "own-sizes").write_text("# own\n300 400\n")
    (folder / "extra-sizes").write_text("500\n")
    (folder / "own-sizes-variants").write_text("wide\n")
    monkeypatch.setattr(measure, "ROOT", tmp_path)
    assert sizes("99-made-up", "99-made-up") == ["500", "300", "400"]
    assert sizes("99-made-up-wide", "99-made-up") == ["500", "300", "400"]
    assert sizes("99-made-up-wide-2", "99-made-up") == ["500"]
    assert sizes("99-made-up-narrow", "99-made-up") == ["500"]


def test_a_quick_run_caps_every_size_at_2048(monkeypatch, tmp_path):
    """--quick keeps a chapter's extra and own sizes, but drops every size
    with a dimension over 2048 (16-wgmma lists 4097 cubed and 256 x 256 x
    65536, which a first look does not need)."""
    measure = load_command("measure")

    asked = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    monkeypatch.setattr(measure, "run", lambda command, **_: asked.append(command) or Done())
    program = measure.Program("16-wgmma", "16-wgmma", ("bin/16-wgmma",))
    measure.benchmark(program, tmp_path / "out.json", ["256", "512", "4096"],
                      limit=measure.QUICK_LIMIT, warmup_ms=measure.QUICK_WARMUP_MS)
    measure.benchmark(program, tmp_path / "out.json", ["256", "512", "4096"])
    # The quick run warms up for less; the full one leaves the binary's own.
    assert asked[0][asked[0].index("--warmup-ms") + 1] == f"{measure.QUICK_WARMUP_MS:g}"
    assert "--warmup-ms" not in asked[1]
    quick, full = (c[c.index("--sizes") + 1:c.index("--budget-s")] for c in asked)
    assert quick[:2] == ["256", "512"] and "1000x1000x1000" in quick
    assert all(max(measure.dims(size)) <= 2048 for size in quick)
    assert "4096" in full and "256x256x65536" in full and "4097x4097x4097" in full
    assert [s for s in full if max(measure.dims(s)) <= 2048] == quick


def test_changed_picks_the_chapters_whose_results_are_missing_or_stale(tmp_path):
    """--changed measures a chapter when one of its binaries has no result on
    the GPU, or a result built from a file that has changed since; the rest
    are left alone. A copy of one GPU's committed results, edited."""
    measure = load_command("measure")

    gpus = sorted(p for p in (ROOT / "results").iterdir()
                  if (p / "chapters" / "01-naive.json").exists())
    if not gpus:
        pytest.skip("no GPU's results hold chapter 01")
    gpu = gpus[0]
    folder = tmp_path / gpu.name
    shutil.copytree(gpu, folder)
    chapters = ["01-naive", "02-coalescing", "03-flat-block"]
    # The binaries of these chapters, as their --describe would list them:
    # here, those the GPU's results hold.
    declared = sorted(p.stem for c in chapters for p in (gpu / "chapters").glob(f"{c}*.json"))
    fresh = measure.changed_chapters(ROOT, folder, declared, chapters)
    # Make 01 stale (a recorded hash no longer matches) and 02 missing.
    result = folder / "chapters" / "01-naive.json"
    data = json.loads(result.read_text())
    path = next(iter(data["provenance"]["inputs"]))
    data["provenance"]["inputs"][path] = "0" * 64
    result.write_text(json.dumps(data))
    (folder / "chapters" / "02-coalescing.json").unlink()
    found = measure.changed_chapters(ROOT, folder, declared, chapters)
    assert "01-naive" in found and "02-coalescing" in found
    assert ("03-flat-block" in found) == ("03-flat-block" in fresh)
    assert measure.changed_chapters(ROOT, tmp_path / "no-such-gpu", declared, chapters) == [
        *chapters, measure.TRANSPOSE, measure.RANDOM]


def test_the_commands_need_only_the_standard_library():
    """The measure and sweep commands run on a bare GPU machine, with python3
    and nothing installed (README: measure on your own GPU): run without
    site-packages (-S) from code/, they and every module of ladder_tools
    import."""
    modules = sorted(p.stem for p in (ROOT / "code" / "ladder_tools").glob("*.py"))
    program = "import measure, sweep\n" + "".join(
        f"import ladder_tools.{name}\n" for name in modules if name != "__init__")
    done = subprocess.run([sys.executable, "-S", "-E", "-s", "-c", program],
                          cwd=ROOT / "code", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for command in ("measure.py", "sweep.py"):
        done = subprocess.run([sys.executable, "-S", "-E", "-s", str(ROOT / "code" / command),
                               "--help"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "usage:" in done.stdout


def test_a_build_for_an_older_gpu_declares_the_chapters_it_holds(tmp_path):
    """A build that leaves chapters out (MIN_ARCH: Part II on an older GPU)
    measures and declares the others; every chapter is built otherwise."""
    measure = load_command("measure")
    (tmp_path / "bin").mkdir()
    for chapter in ("01-naive", "13-tail"):
        (tmp_path / "bin" / chapter).write_text("")
    assert measure.built_chapters(tmp_path) == ["01-naive", "13-tail"]
    assert measure.declared_binaries(tmp_path / "empty") == []
