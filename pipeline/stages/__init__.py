"""The pipeline's stages, one module per `pipeline` command (the registry in
pipeline/core/registry.py lists them in order). Each module holds its click `command`, its
options, its list of tasks, the function that does one task, and the Python function tests
and scripts call."""
