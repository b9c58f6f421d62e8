"""Running the project's programs from the measure and sweep commands."""
from __future__ import annotations

import subprocess
from typing import Any


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Runs `cmd` to the end and returns it, its stdout and stderr captured as text."""
    return subprocess.run(cmd, text=True, capture_output=True, **kwargs)
