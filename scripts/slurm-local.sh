#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for scripts/test-cluster.sh:
# munged + slurmctld + slurmd (Debian's munge and slurm-wlm) with every file
# (config, key, state, logs, sockets) under one folder, nothing in /etc.
#
#   scripts/slurm-local.sh start DIR   installs Slurm and munge when missing (install-deps.sh cluster),
#                                      writes DIR/slurm.conf, starts the daemons, waits for the node
#   scripts/slurm-local.sh stop DIR    stops the daemons started from DIR
#
# After start, commands reach the cluster with SLURM_CONF=DIR/slurm.conf.
# Ports: GA_SLURM_PORT (default 16817) for slurmctld, +1 for slurmd.
set -euo pipefail
action=${1:?usage: slurm-local.sh start|stop DIR}
dir=${2:?usage: slurm-local.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
port=${GA_SLURM_PORT:-16817}

stop_pid() {
  local file=$1
  [ -f "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$file"
}

if [ "$action" = stop ]; then
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munged.pid"
  echo "slurm-local: stopped ($dir)"
  exit 0
fi
[ "$action" = start ] || { echo "slurm-local: unknown action $action" >&2; exit 2; }
"$(dirname "$0")/install-deps.sh" cluster >/dev/null
for tool in munged slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null || { echo "slurm-local: $tool missing (scripts/install-deps.sh cluster)" >&2; exit 2; }
done

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || { dd if=/dev/urandom bs=1 count=1024 of="$dir/munge/munge.key" 2>/dev/null; }
chmod 400 "$dir/munge/munge.key"
user=$(id -un)
cat > "$dir/slurm.conf" <<CONF
ClusterName=galocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf

munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "slurm-local: node $host up ($cpus CPUs), SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "slurm-local: the node did not come up; logs in $dir" >&2
sinfo -N -l >&2 || true
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
