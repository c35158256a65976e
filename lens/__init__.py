"""What the page asks of a model, on the torch side: pure functions of (translator, text, options)
that return dataclasses of numpy arrays and strings. Import the submodules directly; `show` (one
translation drawn in a notebook cell or a file) is here too."""

from .standalone import show  # noqa: F401  (`from lens import show`)
