"""What every stage shares: the stage registry, the runner (options check, task markers,
executor, manifest, summary), atomic writes, input resolution, shared click options, errors."""
