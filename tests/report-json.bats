#!/usr/bin/env bats
# --json run reports of every program that runs a job (accel-crypt and its
# hash, accel-fft, accel-infer, accel-transcode; accel-compress has
# tests/compress-json.bats): one JSON document, the last thing on stderr,
# with prog, host, routes, runs (bytes as the real sizes, the engines
# named), probes and the exit status, also when the run fails; stdout
# keeps only the data.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# doc FILE: the JSON document at the end of a stderr capture (from its
# first line that is "{"); fails when there is none or it is not one
# valid document.
doc() {
	sed -n '/^{$/,$p' "$1" > doc.json
	[ -s doc.json ]
	jq -e 'type == "object"' doc.json > /dev/null
	cat doc.json
}

@test "accel-crypt --json: encryption and decryption runs, bytes as the plaintext's size, the openssl engine; stdout only the data" {
	seq 1 200000 > p
	"$B/accel-crypt" keygen -o key.txt 2> /dev/null
	"$B/accel-crypt" --json -r "$("$B/accel-crypt" keygen -y key.txt)" p 2> e.err > p.age
	doc e.err > e.json
	size=$(stat -c %s p)
	jq -e --argjson s "$size" '.schema_version == 1 and .prog == "accel-crypt" and .status == 0
		and .routes[0].operation == "age.encrypt" and (.runs | length == 1) and .runs[0].input == "p"
		and .runs[0].bytes_in == $s and (.runs[0].engines[0].name | startswith("openssl"))
		and (.probes | length > 0) and (.host | has("hostname"))' e.json
	# The payload follows the header: the output is larger by more than the header's line.
	jq -e --argjson o "$(stat -c %s p.age)" '.runs[0].bytes_out < $o' e.json
	"$B/accel-crypt" -d --json -i key.txt p.age 2> d.err > back
	cmp p back
	doc d.err | jq -e --argjson s "$size" '.routes[0].operation == "age.decrypt" and .runs[0].bytes_out == $s and .status == 0'
}

@test "accel-crypt --json: a wrong key is the error line, then a report with status 3 and no run" {
	echo secret > p
	"$B/accel-crypt" keygen -o k1 2> /dev/null
	"$B/accel-crypt" keygen -o k2 2> /dev/null
	"$B/accel-crypt" -r "$("$B/accel-crypt" keygen -y k1)" -o p.age p
	run --separate-stderr "$B/accel-crypt" -d --json -i k2 p.age
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "accel-crypt: p.age: cannot decrypt: no identity matched any of the recipients (wrong key)" ]
	echo "$stderr" > err
	doc err | jq -e '.status == 3 and .runs == [] and .prog == "accel-crypt"'
	# A damaged payload: the run is there, and the status is the run's.
	seq 1 100000 > big
	"$B/accel-crypt" -r "$("$B/accel-crypt" keygen -y k1)" -o big.age big
	head -c 70000 big.age > cut.age
	run --separate-stderr "$B/accel-crypt" -d --json -i k1 -o out cut.age
	[ "$status" -eq 3 ]
	[ ! -e out ]
	echo "$stderr" > err
	doc err | jq -e '.status == 3 and (.runs | length == 1) and .runs[0].input == "cut.age"'
}

