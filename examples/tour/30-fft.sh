# Tour step (sourced by examples/tour.sh): accel-fft on a tone made by sox,
# its peak checked to land in the tone's bin at the expected level, then a
# waterfall of an I/Q stream through --average.
step "accel-fft: spectrum of a 1 kHz tone made by sox (48000-point FFT, 1 Hz bins)"
sox -r 48000 -c 1 -n -t f32 -r 48000 -c 1 - synth 2 sine 1000 gain -6.0206 > "$work/tone.f32"
t0=$(now)
accel-fft -v -t f32 -n 48000 --norm forward --out db --text "$work/tone.f32" > "$work/tone.csv" 2> "$work/log"
t1=$(now)
engine=$(sed -n 's/^  1\. \([^ ]*\).*/\1/p' "$work/log" | head -n 1)
# Each row: the bin of the peak and its level (amplitude 0.5, rect window,
# --norm forward: |X| = 0.25, -12.04 dB).
peaks=$(tr ',' '\n' < "$work/tone.csv" | awk -v n=24001 '
	{ i = (NR - 1) % n; v = $1 + 0; if ($1 ~ /inf|nan/) v = -1000
	  if (i == 0 || v > m) { m = v; k = i } }
	i == n - 1 { printf "%d %.2f\n", k, m }' | sort -u)
echo "engine: $engine   rows: $(wc -l < "$work/tone.csv")   peak bin and dB: $peaks" \
	"  $(mbps "$(stat -c %s "$work/tone.f32")" "$t0" "$t1") MB/s"
[ "$peaks" = "1000 -12.04" ] || { echo "peak FAILED: expected bin 1000 at -12.04 dB"; false; }

step "accel-fft: waterfall of an I/Q tone at +300 kHz (cu8 at 2.4 MS/s, Blackman-Harris, DC centred, 50 spectra per row)"
# I = cos, Q = sin: exp(+i w t), 128 bins above DC of 1024, column 640 once shifted.
sox -r 2400000 -c 2 -n -r 2400000 -c 2 -t u8 -e unsigned "$work/iq.cu8" synth 1 sine 300000 0 25 sine 300000 gain -1
t0=$(now)
accel-fft -t cu8 -n 1024 -w blackman-harris --shift --out db --average 50 "$work/iq.cu8" > "$work/rows.f32"
t1=$(now)
rows=$(( $(stat -c %s "$work/rows.f32") / 4096 ))
peak=$(od -A n -v -f -w4096 "$work/rows.f32" | awk '{ k = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $k + 0) k = i; print k - 1 }' | sort -u)
echo "$rows rows of 1024 dB values from $(stat -c %s "$work/iq.cu8") bytes of cu8, peak column $peak," \
	"$(mbps "$(stat -c %s "$work/iq.cu8")" "$t0" "$t1") MB/s"
[ "$rows" -eq 47 ] && [ "$peak" = 640 ] || { echo "waterfall FAILED: expected 47 rows peaking in column 640"; false; }
