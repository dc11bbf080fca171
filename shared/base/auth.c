/* auth.c -- password hashing and tokens; see auth.h. */
#include <string.h>

#include <sodium.h>

#include "base/auth.h"
#include "base/log.h"

int
auth_init(void)
{
	if (sodium_init() < 0) {
		log_err("sodium_init failed");
		return -1;
	}
	return 0;
}

int
auth_hash(const char *pw, size_t len, int min_cost, char out[AUTH_HASH_MAX])
{
	unsigned long long ops = min_cost ? crypto_pwhash_OPSLIMIT_MIN :
	    crypto_pwhash_OPSLIMIT_INTERACTIVE;
	size_t mem = min_cost ? crypto_pwhash_MEMLIMIT_MIN :
	    crypto_pwhash_MEMLIMIT_INTERACTIVE;
	char tmp[crypto_pwhash_STRBYTES];

	_Static_assert(crypto_pwhash_STRBYTES <= AUTH_HASH_MAX, "hash size");
	if (crypto_pwhash_str_alg(tmp, pw, len, ops, mem,
	    crypto_pwhash_ALG_ARGON2ID13) != 0) {
		log_err("crypto_pwhash_str: out of memory");
		return -1;
	}
	memcpy(out, tmp, sizeof(tmp));
	return 0;
}

int
auth_verify(const char *hash, const char *pw, size_t len)
{
	/* For unknown logins: a real hash at interactive cost, made once per
	 * process, so a miss costs what a wrong password costs. */
	static char dummy[AUTH_HASH_MAX];

	if (hash == NULL) {
		if (dummy[0] == '\0' &&
		    auth_hash("not a password", 14, 0, dummy) == -1)
			return -1;
		if (crypto_pwhash_str_verify(dummy, pw, len) == 0)
			return -1;	/* cannot happen; keeps the call */
		return -1;
	}
	return crypto_pwhash_str_verify(hash, pw, len) == 0 ? 0 : -1;
}

void
auth_token_new(char out[TOKEN_LEN + 1])
{
	unsigned char raw[32];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(out, TOKEN_LEN + 1, raw, sizeof(raw),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
}

void
auth_token_hash(const char *tok, unsigned char out[TOKEN_HASH_LEN])
{
	crypto_generichash(out, TOKEN_HASH_LEN, (const unsigned char *)tok,
	    strlen(tok), NULL, 0);
}

int
auth_token_equal(const char *a, const char *b)
{
	size_t la, lb;

	if (a == NULL || b == NULL)
		return 0;
	la = strlen(a);
	lb = strlen(b);
	if (la == 0 || la != lb)
		return 0;
	return sodium_memcmp(a, b, la) == 0;
}
