#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests of the job scripts beside this file
# (and for trying them): munged, slurmctld and slurmd as root, every file of theirs in one
# folder. Not a production set-up: no accounting, no cgroups, one partition.
#
# Usage:
#   scripts/slurm/local_cluster.sh start    # waits until `sinfo` shows the node idle
#   export SLURM_CONF=/tmp/wiki2bert-slurm/slurm.conf   # what start prints; then sbatch, squeue...
#   scripts/slurm/local_cluster.sh stop
#
# Environment:
#   WIKI2BERT_SLURM_DIR   the folder for config, state, logs and sockets [/tmp/wiki2bert-slurm]
#   WIKI2BERT_SLURM_CPUS  the CPUs the node declares [8; more than the machine has is allowed,
#                         so that a head job and worker jobs fit beside each other on 2 cores]
#   WIKI2BERT_SLURM_PORT  slurmctld's port; slurmd takes the next one [6817]
# Needs the Debian packages slurm-wlm and munge (`apt-get install slurm-wlm munge`) and root.
set -euo pipefail

DIR=${WIKI2BERT_SLURM_DIR:-/tmp/wiki2bert-slurm}
CPUS=${WIKI2BERT_SLURM_CPUS:-8}
PORT=${WIKI2BERT_SLURM_PORT:-6817}
NODE=$(hostname -s)
CONF=$DIR/slurm.conf
SOCKET=$DIR/munge/munge.socket

die() { echo "Error: $*" >&2; exit 1; }

write_conf() {
    local mem_mb
    mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    cat > "$CONF" <<CONF
# written by scripts/slurm/local_cluster.sh: one node, state in $DIR
ClusterName=wiki2bert
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=5
MinJobAge=60
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
    [ "$(id -u)" = 0 ] || die "local_cluster.sh needs root (munged and slurmd run as root here)"
    for cmd in munged mungekey slurmctld slurmd sinfo; do
        command -v "$cmd" >/dev/null || die "$cmd not found: apt-get install slurm-wlm munge"
    done
    if [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null; then
        die "a local cluster already runs from $DIR: run '$0 stop' first"
    fi
    rm -rf "$DIR"
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
    chmod 700 "$DIR" "$DIR/munge"
    mungekey --create --keyfile "$DIR/munge/munge.key" --force
    munged --force --socket "$SOCKET" --key-file "$DIR/munge/munge.key" \
        --pid-file "$DIR/munge/munged.pid" --log-file "$DIR/munge/munged.log" \
        --seed-file "$DIR/munge/munged.seed"
    write_conf
    export SLURM_CONF=$CONF
    slurmctld -i     # -i: ignore state left by an earlier cluster in this folder
    slurmd
    local i state=""
    for i in $(seq 1 120); do
        state=$(sinfo --noheader --format=%T --nodes="$NODE" 2>/dev/null || true)
        [ "$state" = idle ] && break
        sleep 0.5
    done
    [ "$state" = idle ] || { tail -n 5 "$DIR"/slurm*.log >&2; die "the node is '${state:-not answering}', not idle, after 60 s (logs in $DIR)"; }
    echo "export SLURM_CONF=$CONF"
}

stop() {
    local f pid alive pids=()
    if [ -f "$CONF" ]; then   # jobs first: their steps would outlive slurmd
        SLURM_CONF=$CONF scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
    fi
    for f in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munge/munged.pid"; do
        [ -f "$f" ] && pid=$(cat "$f") && kill "$pid" 2>/dev/null && pids+=("$pid")
    done
    for _ in $(seq 1 100); do   # up to 10 s, then KILL
        alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && return 0
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
