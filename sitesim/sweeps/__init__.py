"""Sweeps: runs x replications planned, executed on a pool or Dask, and summarized."""
