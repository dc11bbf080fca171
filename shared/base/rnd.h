/* rnd.h -- random numbers for sampling (the drift check's keys, cache
 * jitter): libsodium's generator, seeded by the kernel, so every process
 * (forked children included) draws its own sequence.  Needs auth_init()
 * (sodium_init) first, as every program does in app_open().
 */
#ifndef TALLY_RND_H
#define TALLY_RND_H

/* Uniform in [0, n); 0 when n <= 0. */
long long	rnd_below(long long n);

#endif
