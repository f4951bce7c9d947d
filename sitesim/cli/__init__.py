"""The ``sitesim`` command line: a thin layer over the library."""
