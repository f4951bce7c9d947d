"""Checks of sitesim against the real systems it models."""
