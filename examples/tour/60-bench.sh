# Tour step (sourced by examples/tour.sh): accel-bench measures a few
# operations at two small sizes on every engine here that can run them,
# beside their peer tools, and gnuplot draws the measurements into
# $out/bench.svg, which stays after the tour.
step "accel-bench --time 1: zstd both ways, age and sha256 on every engine here, beside zstd, age and sha256sum"
accel-bench --time 1 --size 1M,16M --vs -f --plot "$out/bench.svg" zstd.compress zstd.decompress age.encrypt sha256
echo "plot: $out/bench.svg (MB/s against size per engine, one panel per operation; our/peer bars)"
