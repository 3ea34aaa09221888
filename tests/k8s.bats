#!/usr/bin/env bats
# Kubernetes without a cluster: examples/k8s/accel-features.sh writes
# accel-detect --format nfd as node-feature-discovery's local source reads
# it, checked here against NFD's documented rules (docs/usage/
# customization-guide.md, "Local feature source", and source/local/local.go):
# lines "NAME[=VALUE]", "#" comments, "# +expiry-time=RFC3339" (the only
# other directives are no-label and no-feature), at most 64 KiB; and the
# Kubernetes label rules NFD's master applies: NAME is PREFIX/NAME with
# PREFIX a DNS subdomain (at most 253, lower case) outside kubernetes.io
# (feature.node.kubernetes.io excepted), NAME and VALUE at most 63 of
# [A-Za-z0-9._-] beginning and ending alphanumeric (VALUE may be empty).
# Then the Job of examples/k8s/job.yaml is matched against the labels of
# the recorded GPU server and of a machine without GPU.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	/usr/bin/python3 -c 'import yaml' 2> /dev/null || skip "python3-yaml is not installed (make deps: tests/deps.d/k8s.list)"
	cd "$BATS_TEST_TMPDIR"
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
}

# nfd_check FILE: exit 1 with the first rule broken; print the labels
# (NAME=VALUE lines, as NFD makes them) otherwise.
nfd_check() {
	/usr/bin/python3 - "$1" <<'PY'
import re, sys, datetime
path = sys.argv[1]
data = open(path, "rb").read()
assert len(data) <= 65536, "over NFD's 64 KiB"
name_re = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
dns_re = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
labels, expiry = {}, None
now = datetime.datetime.now(datetime.timezone.utc)
for raw in data.decode("utf-8").split("\n"):
    line = raw.strip()
    if not line:
        continue
    if line.startswith("#"):
        if line.startswith("# +"):
            key, _, val = line[3:].partition("=")
            assert key in ("expiry-time", "no-label", "no-feature"), "unknown directive: " + line
            if key == "expiry-time":
                expiry = datetime.datetime.strptime(val.strip(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
        continue
    if expiry is not None and expiry < now:
        continue
    key, eq, val = line.partition("=")
    if "/" in key:
        prefix, name = key.split("/", 1)
        assert len(prefix) <= 253 and dns_re.match(prefix), "prefix: " + line
        assert not (prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io")) or \
            prefix == "feature.node.kubernetes.io" or prefix.endswith(".feature.node.kubernetes.io"), "denied namespace: " + line
    else:
        prefix, name = "feature.node.kubernetes.io", key
    assert name_re.match(name), "name: " + line
    if not eq:
        val = "true"
    assert val == "" or name_re.match(val), "value: " + line
    full = prefix + "/" + name
    assert full not in labels, "twice: " + line
    labels[full] = val
assert labels, "no labels"
for k, v in labels.items():
    print(k + "=" + v)
PY
}

# job_matches LABELS: exit 0 when examples/k8s/job.yaml's required node
# affinity matches a node holding LABELS (NAME=VALUE lines), as the
# scheduler evaluates In, NotIn, Exists, DoesNotExist, Gt, Lt.
job_matches() {
	/usr/bin/python3 - "$ROOT/examples/k8s/job.yaml" "$1" <<'PY'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
labels = dict(l.split("=", 1) for l in open(sys.argv[2]).read().split("\n") if l)
terms = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
    "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
def ok(e):
    k, op, vs = e["key"], e["operator"], e.get("values", [])
    v = labels.get(k)
    if op == "In": return v in vs
    if op == "NotIn": return v not in vs
    if op == "Exists": return v is not None
    if op == "DoesNotExist": return v is None
    if op == "Gt": return v is not None and int(v) > int(vs[0])
    if op == "Lt": return v is not None and int(v) < int(vs[0])
    raise SystemExit("operator " + op)
sys.exit(0 if any(all(ok(e) for e in t["matchExpressions"]) for t in terms) else 1)
PY
}

@test "k8s: accel-features.sh writes features.d/accel whole, with an expiry-time TTL seconds ahead, in NFD's format" {
	run -0 sh "$ROOT/examples/k8s/accel-features.sh" fd 600
	[ "$(ls -A fd)" = accel ]
	head -n 1 fd/accel | grep -Eq '^# \+expiry-time=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'
	exp=$(date -u -d "$(head -n 1 fd/accel | cut -d= -f2)" +%s)
	[ $((exp - $(date +%s))) -gt 590 ] && [ $((exp - $(date +%s))) -le 600 ]
	run -0 nfd_check fd/accel
	[[ "$output" == *"accel.example/cpu-"*"=true"* || "$output" == *"accel.example/gpu.count="* ]]
	# the labels are accel-detect's lines, prefix kept
	[ "$(grep -v '^#' fd/accel | sort)" = "$(echo "$output" | sort)" ]
	run -2 sh "$ROOT/examples/k8s/accel-features.sh" fd 10m
}

@test "k8s: accel-detect --format nfd of this machine and of the recorded sysroots keeps NFD's and Kubernetes' label rules" {
	"$ROOT/build/accel-detect" --format nfd > here
	nfd_check here > /dev/null
	for s in gpu nic qat; do
		ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-$s" "$ROOT/build/accel-detect" --format nfd > "$s"
		nfd_check "$s" > /dev/null
	done
	# the checker fails on what NFD or Kubernetes refuse
	printf 'accel.example/ok=1\naccel.example/bad name=1\n' > broken
	run -1 nfd_check broken
	printf 'kubernetes.io/gpu=1\n' > broken
	run -1 nfd_check broken
	printf '# +expiry=2099-01-01T00:00:00Z\naccel.example/a=1\n' > broken
	run -1 nfd_check broken
	# an expired file gives no labels (NFD drops them)
	printf '# +expiry-time=2001-01-01T00:00:00Z\naccel.example/a=1\n' > old
	run -1 nfd_check old
}

@test "k8s: examples/k8s/job.yaml's node affinity selects the recorded GPU server's labels, not a machine without GPUs" {
	ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-gpu" "$ROOT/build/accel-detect" --format nfd > gpu
	nfd_check gpu > gpu.labels
	job_matches gpu.labels
	ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-nic" "$ROOT/build/accel-detect" --format nfd > nic
	nfd_check nic > nic.labels
	run -1 job_matches nic.labels
	# every label the Job names is one accel-detect writes
	for k in $(grep -o 'key: [^,]*' "$ROOT/examples/k8s/job.yaml" | cut -d' ' -f2); do
		grep -q "^$k=" gpu.labels
	done
	/usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["kind"] == "DaemonSet"
v = d["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["path"]; assert v == "/etc/kubernetes/node-feature-discovery/features.d", v' "$ROOT/examples/k8s/daemonset.yaml"
}
