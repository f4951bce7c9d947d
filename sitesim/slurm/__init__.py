"""Slurm's policies and files: slurm.conf and sacctmgr, multifactor priority, fairshare, QOS."""
