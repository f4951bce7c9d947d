"""The simulation core: jobs, the machine of processors, the site and its event loop, records and
metrics."""
