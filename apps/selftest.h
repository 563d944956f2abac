/*
 * In-kernel tests, run by the selftest app.  A test returns NULL on
 * success or a message saying what went wrong; CHECK() returns such a
 * message with the failed condition and its line.
 */
#ifndef APPS_SELFTEST_H
#define APPS_SELFTEST_H

struct selftest {
	const char *name;
	const char *(*fn)(void);
};

#define SELFTEST(sym)                                                             \
	static const char *sym(void);                                             \
	static const struct selftest selftest_##sym                               \
		__attribute__((used, section(".selftests"), aligned(8))) = { #sym, sym }; \
	static const char *sym(void)

#define ST_STR2(x) #x
#define ST_STR(x) ST_STR2(x)
#define CHECK(cond) \
	do { if (!(cond)) return "check failed: " #cond " (line " ST_STR(__LINE__) ")"; } while (0)

#endif
