"""The measure command: it refuses to write anything on a machine with no GPU,
and a partial run merges into the results it does not redo."""
import json
import subprocess
import sys

import pytest

from common import ROOT, has_gpu


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


def test_a_partial_run_keeps_other_chapters_and_stamps_its_own(tmp_path):
    sys.path.insert(0, str(ROOT / "code"))
    import measure

    path = tmp_path / "ncu.json"
    first = {"schema": 1, "gpu": "G", "date": "2026-01-01T00:00:00Z", "git_commit": "aaa"}
    measure.merge_write(path, first, "chapters", {"01-naive": {"size": "4096"},
                                                  "02-coalescing": {"size": "4096"}})
    second = {**first, "date": "2026-01-02T00:00:00Z", "git_commit": "bbb"}
    measure.merge_write(path, second, "chapters", {"02-coalescing": {"size": "1024"}})
    written = json.loads(path.read_text())
    assert written["git_commit"] == "bbb"
    assert written["chapters"]["01-naive"]["measured"]["git_commit"] == "aaa"
    assert written["chapters"]["02-coalescing"] == {
        "size": "1024", "measured": {"git_commit": "bbb", "date": "2026-01-02T00:00:00Z"}}
