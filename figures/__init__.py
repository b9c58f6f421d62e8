"""The book's figures, drawn with matplotlib as SVG from the tools' data.

One module per figure, each with its drawing function(s) and the function
that turns what code/ladder_tools loads into the drawing's plain data; the
docs extension (docs/_ext) and the command line (figures/draw.py) call
both. style.py holds the look they share. See figures/README.md.
"""
