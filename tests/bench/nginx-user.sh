#!/bin/sh
# nginx-user.sh DIR -- the "user" line of a second nginx beside a stack
# (stacks.sh hello_beside, run.sh): run as root, tally-run gives DIR, the
# run directory, to the stack's user and runs as it, so the handlers'
# sockets are that user's (0660) and an nginx of root's workers (nobody)
# reaches none.  Its workers are then that user too.  Prints nothing
# otherwise.
owner=$(stat -c %U "$1") || exit 1
if [ "$(id -u)" = 0 ] && [ "$owner" != root ]; then
	echo "user $owner $(stat -c %G "$1");"
fi
exit 0
