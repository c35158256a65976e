"""What the page asks of a model, on the torch side: pure functions of (translator, text, options)
that return dataclasses of numpy arrays and strings. Import the submodules directly."""
