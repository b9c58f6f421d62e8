"""The measure command refuses to write anything on a machine with no GPU."""
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
