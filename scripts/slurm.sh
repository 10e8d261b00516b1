#!/usr/bin/env bash
# A real single-node Slurm (Debian's slurmctld, slurmd, slurm-client and munge) under one
# temporary root, bound to 127.0.0.1: what tests/test_slurm.py runs sharded evaluations on.
#
#   scripts/slurm.sh install      install the four packages when missing (as root); print versions
#   scripts/slurm.sh start ROOT   start munged, slurmctld and slurmd under ROOT; wait for the node
#   scripts/slurm.sh stop ROOT    stop them by the pids under ROOT (TERM, then KILL after ~10 s)
#
# After start, clients find the cluster through SLURM_CONF=ROOT/etc/slurm.conf. Nothing uses
# systemd and nothing outside ROOT is written. The configuration follows
# shared/reference/scale-out.md: the cgroup plugins fail every step here ("cgroup namespace
# 'freezer' not mounted") while srun still exits 0, so proctrack/linuxproc and task/none;
# NoCtldInAddrAny,NoInAddrAny keeps slurmctld off the other interfaces; jobcomp/filetxt writes
# one line per finished job (JobState, ArrayTaskId, ExitCode) without slurmdbd.
set -euo pipefail

need() { command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; }

install() {
  if ! need >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    local packages=(slurmctld slurmd slurm-client munge)
    if ! apt-get install -y --no-install-recommends "${packages[@]}"; then
      echo "slurm.sh: install failed; refreshing the package lists and trying again" >&2
      apt-get update
      apt-get install -y --no-install-recommends "${packages[@]}"
    fi
  fi
  slurmctld -V
  munged --version
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() {
  local root=${1:?usage: slurm.sh start ROOT}
  need >/dev/null || { echo "slurm.sh: Slurm is not installed; run: scripts/slurm.sh install" >&2; exit 1; }
  root=$(mkdir -p "$root" && cd "$root" && pwd)
  mkdir -p "$root"/{etc,munge,state,spool,log,run}
  chmod 0755 "$root/munge"  # munged refuses a socket folder that others cannot enter
  mungekey --create --keyfile="$root/munge/munge.key" --force
  chmod 0600 "$root/munge/munge.key"
  munged --force --socket="$root/munge/munge.sock" --key-file="$root/munge/munge.key" \
    --log-file="$root/log/munged.log" --pid-file="$root/run/munged.pid" \
    --seed-file="$root/munge/munge.seed"
  local memory
  memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
  cat >"$root/etc/slurm.conf" <<EOF
ClusterName=sieval-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$root/munge/munge.sock
StateSaveLocation=$root/state
SlurmdSpoolDir=$root/spool
SlurmctldPidFile=$root/run/slurmctld.pid
SlurmdPidFile=$root/run/slurmd.pid
SlurmctldLogFile=$root/log/slurmctld.log
SlurmdLogFile=$root/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$root/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
MailProg=/bin/true
MinJobAge=3600
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$root/etc/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF" -N localhost
  for _ in $(seq 100); do
    if [ "$(sinfo -h -o %T 2>/dev/null)" = "idle" ]; then
      echo "SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm.sh: the node did not become idle within 20 s; logs in $root/log" >&2
  tail -n 20 "$root"/log/*.log >&2 || true
  exit 1
}

stop() {
  local root=${1:?usage: slurm.sh stop ROOT}
  local name pid
  for name in slurmd slurmctld munged; do
    [ -f "$root/run/$name.pid" ] || continue
    pid=$(cat "$root/run/$name.pid")
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true  # a slurmd whose slurmctld had died ignores TERM
  done
}

case ${1:-} in
  install) install ;;
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: scripts/slurm.sh install | start ROOT | stop ROOT" >&2; exit 2 ;;
esac
