"""The version of snipcheck: one source, read by the package build
(``[tool.setuptools.dynamic]``), the command line and the Sphinx extension.

Foundation module: imports nothing.
"""

__version__ = "0.1.0"
