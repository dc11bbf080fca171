/* rcl_slot.c -- which Redis Cluster slot a key and a command belong to;
 * see rcluster.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/rcluster.h"

int
rcl_keyslot(const char *key, size_t len)
{
	size_t i, s, e;
	unsigned crc = 0;
	int b;

	for (s = 0; s < len && key[s] != '{'; s++)
		;
	if (s < len) {
		for (e = s + 1; e < len && key[e] != '}'; e++)
			;
		if (e < len && e > s + 1) {
			key += s + 1;
			len = e - s - 1;
		}
	}
	for (i = 0; i < len; i++) {
		crc ^= (unsigned)(unsigned char)key[i] << 8;
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return (int)((crc & 0xffff) % RCL_SLOTS);
}

int
rcl_cmd_slotof(int argc, const char **argv, const size_t *lens)
{
	static const char *const keyless[] = { "PING", "SCRIPT", "SCAN",
	    "INFO", "CLUSTER", "TIME", "DBSIZE", "KEYS", "FLUSHALL",
	    "FLUSHDB", "ASKING", "READONLY", "AUTH", "CONFIG", NULL };
	size_t i;

	if (argc < 2)
		return -1;
	if (strcasecmp(argv[0], "EVAL") == 0 ||
	    strcasecmp(argv[0], "EVALSHA") == 0)
		return argc > 3 && strtol(argv[2], NULL, 10) > 0 ?
		    rcl_keyslot(argv[3], lens[3]) : -1;
	for (i = 0; keyless[i] != NULL; i++)
		if (strcasecmp(argv[0], keyless[i]) == 0)
			return -1;
	return rcl_keyslot(argv[1], lens[1]);
}

