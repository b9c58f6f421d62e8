"""The book's Python tools, importable from the commands (code/measure.py,
code/sweep.py), the tests and the docs extension: put code/ on sys.path and
`import ladder_tools`.

Modules:
  provenance  what a measurement was built from, and whether the tree has
              moved on from it (a stale result)
"""
