"""What a run needs around the model and the data: the process group (distributed.py), DeepSpeed's
settings (ds_settings.py), the speed defaults (speed.py), the time budget (budget.py), FLOPs for
MFU (flops.py), the output dir (output_dir.py) and the run's logs (logs.py)."""
