"""Workloads: SWF traces, profiles, distributions, and the analysis of user behaviour."""
