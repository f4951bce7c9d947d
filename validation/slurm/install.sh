#!/usr/bin/env bash
# Debian's Slurm for validation/slurm/harness.py (Debian 12: Slurm 22.05.8), as root:
#   bash validation/slurm/install.sh [--accounting]
# --accounting adds slurmdbd and MariaDB (the fairshare case). The harness runs every daemon
# itself, in its own work folder, with its own munge key and ports: nothing here is configured
# or started (on a machine with systemd, the packages' own services start and fail for want of
# /etc/slurm/slurm.conf; they use other ports and do not disturb the harness).
set -euo pipefail
packages=(slurmctld slurmd slurm-client munge)
if [[ "${1:-}" == "--accounting" ]]; then
    packages+=(slurmdbd mariadb-server mariadb-client)
elif [[ $# -gt 0 ]]; then
    echo "install.sh: unknown option $1 (allowed: --accounting)" >&2
    exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "install.sh: run as root (apt-get install)" >&2
    exit 2
fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
slurmctld -V