@test "accel-crypt hash --json: one run per file with its size, its lines' bytes and the engine; a missing file's error" {
	seq 1 50000 > a
	head -c 12345 /dev/urandom > b
	run --separate-stderr "$B/accel-crypt" hash --json -T2 a b missing
	[ "$status" -eq 1 ]
	"$B/accel-crypt" hash a b > ref
	[ "$output" = "$(cat ref)" ]
	[ "${stderr_lines[0]}" = "accel-crypt: missing: No such file or directory" ]
	echo "$stderr" > err
	doc err > h.json
	jq -e '.prog == "accel-crypt hash" and .status == 1 and .routes[0].operation == "sha256"' h.json
	jq -e '[.runs[].input] == ["a", "b", "missing"]' h.json
	jq -e --argjson a "$(stat -c %s a)" --argjson b "$(stat -c %s b)" \
		'.runs[0].bytes_in == $a and .runs[1].bytes_in == $b and .runs[2].error == "No such file or directory"' h.json
	# The lines on stdout, file by file.
	jq -e --argjson n "$(stat -c %s ref)" '.runs[0].bytes_out + .runs[1].bytes_out == $n and .runs[2].bytes_out == 0' h.json
	jq -e 'all(.runs[0:2][]; .error == null and .stages[0].stage == "hash" and .stages[0].what == "sha256"
		and (.stages[0].engine | startswith("openssl")))' h.json
	# -c: a file that changed is its run's error.
	echo more >> b
	run --separate-stderr "$B/accel-crypt" hash -c --json ref
	[ "$status" -eq 1 ]
	echo "$stderr" > err
	doc err | jq -e '.status == 1 and .runs[0].error == null and .runs[1].error == "computed checksum did NOT match"'
}

@test "accel-crypt keygen, sign and verify have no report: --json is refused as before" {
	for sub in keygen sign verify; do
		run "$B/accel-crypt" "$sub" --json
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "accel-crypt: unknown option '--json'" ]
	done
}

@test "accel-fft --json: the route, one run with the bytes of samples and spectra, the fftw engine; a failed run's status" {
	head -c 262144 /dev/urandom > s.i16
	"$B/accel-fft" -t i16 -n 256 s.i16 > ref.f32
	"$B/accel-fft" --json -t i16 -n 256 s.i16 2> f.err > got.f32
	cmp ref.f32 got.f32
	doc f.err > f.json
	jq -e --argjson s "$(stat -c %s s.i16)" --argjson o "$(stat -c %s got.f32)" \
		'.prog == "accel-fft" and .status == 0 and .routes[0].operation == "fft.r2c"
		and .runs[0].input == "s.i16" and .runs[0].bytes_in == $s and .runs[0].bytes_out == $o
		and (.runs[0].engines[0].name | startswith("fftw")) and ([.devices[].id] | index("cpu0") != null)' f.json
	head -c 1001 s.i16 > odd.i16
	run --separate-stderr "$B/accel-fft" --json -t i16 -n 256 odd.i16
	[ "$status" -eq 3 ]
	[[ "${stderr_lines[0]}" == "accel-fft: odd.i16: partial sample at the end of input"* ]]
	echo "$stderr" > err
	doc err | jq -e '.status == 3 and (.runs | length == 1)'
	# An input that cannot be read is reported too.
	run --separate-stderr "$B/accel-fft" --json -t i16 nosuch
	[ "$status" -eq 1 ]
	echo "$stderr" > err
	doc err | jq -e '.status == 1 and .runs == []'
}

@test "accel-infer --json: the run report on stderr; with --info the model's JSON on stdout as before" {
	[ -f "$B/plugins/accel_onnxruntime.so" ] && /usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null ||
		skip "no onnxruntime backend or python3-onnx"
	/usr/bin/python3 "$ROOT/tests/infer/models.py" . > /dev/null 2>&1
	[ -f lin.onnx ] || skip "tests/infer/models.py made no models"
	run -0 --separate-stderr "$B/accel-infer" -m lin.onnx --info --json
	echo "$output" | jq -e '.schema_version == 1 and .inputs[0].name == "x"'
	[ -z "$stderr" ]
	/usr/bin/python3 -c "import numpy as np, sys
sys.stdout.buffer.write(b''.join((np.arange(8, dtype='<f4').reshape(2, 4) + i).tobytes() for i in range(3)))" > in.raw
	"$B/accel-infer" -m lin.onnx --shape 2,4 --dtype float32 in.raw > ref.npy
	"$B/accel-infer" -m lin.onnx --shape 2,4 --dtype float32 --json in.raw 2> i.err > out.npy
	cmp ref.npy out.npy
	doc i.err | jq -e --argjson o "$(stat -c %s out.npy)" '.prog == "accel-infer" and .status == 0
		and ([.routes[].operation] | index("onnx.run") != null) and .runs[0].input == "in.raw"
		and .runs[0].units == 3 and .runs[0].bytes_out == $o
		and ([.runs[0].engines[] | select(.units > 0) | .name] | length == 1)'
	head -c 40 in.raw > short.raw
	run --separate-stderr "$B/accel-infer" -m lin.onnx --shape 1,4 --json short.raw
	[ "$status" -eq 3 ]
	[[ "${stderr_lines[0]}" == "accel-infer: short.raw: truncated raw tensor"* ]]
	echo "$stderr" > err
	doc err | jq -e '.status == 3'
}

