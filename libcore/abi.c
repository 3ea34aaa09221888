/*
 * abi.c - the layouts that ACCEL_BACKEND_ABI stands for. A plugin reads
 * these structs as it was compiled: the backend table and what its hooks
 * are given (operations, engines, devices, units and buffers) and the
 * parameters of each operation family that reach it through op->ext
 * (the accel/ops/ headers: struct accel_fft, accel_age_key, accel_hash_files,
 * accel_onnx_params with its tensors). Changing one of them without raising
 * ACCEL_BACKEND_ABI would let an older plugin load and misread it; this file
 * stops the build instead, on the 64-bit targets whose sizes it records.
 * After a change: raise ACCEL_BACKEND_ABI (accel/backend.h) and write the
 * new sizes here. A reordering that keeps every size is not caught: the
 * rule still holds for it.
 */
#include <accel/backend.h>
#include <accel/ops/age.h>
#include <accel/ops/fft.h>
#include <accel/ops/tensor.h>

#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))
#define ABI_SIZE(name, size) \
	_Static_assert(sizeof(struct name) == (size), \
		"struct " #name " changed: raise ACCEL_BACKEND_ABI and record its size in libcore/abi.c")

_Static_assert(ACCEL_BACKEND_ABI == 12, "ACCEL_BACKEND_ABI changed: record the sizes of its layouts in libcore/abi.c");
ABI_SIZE(accel_backend, 144);
ABI_SIZE(accel_prior_bound, 16);
ABI_SIZE(accel_op, 40);
ABI_SIZE(accel_engine, 80);
ABI_SIZE(accel_api_info, 16);
ABI_SIZE(accel_api_note, 16);
ABI_SIZE(accel_device, 11952);
ABI_SIZE(accel_prop, 180);
ABI_SIZE(accel_api, 148);
ABI_SIZE(accel_buf, 24);
ABI_SIZE(accel_unit, 128);
ABI_SIZE(accel_fft, 224);
ABI_SIZE(accel_age_key, 32);
ABI_SIZE(accel_hash_files, 16);
ABI_SIZE(accel_onnx_params, 48);
ABI_SIZE(accel_tensor, 136);
#endif
