"""How good is the model on held-out text: masked-LM (and NSP) loss and accuracy on the test shards
(heldout.py), the long-context evaluation (context.py) and its command on any model
(`python -m trainer.evaluation`, cli.py)."""
