# slurm.bash - a one-node Slurm cluster on this machine for the tests
# (tests/slurm.bats): munged with a key made here, slurmctld and slurmd as
# plain local processes (no systemd), every file of theirs under one
# temporary folder. Debian's slurmctld, slurmd, slurm-client and munge
# (tests/deps.d/slurm.list).
#
#   slurm_start DIR [EXTRA_NODE_LINES]   start the cluster; exports SLURM_CONF
#   slurm_start_node DIR NODE            start a slurmd for another node line
#   slurm_stop DIR                       stop it: every daemon by its pid file
#   slurm_wait_idle NODE                 wait until NODE takes jobs
#
# The node is this machine's short host name with nproc CPUs, in partition
# "debug"; the daemons run as the current user (SlurmUser and SlurmdUser),
# which runs jobs as itself (as root: any user). Plugins: no cgroups
# (proctrack/linuxproc, task/none), select/cons_tres, GresTypes=gpu.
# DIR/etc/gres.conf is read if the caller wrote it before slurm_start;
# $SLURM_HOST_GRES is the Gres= of this machine's node (none if empty),
# $SLURM_EXTRA_CONF more slurm.conf lines (a Prolog=).
# DIR should be short: munged's socket path must fit 108 bytes.

# A TCP port nothing listens on (from /proc/net/tcp*; LISTEN is 0A).
_slurm_free_port()
{
	local used p
	used=$(awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print strtonum("0x" a[2]) }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null)
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 30000))
		grep -qx "$p" <<<"$used" || { echo "$p"; return 0; }
	done
	return 1
}

# Wait up to $2 seconds (default 30) for command $1 to succeed.
_slurm_until()
{
	local i
	for ((i = 0; i < ${2:-30} * 5; i++)); do
		eval "$1" > /dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

slurm_start()
{
	local d=$1 extra=${2:-} user host cpus p1 p2
	user=$(id -un)
	host=$(hostname -s)
	cpus=$(nproc)
	mkdir -p "$d"/{etc,state,log,run,munge} "$d/spool/$host"
	chmod 700 "$d/munge"
	# munge: a key of our own (mungekey writes it mode 0600).
	mungekey -c -k "$d/munge/munge.key" || return 1
	# --force: the folders under /tmp are world-writable above us.
	munged --force --socket="$d/munge/sock" --key-file="$d/munge/munge.key" \
		--pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" \
		--seed-file="$d/munge/seed" || return 1
	p1=$(_slurm_free_port) && p2=$(_slurm_free_port) || return 1
	[ "$p1" != "$p2" ] || p2=$((p1 + 1))
	[ -f "$d/etc/gres.conf" ] || : > "$d/etc/gres.conf"
	cat > "$d/etc/slurm.conf" <<-EOF
		ClusterName=accel-test
		SlurmctldHost=$host(127.0.0.1)
		SlurmctldPort=$p1
		SlurmdPort=$p2
		SlurmUser=$user
		SlurmdUser=$user
		AuthType=auth/munge
		CredType=cred/munge
		AuthInfo=socket=$d/munge/sock
		StateSaveLocation=$d/state
		SlurmdSpoolDir=$d/spool/%n
		SlurmctldPidFile=$d/run/slurmctld.pid
		SlurmdPidFile=$d/run/slurmd-%n.pid
		SlurmctldLogFile=$d/log/slurmctld.log
		SlurmdLogFile=$d/log/slurmd-%n.log
		SlurmctldDebug=info
		SlurmdDebug=info
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		JobAcctGatherType=jobacct_gather/none
		AccountingStorageType=accounting_storage/none
		JobCompType=jobcomp/none
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core
		SchedulerType=sched/builtin
		MpiDefault=none
		ReturnToService=2
		SlurmdTimeout=60
		InactiveLimit=0
		KillWait=5
		GresTypes=gpu
		MaxArraySize=1001
		${SLURM_EXTRA_CONF:-}
		NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus ${SLURM_HOST_GRES:+Gres=$SLURM_HOST_GRES }State=UNKNOWN
		$extra
		PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	EOF
	export SLURM_CONF="$d/etc/slurm.conf"
	# -i: ignore old state (there is none); the daemons fork and write
	# their pid files, which slurm_stop reads.
	slurmctld -i -f "$SLURM_CONF" || return 1
	slurmd -f "$SLURM_CONF" -N "$host" || return 1
	_slurm_until "scontrol ping | grep -q UP" 30 || return 1
	slurm_wait_idle "$host"
}

# Start one more slurmd, for NODE (a NodeName line given to slurm_start,
# with a Port of its own), as slurmd -N NODE does.
slurm_start_node()
{
	local d=$1 node=$2
	mkdir -p "$d/spool/$node"
	slurmd -f "$d/etc/slurm.conf" -N "$node" || return 1
	slurm_wait_idle "$node"
}

slurm_wait_idle()
{
	_slurm_until "sinfo -h -n '$1' -o %T | grep -qx idle" "${2:-30}"
}

# Stop one daemon by its pid file: TERM, then KILL after 10 seconds.
_slurm_kill_pidfile()
{
	local f=$1 pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f" 2>/dev/null)
	[[ "$pid" =~ ^[0-9]+$ ]] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	_slurm_until "! kill -0 $pid" 10 || kill -KILL "$pid" 2>/dev/null
	_slurm_until "! kill -0 $pid" 5
}

slurm_stop()
{
	local d=$1 f
	[ -d "$d" ] || return 0
	if [ -f "$d/etc/slurm.conf" ]; then
		# Jobs first, so that no slurmstepd outlives its slurmd.
		SLURM_CONF="$d/etc/slurm.conf" scancel --quiet --full -u "$(id -un)" 2>/dev/null
		SLURM_CONF="$d/etc/slurm.conf" _slurm_until '[ -z "$(squeue -h 2>/dev/null)" ]' 15
	fi
	for f in "$d"/run/slurmd-*.pid; do
		_slurm_kill_pidfile "$f"
	done
	_slurm_kill_pidfile "$d/run/slurmctld.pid"
	_slurm_kill_pidfile "$d/run/munged.pid"
}
