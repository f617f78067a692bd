"""`python -m trainer.export ...`: see trainer/export/cli.py."""
import sys

from trainer.export.cli import main

sys.exit(main())
