#!/usr/bin/env sh
# Rebuild sitesim's shipped default workload profile, sitesim/data/default_profile.json, from the
# real Parallel Workloads Archive traces of the original study (users.md §5). The traces are not
# part of the project: they are read from ../shared/traces, or from $SITESIM_TRACES.
# tests/unit/test_profile.py checks that this command reproduces the shipped file exactly.
set -eu
cd "$(dirname "$0")/.."
traces=${SITESIM_TRACES:-../shared/traces}
sitesim profile \
  "$traces/SDSC-SP2-1998-4.2-cln.swf.gz" \
  "$traces/CTC-SP2-1996-3.1-cln.swf.gz" \
  "$traces/KTH-SP2-1996-2.1-cln.swf.gz" \
  "$traces/SDSC-BLUE-2000-4.2-cln.swf.gz" \
  "$traces/SDSC-Par-1996-3.1-cln.swf.gz" \
  -o sitesim/data/default_profile.json
