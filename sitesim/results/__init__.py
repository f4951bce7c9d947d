"""What a run leaves: text tables, run folders, figures and time series."""
