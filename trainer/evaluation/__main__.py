"""`python -m trainer.evaluation ...`: does a model read the long context? See trainer/evaluation/cli.py."""
import sys

from trainer.evaluation.cli import main

sys.exit(main())
