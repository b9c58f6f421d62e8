#!/usr/bin/env python3
"""Builds the book: a Python environment, Doxygen XML, then Sphinx HTML.

    python3 docs/build_book.py [--build-dir build] [--results-dir DIR]
    python3 docs/build_book.py --env-only [--build-dir build]

1. Creates a virtual environment at <build-dir>/venv, if absent, and
   installs docs/requirements.txt into it, with the repository's own Python
   code (pyproject.toml: ladder_tools, with its figures and Sphinx extensions) in
   editable mode; installs again only when one of those two files, or the
   checkout's folder, has changed since (a stamp in the environment records
   their hash). With --python, that interpreter is used instead and nothing
   is installed.
2. Runs Doxygen over chapters/*/kernel.cuh and code/include/ladder/*.hpp,
   *.cuh: XML into <build-dir>/book/doxygen/xml, warnings into
   <build-dir>/book/doxygen-warnings.log (printed when there are any).
3. Runs sphinx-build from scratch with warnings as errors and every
   reference checked: HTML into <build-dir>/book/html, index.html at its top.

Steps 2 and 3 are skipped when the book in <build-dir>/book was rendered
by this script, with the same options, from the same inputs: every file
git lists in the checkout (tracked, and untracked but not ignored), by
content, and the binaries in the build folders' bin/ (name, size and
modification time). A successful render records them in
<build-dir>/book/ladder-inputs.json; --force renders anyway. Outside a git
checkout the inputs cannot be listed, and the book is always rendered.

The CMake target `book` runs this script; it needs only Python 3 (with its
venv module), Doxygen and, the first time, access to PyPI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
REQUIREMENTS = DOCS / "requirements.txt"
#: The repository's own distribution (installed in editable mode).
PROJECT = REPO / "pyproject.toml"
STAMP_NAME = "ladder-requirements.sha256"
#: What a successful render read (inputs_record), in <build-dir>/book.
INPUTS_NAME = "ladder-inputs.json"


def log(message: str) -> None:
    print(f"[book] {message}", flush=True)


def venv_python(env_dir: Path) -> Path:
    return env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def environment_hash() -> str:
    """What the environment is made from: docs/requirements.txt,
    pyproject.toml and the checkout the editable install points at, hashed
    together (a change to any of them installs again)."""
    digest = hashlib.sha256(str(REPO).encode())
    for path in (REQUIREMENTS, PROJECT):
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def ensure_environment(env_dir: Path) -> Path:
    """The environment's interpreter, with docs/requirements.txt and the
    repository's own distribution (editable) installed."""
    wanted = environment_hash()
    stamp = env_dir / STAMP_NAME
    python = venv_python(env_dir)
    if python.exists() and stamp.is_file() and stamp.read_text().strip() == wanted:
        return python
    if not python.exists():
        log(f"creating a virtual environment in {env_dir}")
        venv.EnvBuilder(with_pip=True).create(env_dir)
    log(f"installing {REQUIREMENTS.relative_to(REPO)} and this repository's "
        f"{PROJECT.name} (editable) into {env_dir}")
    # --no-compile: Python compiles the modules that are imported when they
    # are first imported (the build and the tests use a small part of them),
    # not every module of every package now; that halves the install.
    # Editable (-e): the environment imports the checkout's files themselves,
    # so an edit needs no reinstall; only a change to pyproject.toml does.
    subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check",
         "--quiet", "--no-compile", "-r", str(REQUIREMENTS), "-e", str(REPO)],
        check=True,
    )
    stamp.write_text(wanted + "\n")
    return python


def doxygen_inputs() -> list[Path]:
    """The files Doxygen reads: every chapter's kernel header and the harness
    headers."""
    headers = REPO / "code" / "include" / "ladder"
    return sorted(REPO.glob("chapters/*/kernel.cuh")) + sorted(
        [*headers.glob("*.hpp"), *headers.glob("*.cuh")]
    )


