#!/bin/sh
# Write the seed corpus of the profile fuzz target into
# tests/fuzz/corpus/profile: profiles of schema 2 for the target's machine
# ("Fuzz CPU", a GPU at PCI 0000:65:00.0, pci_id 10de:2330, CUDA driver
# 12.4) and for others (another CPU, another function or driver at that
# address), schema 1, entries that lack a field or a positive speed,
# values of the wrong JSON type (driver_versions as an array), numbers past
# a double, strings past their fields, escapes, deep nesting, and text that
# is not a profile (schema 3, not an object, not JSON, empty).
set -eu
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus/profile
mkdir -p "$out"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
gpu = {"id": "gpu0", "class": "gpu", "vendor": "NVIDIA", "model": "NVIDIA H100",
       "pci_address": "0000:65:00.0", "pci_id": "10de:2330", "driver": "nvidia",
       "driver_versions": {"cuda_driver_version": "12.4"}}
def entry(op="fft.c2c", engine="cufft:gpu0", key="cufft@pci:0000:65:00.0", sc="large", mbps=2500.0, **more):
    e = {"operation": op, "engine": engine, "engine_key": key, "size_class": sc, "mb_per_s": mbps}
    e.update(more)
    return {k: v for k, v in e.items() if v is not None}
def profile(entries, cpu="Fuzz CPU", devices=None, version=2):
    p = {"schema_version": version, "entries": entries}
    if version == 2:
        p["machine"] = {"cpu_model": cpu, "devices": [gpu] if devices is None else devices}
    return json.dumps(p, indent=1)
cpu_entry = entry("zstd.compress", "cpu", "cpu@cpu:Fuzz CPU", "small", 900)
files = {
    "this-machine": profile([entry(), cpu_entry, entry(sc="medium", mbps=1800)]),
    "other-cpu": profile([entry()], cpu="AMD EPYC 7763 64-Core Processor"),
    "other-pci-id": profile([entry()], devices=[dict(gpu, pci_id="10de:2331")]),
    "other-class": profile([entry()], devices=[dict(gpu, **{"class": "nic"}, pci_id=None)]),
    "video-on-gpu": profile([entry()], devices=[dict(gpu, **{"class": "video"})]),
    "other-driver": profile([entry()], devices=[dict(gpu, driver_versions={"cuda_driver_version": "13.0"})]),
    "driver-versions-array": profile([entry()], devices=[dict(gpu, driver_versions=["12.4", 13])]),
    "driver-version-number": profile([entry()], devices=[dict(gpu, driver_versions={"cuda_driver_version": 12.4})]),
    "devices-not-objects": profile([entry()], devices=[1, "gpu0", None, [gpu]]),
    "schema-1": profile([entry(key=None), entry("sha256", "openssl", None, "small", 3000)], version=1),
    "schema-1-as-float": profile([entry(key=None)], version=1).replace('"schema_version": 1', '"schema_version": 1.0'),
    "schema-3": profile([entry()], version=3),
    "schema-string": profile([entry()]).replace('"schema_version": 2', '"schema_version": "2"'),
    "no-machine": json.dumps({"schema_version": 2, "entries": [entry()]}),
    "no-entries": json.dumps({"schema_version": 2, "machine": {"cpu_model": "Fuzz CPU", "devices": []}}),
    "entries-not-array": profile({"a": entry()}),
    "bad-entries": profile([entry(mbps=0), entry(mbps=-5), entry(mbps="fast"), entry(op=None),
                            entry(key=None), entry(op=""), entry(key=""), entry(sc=None), 7, None, []]),
    "huge-speed": profile([entry()]).replace('2500.0', '1e999'),
    "tiny-speed": profile([entry()]).replace('2500.0', '4.9e-324'),
    "long-strings": profile([entry(op="o" * 40, key="k" * 300, sc="s" * 20, engine="e" * 50)]),
    "escapes": profile([entry(op="fft.c2c\u0000x", key="cufft@pci:0000:65:00.0\ud83d\ude00")]),
    "duplicate-keys": '{"schema_version": 1, "schema_version": 2, "entries": [], "entries": [%s]}' % json.dumps(entry(key=None)),
    "deep": '{"schema_version": 2, "x": ' + '[' * 2000 + ']' * 2000 + '}',
    "not-object": '[{"schema_version": 2}]',
    "not-json": '{"schema_version": 2, "entries": [',
    "trailing": profile([entry()]) + ' {}',
    "empty": '',
}
for name, text in files.items():
    open('%s/%s.json' % (out, name), 'w').write(text)
PY
