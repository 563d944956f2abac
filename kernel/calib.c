/*
 * The median of calibration windows (kernel/calib.h).
 */
#include "kernel/calib.h"

int calib_pick(const uint64_t *hz, const uint64_t *slack, int n, uint64_t slack_max,
	       uint64_t tolerance, struct calib *out)
{
	uint64_t v[CALIB_MAX_WINDOWS], t;
	int k = 0;

	if (n < 1 || n > CALIB_MAX_WINDOWS)
		return -1;
	for (int i = 0; i < n; i++)
		if (!slack || slack[i] <= slack_max)
			v[k++] = hz[i];
	if (k < (n + 1) / 2) {		/* the host held most of them up: take them all */
		k = 0;
		for (int i = 0; i < n; i++)
			v[k++] = hz[i];
	}
	for (int i = 1; i < k; i++)	/* insertion sort: a handful of values */
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	out->hz = v[k / 2];
	out->lo = v[0];
	out->hi = v[k - 1];
	out->kept = k;
	out->disagree = tolerance && out->hi - out->lo > out->hz / tolerance;
	return 0;
}
