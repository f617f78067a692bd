"""Alias kept for `python -m trainer.fill_mask HF_DIR "text"`: runs scripts/fill_mask.py."""
import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).resolve().parents[1] / "scripts" / "fill_mask.py"), run_name="__main__")
