"""The export room: a checkpoint as a Hugging Face folder (hf.py), its model card (card.py), the
command `python -m trainer.export` (cli.py)."""
from trainer.export.cli import main
from trainer.export.hf import ExportError, export

__all__ = ["ExportError", "export", "main"]
