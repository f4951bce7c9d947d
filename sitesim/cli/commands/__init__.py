"""The ``sitesim`` commands, one module each (``sitesim.cli.commands.<name>``, with
``add_parser(commands)``). The command line imports only the module of the command it runs."""

#: Every command, in the order ``sitesim --help`` lists them, with its one-line help.
COMMANDS = {
    "run": "site-level simulation: simulated users in the loop with the scheduler",
    "replay": "open (conventional) replay of an SWF trace under one or more schedulers",
    "rerun": "repeat a run from its results.json",
    "sweep": "a grid of runs x replications (seeds) on a process pool or a Dask cluster",
    "compare": "open versus closed evaluation: how wrong is a trace replay?",
    "analyze": "uncover user behaviour (think times, sessions, feedback) from SWF traces",
    "profile": "build a workload profile (JSON) from SWF traces",
    "utility": "utility functions: augment a trace with them",
    "convert": "site accounting logs (sacct, PBS), Batsim workloads and jobs.csv, SWF, Parquet",
    "report": "look at a run (HTML report, Gantt chart, users' lanes) or compare a sweep's runs",
}
