/* auth.h -- passwords and tokens, all through libsodium.
 *
 * Passwords: argon2id (crypto_pwhash_str) at the interactive cost, or the
 * minimum cost when the caller asks (tests and bulk seeding only).
 * Tokens (session ids, CSRF tokens): 32 bytes from randombytes_buf
 * (getrandom underneath), base64url without padding: 43 characters.
 * Only a BLAKE2b hash of a session id is ever stored.
 */
#ifndef TALLY_AUTH_H
#define TALLY_AUTH_H

#include <stddef.h>

#define AUTH_HASH_MAX	128	/* >= crypto_pwhash_STRBYTES */
#define TOKEN_LEN	43
#define TOKEN_HASH_LEN	32

/* sodium_init(); 0 or -1.  Call once before anything else here. */
int	auth_init(void);

/* Hashes pw[0..len) into out (NUL-terminated); 0, or -1 when out of memory. */
int	auth_hash(const char *pw, size_t len, int min_cost,
	    char out[AUTH_HASH_MAX]);

/* 0 when pw matches the stored hash, -1 otherwise.  With hash NULL it
 * still spends the time of one verification (no login enumeration). */
int	auth_verify(const char *hash, const char *pw, size_t len);

/* A fresh random token, NUL-terminated. */
void	auth_token_new(char out[TOKEN_LEN + 1]);

/* The stored form of a token. */
void	auth_token_hash(const char *tok, unsigned char out[TOKEN_HASH_LEN]);

/* Constant-time comparison; 1 when equal and of the same length, non-empty. */
int	auth_token_equal(const char *a, const char *b);

#endif
