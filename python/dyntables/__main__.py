"""``python -m dyntables`` runs the command line (see ``dyntables.cli``)."""

import sys

from dyntables.cli import main

sys.exit(main())