def run_doxygen(doxygen: str, out_dir: Path) -> Path:
    """Runs Doxygen; returns the XML folder."""
    out_dir.mkdir(parents=True, exist_ok=True)
    doxygen_dir = out_dir / "doxygen"
    shutil.rmtree(doxygen_dir, ignore_errors=True)
    warnings = out_dir / "doxygen-warnings.log"

    def quoted(path: Path) -> str:
        return f'"{path}"'  # paths may hold spaces

    fields = {
        "OUTPUT_DIRECTORY": quoted(doxygen_dir),
        "INPUT": " ".join(quoted(path) for path in doxygen_inputs()),
        "REPO_ROOT": quoted(REPO),
        "WARN_LOGFILE": quoted(warnings),
    }
    config = (DOCS / "Doxyfile.in").read_text()
    for name, value in fields.items():
        config = config.replace(f"@{name}@", value)
    doxyfile = out_dir / "Doxyfile"
    doxyfile.write_text(config)
    log(f"running Doxygen on {len(doxygen_inputs())} files")
    subprocess.run([doxygen, str(doxyfile)], check=True, cwd=out_dir)
    text = warnings.read_text() if warnings.exists() else ""
    if text.strip():
        log(f"Doxygen warnings (also in {warnings}):")
        print(text, end="" if text.endswith("\n") else "\n", flush=True)
    return doxygen_dir / "xml"


def run_sphinx(python: Path, xml_dir: Path, out_dir: Path, fail_on_stale: bool,
               keep_going: bool = True, jobs: str = "1") -> Path:
    """Runs sphinx-build from scratch; returns the HTML folder. With
    keep_going (the default) it reports every warning before failing;
    without, it stops at the first. `jobs` processes read the pages
    (sphinx-build -j; "auto": one per core)."""
    html_dir = out_dir / "html"
    shutil.rmtree(html_dir, ignore_errors=True)
    command = [
        str(python), "-m", "sphinx", "-E", "-W", "--keep-going", "-n", "-q",
        "-b", "html", "-c", str(DOCS), "-d", str(out_dir / "doctrees"),
        str(REPO), str(html_dir),
    ]
    if fail_on_stale:
        command[4:4] = ["-D", "ladder_fail_on_stale=1"]
    if jobs != "1":
        command[4:4] = ["-j", jobs]
    if not keep_going:
        # Since Sphinx 8.1, -W without --keep-going still reads and writes
        # every page and fails at the end; --exception-on-warning stops at
        # the first warning.
        command[command.index("--keep-going")] = "--exception-on-warning"
    environment = dict(os.environ, LADDER_DOXYGEN_XML=str(xml_dir))
    log("running Sphinx")
    subprocess.run(command, check=True, env=environment)
    return html_dir


