"""Benchmarks (scripts, run from the repository root) and their importable helpers (`bench.nexmark`)."""
