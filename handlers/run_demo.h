/* run_demo.h -- the demo data of a first "make run" (DEMO, 1 by default).
 *
 * Seeded once a database (its setting demo_seeded), after Redis is up and
 * before any handler serves: the views are counted in Redis through the
 * view path (social/seed_views.h), so a page never shows the data without
 * them.
 */
#ifndef TALLY_RUN_DEMO_H
#define TALLY_RUN_DEMO_H

/* Seeds the demo unless DEMO=0 or it was seeded before, waiting up to
 * 10 s for Redis to answer (after which the demo has no views), then
 * posts its notices and lights the red dot.  Failing leaves the setting
 * unset (the next start tries again) and is logged; the stack runs on
 * either way. */
void	run_demo(void);

#endif
