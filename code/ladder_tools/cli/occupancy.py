"""Resident blocks per SM and occupancy, from a kernel's resources: the command.

    build/venv/bin/python -m ladder_tools.cli.occupancy build/bin/08-warp-tiling --kernel ch08:: \
        --threads 128
    build/venv/bin/python -m ladder_tools.cli.occupancy --arch sm_90 --threads 256 --regs 128 \
        --smem 0

Prints each kernel's registers, shared memory, stack and local memory, and
the blocks per SM and occupancy that ladder_tools.analysis.occupancy computes (the
arithmetic, and what it does not model, is said there). Threads per block is
not in the binary: give --threads, or --threads-map with a JSON map from a
part of a kernel's name to its threads. Run it with the book's environment
(build/venv), which has ladder_tools installed.
"""

import argparse
import json
import sys
from pathlib import Path

from ladder_tools.analysis import occupancy


def describe(r: dict) -> str:
    """One kernel's resources and occupancy as the command prints them."""
    lines = [
        f"{r['name']}  ({r['arch']})",
        (
            f"  {r['registers']} registers/thread, {r['shared_bytes']} B shared, "
            f"{r['stack_bytes']} B stack, {r['local_bytes']} B local"
        ),
    ]
    occ = r["occupancy"]
    if occ is None:
        lines.append("  occupancy: give the block size (--threads or --threads-map)")
        return "\n".join(lines)
    limits = ", ".join(f"{k} {'-' if v is None else v}" for k, v in occ["limits"].items())
    lines.append(
        f"  {occ['arch']}, {occ['threads_per_block']} threads/block: "
        f"{occ['blocks_per_sm']} blocks/SM "
        f"({', '.join(occ['limited_by'])}), {occ['warps_per_sm']}/{occ['max_warps_per_sm']} warps "
        f"= {100 * occ['occupancy']:.1f}% occupancy"
    )
    lines.append(f"    blocks allowed by each limit: {limits}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", help="executable, cubin, or saved -res-usage text")
    parser.add_argument("--threads", type=int, help="threads per block")
    parser.add_argument("--threads-map", help='JSON file {"kernel name part": threads, ...}')
    parser.add_argument("--kernel", help="only kernels whose demangled name contains this")
    parser.add_argument("--arch", help="architecture to compute for "
                        f"({', '.join(occupancy.ARCHS)}); default: the binary's own")
    parser.add_argument("--dynamic-smem", type=int, default=0, help="dynamic shared bytes/block")
    parser.add_argument("--regs", type=int, help="without a binary: registers per thread")
    parser.add_argument("--smem", type=int, default=0, help="without a binary: shared bytes/block")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        if args.binary is None:
            if args.regs is None or args.threads is None or args.arch is None:
                parser.error("without a binary, give --arch, --threads and --regs (and --smem)")
            result = occupancy.blocks_per_sm(args.arch, args.threads, args.regs, args.smem)
            if args.json:
                print(json.dumps(result, indent=2))
            else:
                print(describe({"name": "(given)", "arch": args.arch, "registers": args.regs,
                                "shared_bytes": args.smem, "stack_bytes": 0, "local_bytes": 0,
                                "occupancy": result}))
            return 0
        threads_map = json.loads(Path(args.threads_map).read_text()) if args.threads_map else {}
        results = occupancy.analyze_binary(args.binary, args.threads, threads_map, args.kernel,
                                           args.arch, args.dynamic_smem)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"occupancy: {e}", file=sys.stderr)
        return 2
    if not results:
        print(f"occupancy: no kernel matches in {args.binary}", file=sys.stderr)
        return 1
    print(json.dumps(results, indent=2) if args.json else "\n\n".join(describe(r) for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
