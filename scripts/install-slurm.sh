#!/usr/bin/env bash
# Installs what scripts/slurm-cluster.sh needs on a Debian machine (root, apt reachable):
# Slurm 22.05 (controller, node daemon, clients), munge and, for `sacct`, slurmdbd and MariaDB.
# Does nothing when all of it is there already, so CI can run it every time.
#
#   scripts/install-slurm.sh            # with accounting (slurmdbd + MariaDB)
#   scripts/install-slurm.sh --minimal  # without: no sacct
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"
programs=(slurmctld slurmd sbatch munged mungekey ss)
packages=(slurmctld slurmd slurm-client munge iproute2)
if [ "${1:-}" != --minimal ]; then
  programs+=(slurmdbd mariadbd)
  packages+=(slurmdbd mariadb-server)
fi

missing=0
for program in "${programs[@]}"; do command -v "$program" >/dev/null || missing=1; done
[ $missing = 1 ] || exit 0

# The packages' scripts would start the machine's own munged, MariaDB and Slurm daemons where an
# init system runs; the tests start private ones instead. policy-rc.d answering 101 forbids it.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  created_policy=1
fi
trap '[ $created_policy = 0 ] || rm -f "$policy"' EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Recommends would bring every Slurm plugin (HDF5, InfluxDB, ...) and their -dev packages.
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
