/* rcl_slot.c -- which Redis Cluster slot a key and a command belong to;
 * see rcl.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/rcl.h"

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


int
rcl_addr_valid(const char *addr)
{
	const char *colon = strrchr(addr, ':'), *p;
	long port = 0;

	if (colon == NULL || colon == addr || colon - addr > 253 ||
	    colon[1] == '\0' || strlen(colon + 1) > 5)
		return 0;
	for (p = addr; p < colon; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
			return 0;
	for (p = colon + 1; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		port = port * 10 + (*p - '0');
	}
	return port >= 1 && port <= 65535;
}

int
rcl_redirect_parse(const char *err, int *slot, char *addr, size_t sz)
{
	const char *p, *sp;
	char *end;
	long s;
	int kind;

	if (strncmp(err, "MOVED ", 6) == 0)
		kind = 'M';
	else if (strncmp(err, "ASK ", 4) == 0)
		kind = 'A';
	else
		return 0;
	p = strchr(err, ' ') + 1;
	if (*p < '0' || *p > '9')
		return 0;
	s = strtol(p, &end, 10);
	if (*end != ' ' || s < 0 || s >= RCL_SLOTS)
		return 0;
	sp = end + 1;
	if (strlen(sp) >= sz || !rcl_addr_valid(sp))
		return 0;
	memcpy(addr, sp, strlen(sp) + 1);
	*slot = (int)s;
	return kind;
}
