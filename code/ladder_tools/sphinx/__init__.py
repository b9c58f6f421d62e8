"""The book's Sphinx extensions, which docs/conf.py names: the page layout
(book_layout), the measured results on the pages (ladder_base,
ladder_results), the analysis tables (ladder_analysis), the figures'
directives (ladder_figures) and the nodes they share (ladder_nodes). They
read through the rest of ladder_tools and draw through ladder_tools.figures;
nothing else in the package imports them, or Sphinx.
"""
