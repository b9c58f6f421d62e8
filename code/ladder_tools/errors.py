"""The error every reader of results raises: one module that imports
nothing, so that results.py, formatting.py and goals.py can all raise it
without importing one another in a circle."""


class ResultsError(ValueError):
    """A results file, or a request for a value, that the book cannot use."""
