/* rnd.c -- random numbers; see rnd.h. */
#include <stdint.h>

#include <sodium.h>

#include "base/rnd.h"

long long
rnd_below(long long n)
{
	uint64_t v, lim;

	if (n <= 0)
		return 0;
	if (n <= (long long)UINT32_MAX)
		return (long long)randombytes_uniform((uint32_t)n);
	/* rejection sampling: no modulo bias */
	lim = UINT64_MAX - UINT64_MAX % (uint64_t)n;
	do
		randombytes_buf(&v, sizeof(v));
	while (v >= lim);
	return (long long)(v % (uint64_t)n);
}
