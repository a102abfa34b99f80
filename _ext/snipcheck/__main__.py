"""``python -m snipcheck``: see :mod:`snipcheck.cli`."""

import sys

from .cli import main

sys.exit(main())
