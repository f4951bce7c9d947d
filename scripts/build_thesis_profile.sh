#!/usr/bin/env sh
# Rebuild sitesim's shipped thesis-regime profile, sitesim/data/thesis_profile.json: the default
# profile transformed by the frozen calibration sitesim.workload.thesis_regime.FITTED["after_break"]
# (docs/results/creasy.md, part 5). The calibration itself is
#   python scenarios/creasy_study.py --part 5 --calibrate --out runs/creasy5-calibration
# whose chosen values were copied into FITTED. tests/unit/test_thesis_regime.py checks that
# this command reproduces the shipped file.
set -eu
cd "$(dirname "$0")/.."
python -c 'from sitesim.workload.profile import default_profile
from sitesim.workload.thesis_regime import FITTED
FITTED["after_break"].apply(default_profile()).save("sitesim/data/thesis_profile.json")'
