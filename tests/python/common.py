"""Helpers the Python-side tests share."""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def has_gpu() -> bool:
    """True when nvidia-smi lists a GPU on this machine."""
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


def load_command(name: str) -> ModuleType:
    """The command `name` as a module, for a test to call its functions: the
    package's ladder_tools.cli.<name> (measure), or the script code/<name>.py
    (sweep, which runs with a bare python3 and imports ladder_tools from its
    own folder). Loaded once, as `import` would: a test that patches one sees
    the same module as the next."""
    if importlib.util.find_spec(f"ladder_tools.cli.{name}") is not None:
        return importlib.import_module(f"ladder_tools.cli.{name}")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "code" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before it runs: its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def declared_binaries() -> list[str]:
    """Every chapter binary, as the built chapters describe themselves
    (ladder_tools.analysis.binaries); the calling test skips without a build that
    holds every chapter (one for an older GPU leaves Part II's out:
    cmake/Ladder.cmake's MIN_ARCH)."""
    import pytest

    from ladder_tools.analysis import binaries
    try:
        return binaries.declared_binaries(ROOT, binaries.build_dir(ROOT))
    except binaries.AnalysisError as error:
        pytest.skip(f"needs every chapter built: {error}")
