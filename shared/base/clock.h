/* clock.h -- the project's two clocks.
 *
 * clock_wall_ms(): milliseconds since the epoch, the unit of every stored
 * timestamp (SQLite columns, Redis scores).  clock_mono_ms() and
 * clock_mono_us(): the monotonic clock, for timeouts, intervals and
 * latencies; it never jumps when the wall clock is set.  Nothing else in
 * tally reads a clock (log.c's line stamps excepted: they are for people).
 */
#ifndef TALLY_CLOCK_H
#define TALLY_CLOCK_H

long long	clock_wall_ms(void);
long long	clock_mono_ms(void);
long long	clock_mono_us(void);

#endif
