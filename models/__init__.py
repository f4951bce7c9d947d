"""The user side of sitesim: workpool, batches, session dynamics, cycles, user processes.

This folder is installed as ``sitesim.models`` (docs/development.md). Imported under another
name (``import models`` from the project folder) it would load every module a second time, with
classes that are not sitesim's own; that is refused.
"""

if __name__ != "sitesim.models":
    raise ImportError(
        f"import sitesim.models, not {__name__!r} (the folder models/ is installed as "
        "sitesim.models; loading it twice would give two copies of every class)"
    )
