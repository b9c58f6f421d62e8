"""Which GPUs run a chapter, and which of its variants runs there.

Two sources, both computed by the build: the architectures the book names,
with their block limits and what each chapter needs beyond Part I
(build/bin/archs, which prints ladder/arch.hpp's table), and each variant's
block, its threads and dynamic shared memory (the chapter binary's
--describe). The rule is the launchers': a GPU that lacks what the chapter
needs does not build it (its header stops the compile with one #error, as
tests/python/arch_compile.py checks); otherwise the chapter's own variant
runs where its block fits, chapters 14 and 15 run the first variant that
fits where it does not (chapter 14's run_fitting()), and a GPU where none
fits refuses the run in one line.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What each of ladder/arch.hpp's needs is, for the page.
NEEDS_WORDS = {
    "tf32-mma": "mma.sync on TF32, sm_80 or newer",
    "sm90a-only": "wgmma and TMA, built for sm_90a, which only compute capability 9.0 runs",
}

#: Why the chapter's own variant runs.
OWN_FITS = "the chapter's own variant fits"

#: The chapters whose launcher picks a variant that fits (run_fitting()).
FITTING_CHAPTERS = ("14-tf32", "15-3xtf32")


@dataclass(frozen=True)
class Verdict:
    """What one architecture does with one chapter."""

    cc: int
    gpus: str
    #: The variant that runs there, or None when none does.
    runs: str | None
    #: Why: the limit or instruction that decided.
    why: str

    @property
    def arch(self) -> str:
        return f"sm_{self.cc}"


def why_not(arch: dict, variant: dict) -> str | None:
    """Why a variant's block cannot run on `arch` (an entry of the archs
    table), or None when it fits: ladder::arch::why_not, over the launch the
    variant's --describe names."""
    kernel = variant["kernel"]
    smem, threads = kernel["dynamic_smem_bytes"], kernel["threads_per_block"]
    if smem > arch["smem_per_block_optin"]:
        return (f"{variant['name']} takes {smem:,} bytes of shared memory a block, more than "
                f"the {arch['smem_per_block_optin']:,} sm_{arch['cc']} gives")
    if threads > arch["max_threads_per_block"]:
        return f"{variant['name']} has {threads} threads a block"
    return None


def verdicts(table: dict, description: dict) -> list[Verdict]:
    """Per architecture of `table` (the archs tool's JSON), what runs the
    chapter `description` (its --describe) there, oldest first."""
    slug = description["chapter"]
    needs = table["chapter_needs"].get(slug, "nothing")
    variants = description["variants"]
    own = variants[0]
    found = []
    for arch in table["archs"]:
        cc, gpus = arch["cc"], arch["gpus"]
        if not arch["has"][needs]:
            found.append(Verdict(cc, gpus, None, f"not built: it needs {NEEDS_WORDS[needs]}"))
            continue
        why_own = why_not(arch, own)
        if why_own is None:
            found.append(Verdict(cc, gpus, own["name"], OWN_FITS))
            continue
        fitting = [v for v in variants if why_not(arch, v) is None]
        if slug in FITTING_CHAPTERS and fitting:
            found.append(Verdict(cc, gpus, fitting[0]["name"], why_own))
        else:
            found.append(Verdict(cc, gpus, None, f"refused: {why_own}"))
    return found
