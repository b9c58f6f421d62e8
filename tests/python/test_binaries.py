"""The cache of answers about a build's binaries (ladder_tools.analysis.binaries.cached):
computed once per file version, kept on disk for a binary in a build's bin/
so that another process reads it, and computed again when the binary or the
analysis that computes it changes."""

from __future__ import annotations

import json
import os

import pytest

from ladder_tools.analysis import binaries


@pytest.fixture
def fresh_process(monkeypatch):
    """Forgets what this process computed, as a new process would."""
    monkeypatch.setattr(binaries, "_CACHE", {})
    return lambda: monkeypatch.setattr(binaries, "_CACHE", {})


def counting(value):
    """compute() that returns `value` and counts its calls."""
    calls = []

    def compute():
        calls.append(1)
        return value
    return compute, calls


def ask(path, compute, code=()):
    return binaries.cached(("test", *binaries.stamp(path)), compute, about=path, code=code)


def test_a_binary_in_bin_is_read_once_across_processes(tmp_path, fresh_process):
    binary = tmp_path / "build" / "bin" / "tool"
    binary.parent.mkdir(parents=True)
    binary.write_text("one")
    compute, calls = counting({"kernels": [("a", 1)]})
    first = ask(binary, compute)
    fresh_process()
    second = ask(binary, compute)
    assert len(calls) == 1
    # What the file holds is what every process gets: lists, not tuples.
    assert first == second == {"kernels": [["a", 1]]}
    [entry] = (tmp_path / "build" / "analysis-cache").iterdir()
    assert json.loads(entry.read_text()) == second


def test_a_rebuilt_binary_is_read_again(tmp_path, fresh_process):
    binary = tmp_path / "bin" / "tool"
    binary.parent.mkdir()
    binary.write_text("one")
    compute, calls = counting(1)
    ask(binary, compute)
    stat = binary.stat()
    os.utime(binary, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    fresh_process()
    ask(binary, compute)
    assert len(calls) == 2


def test_a_changed_analysis_computes_again(tmp_path, fresh_process):
    binary = tmp_path / "bin" / "tool"
    binary.parent.mkdir()
    binary.write_text("one")
    analysis = tmp_path / "analysis.py"
    analysis.write_text("COUNT = 1\n")
    compute, calls = counting(1)
    ask(binary, compute, code=(analysis,))
    fresh_process()
    ask(binary, compute, code=(analysis,))
    assert len(calls) == 1
    analysis.write_text("COUNT = 2\n")
    fresh_process()
    ask(binary, compute, code=(analysis,))
    assert len(calls) == 2


def test_a_file_outside_a_bin_folder_is_kept_in_the_process_only(tmp_path, fresh_process):
    dump = tmp_path / "saved.sass"
    dump.write_text("code for sm_90")
    compute, calls = counting(1)
    ask(dump, compute)
    ask(dump, compute)
    fresh_process()
    ask(dump, compute)
    assert len(calls) == 2
    assert not (tmp_path.parent / "analysis-cache").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved.sass"]


def test_describe_is_asked_again_where_cuobjdump_is_found_differently(tmp_path, fresh_process,
                                                                      monkeypatch):
    """Without a GPU --describe reads the registers with the cuobjdump its
    environment names: another environment is another answer."""
    binary = tmp_path / "bin" / "01-fake"
    binary.parent.mkdir()
    log = tmp_path / "runs"
    binary.write_text(f'#!/bin/sh\necho run >> {log}\necho \'{{"from": "\'"$CUOBJDUMP"\'"}}\'\n')
    binary.chmod(0o755)
    monkeypatch.setenv("CUOBJDUMP", "/one/cuobjdump")
    assert binaries.describe(binary) == {"from": "/one/cuobjdump"}
    fresh_process()
    assert binaries.describe(binary) == {"from": "/one/cuobjdump"}
    monkeypatch.setenv("CUOBJDUMP", "/other/cuobjdump")
    assert binaries.describe(binary) == {"from": "/other/cuobjdump"}
    assert log.read_text().count("run") == 2
