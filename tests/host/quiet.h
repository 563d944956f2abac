/*
 * LLVMFuzzerInitialize for a target whose code under test prints on the
 * console: stdout goes to /dev/null unless FUZZ_VERBOSE is set, so the
 * fuzzer's own output stays readable.  A target that includes this
 * defines no LLVMFuzzerInitialize of its own.
 */
#ifndef TESTS_HOST_QUIET_H
#define TESTS_HOST_QUIET_H

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!getenv("FUZZ_VERBOSE"))
		(void)!freopen("/dev/null", "w", stdout);
	return 0;
}

#endif
