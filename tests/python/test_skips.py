"""A skip is a skip: a Python test file whose every test skipped exits with
77, which CTest reports as skipped (conftest.py, tests/CMakeLists.txt), and
tests/skips_summary.py lists every skipped CTest test with its reason, read
from the JUnit file CTest writes."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from common import ROOT

HERE = Path(__file__).parent
SUMMARY = ROOT / "tests" / "skips_summary.py"


def run_pytest(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    """pytest, with this folder's conftest.py, on one test file."""
    for helper in ("conftest.py", "common.py"):
        shutil.copy(HERE / helper, tmp_path / helper)
    (tmp_path / "test_probe.py").write_text(source)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path / "test_probe.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


ALL_SKIPPED = """
import pytest

@pytest.mark.skip(reason="no CUDA GPU found")
def test_one():
    pass

def test_two():
    pytest.skip("Doxygen is not installed")
"""


def test_a_file_whose_every_test_skipped_exits_77_with_its_reasons(tmp_path):
    done = run_pytest(tmp_path, ALL_SKIPPED)
    assert done.returncode == 77, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "skipped: no CUDA GPU found" in lines
    assert "skipped: Doxygen is not installed" in lines


def test_a_file_skipped_at_module_level_exits_77(tmp_path):
    done = run_pytest(tmp_path, "import pytest\n"
                                "pytest.skip('chromium is missing', allow_module_level=True)\n")
    assert done.returncode == 77, done.stdout + done.stderr
    assert "skipped: chromium is missing" in done.stdout.splitlines()


@pytest.mark.parametrize("extra, returncode", [
    ("def test_passes():\n    pass\n", 0),
    ("def test_fails():\n    assert False\n", 1),
])
def test_a_file_with_a_test_that_ran_keeps_its_status(tmp_path, extra, returncode):
    done = run_pytest(tmp_path, ALL_SKIPPED + "\n" + extra)
    assert done.returncode == returncode, done.stdout + done.stderr
    assert "skipped: " not in done.stdout


@pytest.mark.skipif(shutil.which("ctest") is None or shutil.which("cmake") is None,
                    reason="no cmake or ctest on the PATH")
def test_the_summary_lists_each_skipped_test_with_its_reason(tmp_path):
    """A CTest project of a passing, a failing and two skipping tests (one
    printing as a chapter binary does without a GPU, one as a pytest file
    whose every test skipped), run with the JUnit file the test preset asks
    for, read by skips_summary.py."""
    project = tmp_path / "project"
    project.mkdir()
    programs = {
        "passes": ["print('ok')"],
        "fails": ["raise SystemExit(1)"],
        "gpu.01-naive": ["print('01-naive: no CUDA GPU found; nothing was run')",
                         "raise SystemExit(77)"],
        "python.browser": ["print('ss')", "print('skipped: /usr/bin/chromium is missing')",
                           "print()", "print('2 skipped in 0.01s')", "raise SystemExit(77)"],
    }
    lines = ["cmake_minimum_required(VERSION 3.25)", "project(probe NONE)", "enable_testing()"]
    for name, program in programs.items():
        script = project / f"{name}.py"
        script.write_text("\n".join(program) + "\n")
        lines += [f'add_test(NAME {name} COMMAND "{sys.executable}" "{script}")',
                  f"set_tests_properties({name} PROPERTIES SKIP_RETURN_CODE 77)"]
    (project / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    build = project / "build"
    subprocess.run(["cmake", "-S", str(project), "-B", str(build)],
                   check=True, capture_output=True, timeout=120)
    subprocess.run(["ctest", "--test-dir", str(build), "--output-junit", "Testing/ctest-junit.xml"],
                   capture_output=True, timeout=120)
    done = subprocess.run([sys.executable, str(SUMMARY), str(build)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    out = [line.split() for line in done.stdout.splitlines()]
    assert out[0] == ["skips:", "2", "tests", "skipped:"]
    assert out[1:] == [
        ["gpu.01-naive", "01-naive:", "no", "CUDA", "GPU", "found;", "nothing", "was", "run"],
        ["python.browser", "/usr/bin/chromium", "is", "missing"],
    ]


def test_the_summary_says_when_there_is_no_junit_file(tmp_path):
    done = subprocess.run([sys.executable, str(SUMMARY), str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "cannot read CTest's JUnit file" in done.stdout
