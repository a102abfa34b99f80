"""``python -m snipcheck``: see :mod:`snipcheck.app.cli`."""

import sys

from snipcheck.app.cli import main

sys.exit(main())
