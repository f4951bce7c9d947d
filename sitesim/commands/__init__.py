"""The ``sitesim`` commands, one module each; :mod:`sitesim.cli` registers them."""
