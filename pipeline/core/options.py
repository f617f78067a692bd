"""Click options that every stage command shares, so their names and help read the same."""
from __future__ import annotations

import click

force_option = click.option(
    "--force", is_flag=True,
    help="Redo the stage from scratch, even if it finished or ran with other options.")
