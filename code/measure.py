#!/usr/bin/env python3
"""The measure command, run as `python3 code/measure.py` (--help says what it
does). Its code is ladder_tools.cli.measure; this file only starts it, so
that a bare python3, with nothing installed, finds the package beside it."""
import sys

from ladder_tools.cli.measure import main

if __name__ == "__main__":
    sys.exit(main())
