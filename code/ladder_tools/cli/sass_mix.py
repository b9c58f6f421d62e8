"""The instruction mix of each kernel's K-loop, from its SASS: the command.

    build/venv/bin/python -m ladder_tools.cli.sass_mix build/bin/08-warp-tiling --kernel ch08:: \
        [--inner-trips 16] [--json]

Prints, for each kernel of the binary (an executable, a cubin, or a saved
``cuobjdump -sass`` dump), the counts of ladder_tools.analysis.sass_mix, which holds
the analysis (how the K-loop is found, what is counted). Run it with the
book's environment (build/venv), which has ladder_tools installed.
"""

import argparse
import json
import sys

from ladder_tools.analysis import sass_mix


def describe(result: dict) -> str:
    """One kernel's counts as the command prints them."""
    lines = [f"{result['name']}  ({result['arch']})"]
    sections = [("kernel", result["kernel"]), ("K-loop", result["loop"])]
    if result["loop"]:
        sections += [("inner loop", inner) for inner in result["loop"]["inner_loops"]]
        if "per_k_tile" in result["loop"]:
            trips = result["loop"]["per_k_tile"]["inner_trips"]
            sections.append((f"per K-tile (inner x {trips})", result["loop"]["per_k_tile"]))
    for label, counts in sections:
        if counts is None:
            lines.append(f"  {label}: no loop")
            continue
        where = f" {counts['start']}..{counts['end']}" if "start" in counts else ""
        lines.append(
            f"  {label}{where}: {counts['instructions']} instructions, {counts['ffma']} FFMA "
            f"({100 * counts['ffma_share']:.1f}%), {counts['barriers']} barriers"
        )
        for kind in sass_mix.MEMORY_KINDS.values():
            if counts[kind]:
                widths = ", ".join(f"{n} x {w}-bit" for w, n in counts[kind].items())
                lines.append(f"    {kind}: {widths}")
        top = ", ".join(f"{op} {n}" for op, n in list(counts["by_opcode"].items())[:12])
        lines.append(f"    by opcode: {top}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="executable, cubin, or a saved cuobjdump -sass dump")
    parser.add_argument("--kernel", help="only functions whose demangled name contains this")
    parser.add_argument("--inner-trips", type=int, metavar="N",
                        help="trip count of loops inside the K-loop: adds per-K-tile counts")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        results = sass_mix.analyze_binary(args.binary, args.kernel, args.inner_trips)
    except (OSError, RuntimeError) as e:
        print(f"sass_mix: {e}", file=sys.stderr)
        return 2
    if not results:
        print(f"sass_mix: no function matches in {args.binary}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print("\n\n".join(describe(r) for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
