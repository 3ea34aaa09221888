#!/bin/sh
# prolog.sh - a Slurm Prolog that checks a job's accelerator requirement
# on the node before the job runs there, with accel-detect --require.
#
#   slurm.conf:  Prolog=/path/to/examples/slurm/prolog.sh
#   a job:       sbatch --comment='accel-require=gpu>=2' job.sh
#
# The requirement is the job's comment, "accel-require=EXPR" (EXPR in
# accel-detect's --require language: gpu, vulkan, aes,avx2, gpu>=2,
# gpu.memory>=40G); a job without one passes. When the node does not meet
# it (accel-detect exits 4), the node is drained with accel-detect's reason
# (scontrol update nodename=$SLURMD_NODENAME state=drain reason=...) and
# the prolog fails, so that Slurm requeues the job for another node. Any
# other failure of accel-detect (a usage error in EXPR: exit 2) fails the
# prolog without draining. Slurm runs a Prolog as SlurmdUser (root) with
# SLURM_JOB_ID and SLURMD_NODENAME set, and no PATH of the job's.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}
# The programs: those in $ACCEL_BUILD (a folder) when set, else those of the
# build folder two levels above this script when it holds them, else PATH.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../../build/accel-detect" ]; then
	PATH="$here/../../build:$PATH"
fi
[ -n "${SLURM_JOB_ID:-}" ] || { echo "prolog.sh: SLURM_JOB_ID is not set: run me as a Slurm Prolog" >&2; exit 2; }
# The job's comment (squeue's %k), as given to sbatch --comment.
comment=$(squeue -h -j "$SLURM_JOB_ID" -o %k) || { echo "prolog.sh: job $SLURM_JOB_ID: squeue failed" >&2; exit 1; }
case $comment in
accel-require=*) expr=${comment#accel-require=} ;;
*) exit 0 ;;
esac
why=$(accel-detect --require "$expr" 2>&1 >/dev/null)
rc=$?
case $rc in
0) exit 0 ;;
4)
	# accel-detect's line, less its "accel-detect: " (Slurm shows reasons on one line).
	reason="accel: $(printf '%s' "$why" | sed 's/^accel-detect: //' | tr '\n' ' ' | sed 's/ *$//')"
	scontrol update nodename="$SLURMD_NODENAME" state=drain reason="$reason"
	echo "prolog.sh: job $SLURM_JOB_ID: $reason" >&2
	exit 1
	;;
*)
	echo "prolog.sh: job $SLURM_JOB_ID: accel-detect --require '$expr' failed (exit $rc): $why" >&2
	exit 1
	;;
esac
