"""The interpretability methods: pure functions of (translator, text, options) that return dataclasses of numpy
arrays and strings, each one way of looking inside the model (docs/architecture.md lists them). Import the
submodules directly. One translation drawn in a notebook cell or a file is `ui.standalone.show`."""
