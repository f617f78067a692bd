"""The run's start: from a checked config to the parts a Trainer runs.

steps.py: the start, one step a function (check, resolve, join, open_output, make_model, plan_run);
parts.py: the parts built from the config (step sizes, model, optimisation, loader); origin.py:
where the model starts (its config, the run's tokenizer against the data's, --init_from's
weights); longer_rows.py: a model that exists, on longer rows (positions, RoPE θ).
"""
