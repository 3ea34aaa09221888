/*
 * test_transcode_fault.c - accel_fault_hit(), the fault injection hook of
 * programs that run units of their own (accel-transcode's video packets):
 * engine names match as in the stream engine ($ACCEL_FAULT rules name an
 * engine, a backend or BACKEND.VARIANT, narrowed to one stage with
 * @STAGE), and a malformed $ACCEL_FAULT
 * injects nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "accel.h"

/* $ACCEL_FAULT is read once per process: each case runs in a child. */
static int child(const char *spec, int (*body)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("ACCEL_FAULT", spec, 1);
		_exit(body());
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static int matches(void)
{
	return !(accel_fault_hit("ffmpeg:cpu0", 3) == 1 && accel_fault_hit("ffmpeg:cpu0", 4) == 0 &&
		 accel_fault_hit("ffmpeg.cuda:gpu0", 11) == 1 && accel_fault_hit("ffmpeg.cuda:gpu0", 13) == 0 &&
		 accel_fault_hit("demo.fast:npu0", 0) == 1 && accel_fault_hit("demo:npu0", 0) == 0 &&
		 accel_fault_hit("ffmpegx:cpu0", 3) == 0 && accel_fault_hit("cpu", 3) == 0);
}

/* "ffmpeg@encode:5": the encode stage on frame 5, not the decode stage
 * nor a stream engine's unit 5; "ffmpeg:3" every stage. */
static int stages(void)
{
	return !(accel_fault_hit_stage("ffmpeg:cpu0", "encode", 5) == 1 &&
		 accel_fault_hit_stage("ffmpeg.vaapi:gpu0", "encode", 5) == 1 &&
		 accel_fault_hit_stage("ffmpeg:cpu0", "decode", 5) == 0 && accel_fault_hit("ffmpeg:cpu0", 5) == 0 &&
		 accel_fault_hit_stage("ffmpeg:cpu0", "decode", 3) == 1 &&
		 accel_fault_hit_stage("ffmpeg:cpu0", "encode", 3) == 1 && accel_fault_hit("ffmpeg:cpu0", 3) == 1);
}

static int malformed(void)
{
	return accel_fault_hit("ffmpeg:cpu0", 3) != 0;
}

static int unset(void)
{
	unsetenv("ACCEL_FAULT");
	return accel_fault_hit("ffmpeg:cpu0", 0) != 0 || accel_fault_hit("cpu", 0) != 0;
}

static void rules_match_engines(void **state)
{
	(void)state;
	assert_int_equal(child("ffmpeg:3,10-12;demo.fast:0", matches), 0);
	assert_int_equal(child("ffmpeg@encode:5;ffmpeg:3", stages), 0);
}

static void malformed_injects_nothing(void **state)
{
	(void)state;
	assert_int_equal(child("ffmpeg:3,,4", malformed), 0);
	assert_int_equal(child("", unset), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rules_match_engines),
		cmocka_unit_test(malformed_injects_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
