"""``python -m tangent_ast``: the ``tangent-ast`` command line."""

import sys

from .cli import main

sys.exit(main())
