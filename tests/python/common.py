"""Helpers the Python-side tests share."""
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def has_gpu() -> bool:
    """True when nvidia-smi lists a GPU on this machine."""
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0
