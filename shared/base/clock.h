/* clock.h -- the project's two clocks.
 *
 * clock_wall_ms(): milliseconds since the epoch, the unit of every stored
 * timestamp (SQLite columns, Redis scores); clock_wall_us(), the same in
 * microseconds, where a number must grow past any taken before it
 * (a backlog row's first version).  clock_mono_ms() and
 * clock_mono_us(): the monotonic clock, for timeouts, intervals and
 * latencies; it never jumps when the wall clock is set.  Nothing else in
 * tally reads a clock (log.c's line stamps excepted: they are for people).
 */
#ifndef TALLY_CLOCK_H
#define TALLY_CLOCK_H

long long	clock_wall_ms(void);
long long	clock_wall_us(void);
long long	clock_mono_ms(void);
long long	clock_mono_us(void);

/* The age, within [max / 2, max], past which a copy written at `at` (ms)
 * is no longer trusted.  `at` itself picks where in that range, so every
 * process, on every host, agrees on it.  Copies made together (every
 * user signing in within a minute; every cache refilled at once after
 * Redis came back) then age out spread over half an age, not in one
 * wave of recomputes: at 10,000 users such a wave made a quarter of a
 * round's feeds recompute their badges (docs/BENCHMARKS.md).  The price:
 * a copy lives three quarters of max on average, so a reader who keeps
 * coming back renews it a third more often than a fixed max would. */
long long	clock_spread(long long max, long long at);

#endif
