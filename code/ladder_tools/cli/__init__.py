"""The commands' code, each module one command with its main():

  measure    the measure command; code/measure.py starts it, so that it runs
             as `python3 code/measure.py` with a bare python3 (standard
             library only, as are results/ and analysis/)
  occupancy  resident blocks per SM and occupancy of a binary's kernels:
             `build/venv/bin/python -m ladder_tools.cli.occupancy`
  sass_mix   the instruction mix of a binary's kernels:
             `build/venv/bin/python -m ladder_tools.cli.sass_mix`

Two commands live elsewhere: the sweep, code/sweep.py, an input of the
committed sweeps (results/<gpu>/sweep-*.json record its hash: it moves here
once chapters 09 and 12 are swept again), and the figures' command,
`python -m ladder_tools.figures.draw`, beside the figures it draws.
"""
