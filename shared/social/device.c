/* device.c -- the signed device cookie; see device.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/log.h"
#include "social/device.h"

#define NONCE_BYTES	16
#define MAC_BYTES	16
#define STAMP_MAX	256	/* a password's stored hash, and its NUL */

/* The site's key, read once a process (process state). */
static unsigned char key[crypto_auth_KEYBYTES];
static int have_key;

static int
read_key(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd == -1)
		return -1;
	n = read(fd, key, sizeof(key));
	close(fd);
	return n == (ssize_t)sizeof(key) ? 0 : -2;
}

/* The key: read, or made by this process if no one made it yet. */
static int
load_key(const struct cfg *c)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	unsigned char fresh[sizeof(key)];
	int fd, rc;

	if (have_key)
		return 0;
	if (cfg_path(c, "device-key", path, sizeof(path)) == -1)
		return -1;
	if ((rc = read_key(path)) == -1 && errno == ENOENT) {
		/* written whole under another name, then linked: a reader
		 * never sees half a key, and one maker wins */
		snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
		randombytes_buf(fresh, sizeof(fresh));
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd != -1) {
			if (write(fd, fresh, sizeof(fresh)) !=
			    (ssize_t)sizeof(fresh) || fsync(fd) == -1) {
				close(fd);
				unlink(tmp);
				fd = -1;
			} else
				close(fd);
		}
		if (fd != -1 && link(tmp, path) == -1 && errno != EEXIST)
			log_warn("device key %s: %s", path, strerror(errno));
		unlink(tmp);
		rc = read_key(path);
	}
	if (rc != 0) {
		log_err("device key %s: unreadable", path);
		return -1;
	}
	have_key = 1;
	return 0;
}

static void
hex(const unsigned char *v, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[v[i] >> 4];
		out[2 * i + 1] = digits[v[i] & 15];
	}
	out[2 * n] = '\0';
}

/* "<login>.<nonce hex>.<mac hex>" for login with nonce, under the
 * account's stamp, into out. */
static void
entry(const char *login, const char *nonce_hex, const char *stamp,
    char out[DEVICE_ENTRY + 1])
{
	unsigned char mac[crypto_auth_BYTES];
	char signed_[DEVICE_ENTRY + 1 + STAMP_MAX];
	size_t l = strlen(login), m = strlen(nonce_hex), t = strlen(stamp);

	out[0] = '\0';
	if (l > 32 || m != 2 * NONCE_BYTES || t >= STAMP_MAX)
		return;
	/* login.nonce, then the stamp after a newline, signed; the entry
	 * is login.nonce.mac */
	memcpy(out, login, l);
	out[l] = '.';
	memcpy(out + l + 1, nonce_hex, m);
	memcpy(signed_, out, l + 1 + m);
	signed_[l + 1 + m] = '\n';
	memcpy(signed_ + l + 2 + m, stamp, t);
	crypto_auth(mac, (const unsigned char *)signed_, l + 2 + m + t, key);
	out[l + 1 + m] = '.';
	hex(mac, MAC_BYTES, out + l + 2 + m);
}

/* Whether e (n bytes) is an entry, and for which login (into login_out,
 * at most 32 bytes): well formed, and with stamp (not NULL) signed for
 * that login under it. */
static int
valid_entry(const char *e, size_t n, const char *stamp, char login_out[33])
{
	char copy[DEVICE_ENTRY + 1], want[DEVICE_ENTRY + 1], *d1, *d2;

	if (n == 0 || n > DEVICE_ENTRY)
		return 0;
	memcpy(copy, e, n);
	copy[n] = '\0';
	if ((d2 = strrchr(copy, '.')) == NULL || d2 == copy)
		return 0;
	*d2 = '\0';
	if ((d1 = strrchr(copy, '.')) == NULL || d1 == copy ||
	    (size_t)(d1 - copy) > 32 || strlen(d1 + 1) != 2 * NONCE_BYTES ||
	    strlen(d2 + 1) != 2 * MAC_BYTES)
		return 0;
	*d1 = '\0';
	if (stamp != NULL) {
		entry(copy, d1 + 1, stamp, want);
		/* compared in constant time: a mac is never guessed byte by
		 * byte */
		if (strlen(want) != n || sodium_memcmp(want, e, n) != 0)
			return 0;
	}
	memcpy(login_out, copy, (size_t)(d1 - copy) + 1);	/* <= 32 + NUL */
	return 1;
}

int
device_knows(const struct cfg *c, const char *cookie, const char *login,
    const char *stamp)
{
	const char *p, *q;
	char who[33];

	if (cookie == NULL || stamp == NULL || *stamp == '\0' ||
	    load_key(c) == -1)
		return 0;
	for (p = cookie; *p != '\0'; p = *q ? q + 1 : q) {
		if ((q = strchr(p, ':')) == NULL)
			q = p + strlen(p);
		if (valid_entry(p, (size_t)(q - p), stamp, who) &&
		    strcmp(who, login) == 0)
			return 1;
	}
	return 0;
}

int
device_issue(const struct cfg *c, const char *login, const char *stamp,
    const char *old, char out[DEVICE_VALUE_MAX + 1])
{
	unsigned char nonce[NONCE_BYTES];
	char nhex[2 * NONCE_BYTES + 1], e[DEVICE_ENTRY + 1], who[33];
	const char *p, *q;
	size_t len;
	int kept = 1;

	if (strlen(login) > 32 || stamp == NULL || *stamp == '\0' ||
	    strlen(stamp) >= STAMP_MAX || load_key(c) == -1)
		return -1;
	randombytes_buf(nonce, sizeof(nonce));
	hex(nonce, sizeof(nonce), nhex);
	entry(login, nhex, stamp, e);
	snprintf(out, DEVICE_VALUE_MAX + 1, "%s", e);
	len = strlen(out);
	/* the other accounts' entries after it (checked when used: their
	 * stamps are not known here); malformed ones and this account's
	 * old ones go */
	for (p = old; p != NULL && *p != '\0' && kept < DEVICE_KEEP;
	    p = *q ? q + 1 : q) {
		if ((q = strchr(p, ':')) == NULL)
			q = p + strlen(p);
		if (!valid_entry(p, (size_t)(q - p), NULL, who) ||
		    strcmp(who, login) == 0 ||
		    len + 1 + (size_t)(q - p) > DEVICE_VALUE_MAX)
			continue;
		out[len++] = ':';
		memcpy(out + len, p, (size_t)(q - p));
		len += (size_t)(q - p);
		out[len] = '\0';
		kept++;
	}
	return 0;
}
