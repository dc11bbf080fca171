/* rcmd.h -- one command in the Redis protocol's form (RESP: an array of
 * bulk strings), written by the caller into its own buffer.
 *
 * hiredis formats a queued command through its string library: a
 * format-string parse for each argument's header, two allocations and a
 * free a command.  A badge poll queues four, a like's group a script of
 * a hundred arguments; writing the same bytes into a buffer on the
 * caller's stack and handing them to redisAppendFormattedCommand() took
 * that part of a poll from ~9 % of tally-notify's time to ~2 %
 * (docs/BENCHMARKS.md, "A command's bytes, written once").  The bytes
 * are hiredis's own, byte for byte (tests/unit/test-rcmd.c compares).
 */
#ifndef TALLY_RCMD_H
#define TALLY_RCMD_H

#include <stddef.h>

/* Writes the command into out (NULL: nowhere) when it fits in cap
 * bytes.  Returns its length either way: a caller whose buffer was
 * short allocates that many bytes and calls again.  lens NULL: the
 * arguments are C strings. */
size_t	rcmd_format(char *out, size_t cap, int argc, const char **argv,
	    const size_t *lens);
/* The command in a buffer of its own (the caller free()s it), its length
 * in *len. */
char	*rcmd_alloc(int argc, const char **argv, const size_t *lens,
	    size_t *len);

#endif
