"""What a run does at each step: the plan of its steps (phases, end, lr multiplier: plan.py) and the
optimizers with the lr shapes a re-plan moves (optim.py)."""
