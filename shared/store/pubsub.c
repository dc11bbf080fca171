/* pubsub.c -- publishing to nchan over a unix socket; see pubsub.h. */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "base/log.h"
#include "store/pubsub.h"

/* nchan answers with a few lines about the channel: not needed. */
static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
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

/* One request: method on /pub/<channel>, with body when not NULL. */
static int
request(struct pubsub *ps, const char *method, const char *channel,
    const char *body, size_t len)
{
	char url[160];
	long status = 0;
	CURLcode rc;
	CURL *h = ps->h;

	if (h == NULL)
		return -1;
	snprintf(url, sizeof(url), "http://localhost/pub/%s", channel);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, ps->sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)PUBSUB_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)PUBSUB_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
	}
	rc = curl_easy_perform(h);
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
	return request(ps, "POST", channel, data, len);
}

int
pubsub_drop(struct pubsub *ps, const char *channel)
{
	return request(ps, "DELETE", channel, NULL, 0);
}
