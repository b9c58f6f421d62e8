#!/usr/bin/env python3
"""Resident blocks per SM and occupancy, from a kernel's resources: the command.

    python3 code/analysis/occupancy.py build/bin/08-warp-tiling --kernel ch08:: --threads 128
    python3 code/analysis/occupancy.py --arch sm_90 --threads 256 --regs 128 --smem 0

The same as ``python3 -m ladder_tools.occupancy`` run from code/; the
arithmetic itself is code/ladder_tools/occupancy.py.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ladder_tools.occupancy import main  # noqa: E402  (code/ is on the path now)

if __name__ == "__main__":
    sys.exit(main())
