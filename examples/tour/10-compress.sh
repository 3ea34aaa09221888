# Tour step (sourced by examples/tour.sh): accel-compress in each format on
# the corpus, checked against zstd, gzip and lz4. Leaves $work/c.zstd,
# $work/c.gzip and $work/c.lz4 for later steps.
for fmt in zstd gzip lz4; do
	step "accel-compress --format $fmt"
	t0=$(now)
	accel-compress -v --format "$fmt" -o "$work/c.$fmt" "$corpus" 2> "$work/log"
	t1=$(now)
	engine=$(sed -n 's/^  1\. \([^ ]*\).*/\1/p' "$work/log" | head -n 1)
	csize=$(stat -c %s "$work/c.$fmt")
	accel-compress -d -o "$work/d.$fmt" "$work/c.$fmt"
	t2=$(now)
	cmp -s "$corpus" "$work/d.$fmt" && rt=ok || rt=FAILED
	case $fmt in
	zstd) peer="zstd -dc" ;;
	gzip) peer="gzip -dc" ;;
	lz4) peer="lz4 -dc" ;;
	esac
	$peer < "$work/c.$fmt" | cmp -s - "$corpus" && interop=ok || interop=FAILED
	ratio=$(awk -v a="$size" -v b="$csize" 'BEGIN { printf "%.3f", a / b }')
	echo "engine: $engine   ratio: $ratio   compress: $(mbps "$size" "$t0" "$t1") MB/s" \
		"  decompress: $(mbps "$size" "$t1" "$t2") MB/s"
	echo "round trip: $rt   '$peer' reads our output: $interop"
	rm -f "$work/d.$fmt"
	[ "$rt" = ok ] && [ "$interop" = ok ]
done

step "Frames of the zstd file (accel-compress --list)"
accel-compress -l "$work/c.zstd"