def inputs_record(options: dict, binaries: list[Path], tools: list[str],
                  skip: list[Path]) -> dict | None:
    """What a render reads, for the up-to-date check: the options it ran
    with, the hash of every file git lists in the checkout (tracked, and
    untracked but not ignored: the pages, the code they cut listings from,
    the results and every file a result records as its input; a build
    folder inside the checkout, in `skip`, left out), the `binaries` its
    directives run or read (name, size, modification time) and the programs
    it runs. None outside a git checkout, where the files cannot be
    listed."""
    git = shutil.which("git")
    if git is None:
        return None
    listed = subprocess.run(
        [git, "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True)
    if listed.returncode != 0:
        return None
    skipped = [str(folder.relative_to(REPO)) + "/" for folder in skip
               if folder.is_relative_to(REPO) and folder != REPO]
    files = hashlib.sha256()
    for name in sorted(set(listed.stdout.decode("utf-8", "surrogateescape").split("\0"))):
        path = REPO / name
        if not name or name.startswith(tuple(skipped)) or not path.is_file():
            continue
        files.update(name.encode("utf-8", "surrogateescape") + b"\0")
        files.update(hashlib.sha256(path.read_bytes()).digest())
    found = []
    for binary in binaries:
        try:
            info = binary.stat()
            found.append([str(binary), info.st_size, info.st_mtime_ns])
        except OSError:
            found.append([str(binary), None, None])
    programs = []
    for tool in tools:
        where = shutil.which(tool)
        programs.append([tool, where, where and os.stat(where).st_mtime_ns])
    environment = {name: value for name, value in sorted(os.environ.items())
                   if name.startswith("LADDER_") or name == "CUOBJDUMP"}
    return {"options": options, "files": files.hexdigest(), "binaries": found,
            "programs": programs, "environment": environment}


def up_to_date(out_dir: Path, record: dict | None) -> bool:
    """True when out_dir holds a rendered book whose recorded inputs are
    `record`."""
    stamp = out_dir / INPUTS_NAME
    if record is None or not stamp.is_file() or not (out_dir / "html" / "index.html").is_file():
        return False
    try:
        return json.loads(stamp.read_text()) == record
    except ValueError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", type=Path, default=REPO / "build",
                        help="the build folder: venv/ and book/ go here (default: build)")
    parser.add_argument("--results-dir", type=Path,
                        help="read results from here instead of results/ (sets LADDER_RESULTS_DIR)")
    parser.add_argument("--python", type=Path,
                        help="an interpreter that already has docs/requirements.txt and "
                             "this repository installed (pip install -e .); no virtual "
                             "environment is made")
    parser.add_argument("--doxygen", default="doxygen", help="the Doxygen program")
    parser.add_argument("--fail-on-stale", action="store_true",
                        help="a stale result is an error, not only a mark on its page")
    parser.add_argument("--stop-at-first-warning", action="store_true",
                        help="stop Sphinx at its first warning instead of reporting them all "
                             "(for a test that expects the build to fail)")
    parser.add_argument("--env-only", action="store_true",
                        help="only make the virtual environment (step 1), for the tests")
    parser.add_argument("--binaries-from", type=Path,
                        help="a file listing, one a line, the binaries the book reads (the "
                             "CMake target writes it); without it, every file in the build "
                             "folder's bin/ counts for the up-to-date check")
    parser.add_argument("--jobs", default="1",
                        help="processes that read the pages (sphinx-build -j; 'auto': one per "
                             "core; default 1). Each reads the binaries it needs again, so "
                             "more take more CPU time in all: worth it on an idle machine")
    parser.add_argument("--force", action="store_true",
                        help="render even when nothing the book reads has changed since "
                             "the last render")
    args = parser.parse_args()

    if args.env_only:
        try:
            ensure_environment(args.build_dir.resolve() / "venv")
        except subprocess.CalledProcessError:
            log("failed: could not install docs/requirements.txt and pyproject.toml")
            return 1
        return 0

    if shutil.which(args.doxygen) is None:
        log(f"Doxygen ({args.doxygen}) not found: install it (Debian: apt-get install doxygen)")
        return 2
    if args.results_dir is not None:
        os.environ["LADDER_RESULTS_DIR"] = str(args.results_dir.resolve())
    build_dir = args.build_dir.resolve()
    out_dir = build_dir / "book"
    try:
        python = args.python or ensure_environment(build_dir / "venv")
        # The binaries come from the analysis' build folder ($LADDER_BUILD_DIR,
        # else build/ in the repository), which is usually --build-dir.
        analysis_build = Path(os.environ.get("LADDER_BUILD_DIR", REPO / "build")).resolve()
        if args.binaries_from:
            binaries = [Path(line) for line in args.binaries_from.read_text().splitlines()
                        if line.strip()]
        else:
            binaries = sorted((analysis_build / "bin").glob("*"))
        options = {"results_dir": os.environ.get("LADDER_RESULTS_DIR", str(REPO / "results")),
                   "fail_on_stale": args.fail_on_stale, "python": str(python),
                   "stop_at_first_warning": args.stop_at_first_warning}
        record = inputs_record(options, binaries, [args.doxygen, "cuobjdump", "nvdisasm"],
                               [build_dir, analysis_build])
        if not args.force and up_to_date(out_dir, record):
            log(f"up to date: nothing it reads has changed since {out_dir / 'html'} was "
                "rendered (--force renders anyway)")
            return 0
        (out_dir / INPUTS_NAME).unlink(missing_ok=True)
        xml_dir = run_doxygen(args.doxygen, out_dir)
        html_dir = run_sphinx(python, xml_dir, out_dir, args.fail_on_stale,
                              keep_going=not args.stop_at_first_warning, jobs=args.jobs)
    except subprocess.CalledProcessError as error:
        log(f"failed: {' '.join(map(str, error.cmd))} exited with {error.returncode}")
        return 1
    if record is not None:
        (out_dir / INPUTS_NAME).write_text(json.dumps(record, indent=1) + "\n")
    log(f"the book is at {html_dir / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
