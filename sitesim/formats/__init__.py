"""Data in and out: other tools' and sites' job data, read into SWF and written from it.

One module a format, each named by what it reads or writes:

- :mod:`~sitesim.formats.sacct`: Slurm's accounting, ``sacct --parsable2 --allocations``
  output, to SWF (and the partitions it shows, as a platform);
- :mod:`~sitesim.formats.pbs`: PBS and Torque accounting logs (their ``E`` records) to SWF;
- :mod:`~sitesim.formats.batsim`: Batsim's JSON workloads, both ways, and Batsim's
  ``jobs.csv`` (read by evalys); :mod:`~sitesim.formats.run_folder` writes it for a run in
  memory or in its folder;
- :mod:`~sitesim.formats.tables`: DataFrames with typed columns and units in their names
  (``sitesim.to_pandas(result)``, ``sitesim.load(folder)``) and Parquet files;

and what they share: :mod:`~sitesim.formats.converted` (what a reader returns),
:mod:`~sitesim.formats.lines` (lines skipped, by reason; the one-line error naming file, line
and field), :mod:`~sitesim.workload.names` (users, accounts, partitions and queues numbered in a
stable order), :mod:`~sitesim.formats.times` (time stamps and time zones),
:mod:`~sitesim.formats.platform_toml` (an inferred platform as a platform file).
``sitesim convert`` (:mod:`sitesim.cli.commands.convert`) chooses among them by option or by file
extension (:mod:`~sitesim.formats.choose`).
"""
