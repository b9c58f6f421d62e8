"""Running the project's programs from the measure and sweep commands."""
from __future__ import annotations

import subprocess


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Runs `cmd` to the end and returns it, its stdout and stderr captured as text."""
    return subprocess.run(cmd, text=True, capture_output=True, **kwargs)
