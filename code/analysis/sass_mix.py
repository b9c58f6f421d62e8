#!/usr/bin/env python3
"""The instruction mix of each kernel's K-loop, from its SASS: the command.

    python3 code/analysis/sass_mix.py build/bin/08-warp-tiling --kernel ch08:: [--inner-trips 16] [--json]

The same as ``python3 -m ladder_tools.sass_mix`` run from code/; the analysis
itself is code/ladder_tools/sass_mix.py.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ladder_tools.sass_mix import main  # noqa: E402  (code/ is on the path now)

if __name__ == "__main__":
    sys.exit(main())
