# accel-bench: its pieces under cmd/bench/ (bench.h says which does what).
accel-bench_SRC := $(wildcard cmd/bench/*.c)
