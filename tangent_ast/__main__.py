"""``python -m tangent_ast``: the ``tangent-ast`` command line."""

import sys

from .api.cli import main

sys.exit(main())
