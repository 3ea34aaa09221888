# Tour step (sourced by examples/tour.sh): accel-crypt encrypts the zstd
# file of the compress step to a new key; age decrypts it, accel-compress
# decompresses it, and the result is the corpus. Then the other way, and
# the corpus's digest against sha256sum.
step "accel-crypt: compress, encrypt; age decrypts, accel-compress decompresses"
accel-crypt keygen -q -o "$work/key.txt"
rec=$(accel-crypt keygen -y "$work/key.txt")
csize=$(stat -c %s "$work/c.zstd")
t0=$(now)
accel-crypt -r "$rec" -o "$work/c.zstd.age" "$work/c.zstd"
t1=$(now)
age -d -i "$work/key.txt" "$work/c.zstd.age" | accel-compress -d | cmp -s - "$corpus" && interop=ok || interop=FAILED
t2=$(now)
accel-crypt -d -i "$work/key.txt" -o "$work/c.zstd.back" "$work/c.zstd.age"
t3=$(now)
cmp -s "$work/c.zstd" "$work/c.zstd.back" && rt=ok || rt=FAILED
age -r "$rec" "$work/c.zstd" | accel-crypt -d -i "$work/key.txt" | cmp -s - "$work/c.zstd" && back=ok || back=FAILED
echo "encrypt: $(mbps "$csize" "$t0" "$t1") MB/s   decrypt: $(mbps "$csize" "$t2" "$t3") MB/s   ($csize bytes)"
echo "age -d | accel-compress -d gives the corpus: $interop   our round trip: $rt   we read age's file: $back"
ours=$(accel-crypt hash "$corpus" | cut -d' ' -f1)
peer=$(sha256sum "$corpus" | cut -d' ' -f1)
[ "$ours" = "$peer" ] && digest=ok || digest=FAILED
echo "sha256 of the corpus: $ours (sha256sum agrees: $digest)"
rm -f "$work/c.zstd.back"
[ "$interop" = ok ] && [ "$rt" = ok ] && [ "$back" = ok ] && [ "$digest" = ok ]
