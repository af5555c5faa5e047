"""Benchmarks of pi_trio: the workloads of WORKLOADS.md, the trio floor (skeleton.py) and
the TypeScript original (ts/bench.mjs). Run ``python -m benchmarks --help``."""
