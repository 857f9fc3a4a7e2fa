"""Developer tools, outside the wheel and the image. Run from the repository root:
``python -m tools.bench``, ``python -m tools.bench_watch``, ``python -m tools.fuzz``, ``python -m tools.soak``,
``python -m tools.trace_path SelectRuntime``."""
