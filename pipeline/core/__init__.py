"""What every stage shares: the stage registry, the runner (options check, task markers,
executor, manifest, summary), input resolution, shared click options, errors (atomic writes
and the OS faults' words are the project's, in common/)."""
