/* pubsub.c -- publishing to nchan over a unix socket; see pubsub.h. */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "base/log.h"
#include "store/pubsub.h"

/* nchan's answer about the channel (asked as JSON): its first bytes. */
struct answer {
	char	b[512];
	size_t	n;
};

static size_t
keep(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n, room = sizeof(a->b) - 1 - a->n;

	memcpy(a->b + a->n, p, len < room ? len : room);
	a->n += len < room ? len : room;
	a->b[a->n] = '\0';
	return len;
}

/* The channel's subscribers as a publish's answer says them; 1 when it
 * does not say (a publish that went through reached someone, as far as
 * the caller can tell). */
static int
subscribers(const struct answer *a)
{
	json_t *root = json_loadb(a->b, a->n, 0, NULL), *v;
	int n = 1;

	if (root != NULL && (v = json_object_get(root, "subscribers")) !=
	    NULL && json_is_integer(v) && json_integer_value(v) >= 0)
		n = json_integer_value(v) > 1000000 ? 1000000 :
		    (int)json_integer_value(v);
	json_decref(root);
	return n;
}

int
pubsub_open(struct pubsub *ps, const char *path)
{
	static int inited;

	memset(ps, 0, sizeof(*ps));
	if (strlen(path) >= sizeof(ps->sock)) {
		log_err("pubsub: socket path too long: %s", path);
		return -1;
	}
	if (!inited && curl_global_init(CURL_GLOBAL_NOTHING) != 0) {
		log_err("pubsub: curl_global_init failed");
		return -1;
	}
	inited = 1;
	snprintf(ps->sock, sizeof(ps->sock), "%s", path);
	if ((ps->h = curl_easy_init()) == NULL) {
		log_err("pubsub: curl_easy_init failed");
		return -1;
	}
	return 0;
}

void
pubsub_close(struct pubsub *ps)
{
	if (ps->h != NULL)
		curl_easy_cleanup(ps->h);
	ps->h = NULL;
}

/* One request: method on /pub/<channel>, with body when not NULL; its
 * answer into *a.  0 or -1. */
static int
request(struct pubsub *ps, const char *method, const char *channel,
    const char *body, size_t len, struct answer *a)
{
	char url[160];
	long status = 0;
	CURLcode rc;
	CURL *h = ps->h;
	struct curl_slist *hdr;

	a->n = 0;
	a->b[0] = '\0';
	if (h == NULL)
		return -1;
	snprintf(url, sizeof(url), "http://localhost/pub/%s", channel);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, ps->sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)PUBSUB_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)PUBSUB_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	hdr = curl_slist_append(NULL, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	if (body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
	}
	rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdr);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	/* a channel nobody had is already gone */
	if (rc == CURLE_OK && status == 404 && body == NULL)
		return 0;
	if (rc != CURLE_OK || status < 200 || status >= 300) {
		log_warn("pubsub: %s %s: %s", method, channel, rc != CURLE_OK ?
		    curl_easy_strerror(rc) : "refused");
		return -1;
	}
	return 0;
}

int
pubsub_publish(struct pubsub *ps, const char *channel, const char *data,
    size_t len)
{
	struct answer a;

	if (request(ps, "POST", channel, data, len, &a) == -1)
		return -1;
	return subscribers(&a);
}

int
pubsub_drop(struct pubsub *ps, const char *channel)
{
	struct answer a;

	return request(ps, "DELETE", channel, NULL, 0, &a);
}
