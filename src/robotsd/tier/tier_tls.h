/*
 * tier_tls.h: TLS to Redis for rediss:// URLs (with hiredis 1.x and its
 * hiredis_ssl): one OpenSSL context for the tier, one TLS session per
 * connection. The server's certificate is always verified, against the
 * CA file or the system's store, and so is its name (the URL's host or
 * --redis-tls-server-name; an IP address is matched as one): there is no
 * way to turn verification off, nor to fall back to plain text.
 */
#ifndef ROBOTSD_TIER_TLS_H
#define ROBOTSD_TIER_TLS_H

#include <stddef.h>

struct redisContext;

struct tier_tls_config {
	const char *ca_file;     /* NULL: the system's default store */
	const char *cert_file;   /* client certificate, or NULL */
	const char *key_file;    /* its private key; with cert_file only */
	const char *server_name; /* NULL: each URL's host */
};

struct tier_tls;

/*
 * The context, the files read now; NULL with *cause (malloc'd) when a
 * file does not load or the key does not match the certificate. In a
 * build without TLS: always NULL, saying so.
 */
struct tier_tls *tier_tls_new(const struct tier_tls_config *, char **cause);
void tier_tls_free(struct tier_tls *); /* NULL is fine */

/*
 * Begin TLS on c, just connected (or connecting) to host: 0, or -1 with
 * c's error set (to tier_tls_why()'s reason when TLS knows it: a
 * handshake can end at once, inside this call). *session is the TLS
 * session, owned by c from then on (freed with it); it is what
 * tier_tls_why() reads.
 */
int tier_tls_start(struct tier_tls *, struct redisContext *c, const char *host,
    void **session);

/*
 * Why the TLS session failed, if TLS knows (an untrusted or expired
 * certificate, a wrong name, a peer that does not speak TLS), written to
 * buf; NULL when it does not. Reads and clears the thread's OpenSSL
 * error queue.
 */
const char *tier_tls_why(void *session, char *buf, size_t size);

/* Whether the session's handshake is complete. */
int tier_tls_established(void *session);

#endif /* ROBOTSD_TIER_TLS_H */
