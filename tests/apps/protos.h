/*
 * Fabric protocol numbers of the test and bench apps, in the range the
 * fabric keeps for apps (net/fabric/fabric.h: FP_APP_FIRST..).
 */
#ifndef TESTS_APPS_PROTOS_H
#define TESTS_APPS_PROTOS_H

enum {
	APP_PROTO_TEST = 16,		/* fabric-stress, fabric-junk, peer-timeout, rejoin, ... */
	APP_PROTO_PING = 17,		/* pingpong (raw and reliable) */
	APP_PROTO_STAGES = 18,		/* stages (raw) */
	APP_PROTO_OPS = 19,		/* tests/bench/ops.c: the raw and reliable operations */
};

#endif
