"""Shared fixtures for the Python-side tests."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from common import ROOT  # noqa: E402


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """The CMake build folder the chapters were built in (CTest passes it)."""
    path = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
    if not (path / "bin").is_dir():
        pytest.skip(f"no built chapters in {path}/bin: build first (cmake --workflow --preset test)")
    return path