@test "accel-transcode --json: input, bytes out as the file's size, frames, each stage's engine and why it is software" {
	command -v ffmpeg > /dev/null || skip "no ffmpeg program"
	ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=25:duration=2 -c:v libx264 -preset ultrafast -g 25 \
		-pix_fmt yuv420p clip.mp4
	run -0 --separate-stderr "$B/accel-transcode" --json --to h264 --scale 80x60 -o out.mkv clip.mp4
	[ -z "$output" ]
	echo "$stderr" > err
	doc err > t.json
	jq -e --argjson i "$(stat -c %s clip.mp4)" --argjson o "$(stat -c %s out.mkv)" \
		'.prog == "accel-transcode" and .status == 0 and .runs[0].input == "clip.mp4"
		and .runs[0].bytes_in == $i and .runs[0].bytes_out == $o
		and .runs[0].frames_decoded == 50 and .runs[0].frames_encoded == 50 and .runs[0].error == null' t.json
	jq -e '[.runs[0].stages[].stage] == ["decoder", "filter", "encoder"] and .runs[0].stages[2].what == "libx264"
		and all(.runs[0].stages[]; (.engine | length > 0) and .frames == 50)' t.json
	# To stdout: the bytes written are the data's.
	"$B/accel-transcode" --json --hw none --to y4m clip.mp4 2> y.err > out.y4m
	doc y.err | jq -e --argjson o "$(stat -c %s out.y4m)" '.runs[0].bytes_out == $o
		and all(.runs[0].stages[]; .fallback == null)'
	# A device asked for that is not there: each stage's fallback says why.
	if ! ls /dev/dri/renderD* > /dev/null 2>&1; then
		run -0 --separate-stderr "$B/accel-transcode" --json --hw vaapi --to y4m clip.mp4
		[[ "${stderr_lines[0]}" == "accel-transcode: warning: --hw vaapi: "* ]]
		echo "$stderr" > err
		doc err | jq -e 'all(.runs[0].stages[]; .fallback | startswith("vaapi: "))'
	fi
	# A failed run: the error line, then the report with the error and the status.
	head -c 2000 clip.mp4 > cut.mp4
	run --separate-stderr "$B/accel-transcode" --json --to h264 -o c.mkv cut.mp4
	[ "$status" -eq 3 ]
	[ ! -e c.mkv ]
	[[ "${stderr_lines[0]}" == "accel-transcode: cut.mp4: "* ]]
	echo "$stderr" > err
	doc err | jq -e --arg e "${stderr_lines[0]#accel-transcode: }" '.status == 3 and .runs[0].error == $e and .runs[0].bytes_out == 0'
}

@test "accel-compress --json has prog and status as the others" {
	seq 1 1000 > a
	"$B/accel-compress" --json -c a 2> c.err > a.zst
	doc c.err | jq -e '.prog == "accel-compress" and .status == 0'
	[ "$(jq -c keys_unsorted doc.json)" = '["schema_version","prog","host","devices","routes","runs","probes","status","seconds"]' ]
	printf 'not zstd' > bad.zst
	run --separate-stderr "$B/accel-compress" -d --json bad.zst
	[ "$status" -ne 0 ]
	echo "$stderr" > err
	doc err | jq -e --argjson s "$status" '.status == $s'
}
