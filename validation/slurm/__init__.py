"""The harness that runs real Slurm and compares it with sitesim (harness.py)."""
