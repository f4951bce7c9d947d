"""Seeing a run: what ran where and when, and what each user lived through.

- :mod:`~sitesim.views.run_view`: a run as the views need it (:class:`RunView`), from a
  :class:`~sitesim.engine.site.SiteResult` in memory or read back from a run folder;
- :mod:`~sitesim.views.gantt`: jobs as rectangles on nodes or processors over time, drawn one
  patch per job or, past a few thousand, rasterised into an image of exact coverage;
- :mod:`~sitesim.views.lanes`: the feedback loop per user, one swimlane each (sessions, waits,
  runs, think times, the sessions that ended after a slow response);
- :mod:`~sitesim.views.html`: ``sitesim report``, one self-contained HTML file (Bokeh, the
  optional ``report`` extra);
- :mod:`~sitesim.views.animation`: the machine and the users over time, as a GIF;
- :mod:`~sitesim.views.narrate`: a tiny site told as it happens, one line per user event.

Each figure function draws with matplotlib's Agg backend and returns the figure, or writes it
atomically as PNG, SVG or PDF, by the extension of the file's name
(:func:`sitesim.figures.save`).
"""
