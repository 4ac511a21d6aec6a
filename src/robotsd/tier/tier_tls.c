/*
 * tier_tls.c: TLS to Redis (see tier_tls.h). robotsd makes its own OpenSSL
 * context and sessions and hands each session to hiredis
 * (redisInitiateSSL), rather than hiredis_ssl's context helper, because
 * hiredis checks the certificate's chain but not its name.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "tier/tier_tls.h"

#ifdef HAVE_REDIS_TLS

#include <arpa/inet.h>

#include <hiredis/hiredis.h>
#include <hiredis/hiredis_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct tier_tls {
	SSL_CTX *ctx;
	char *server_name; /* NULL: each URL's host */
};

/* The last OpenSSL error as text, for a message about file. */
static void
tls_cause(char **cause, const char *what, const char *file)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

	xasprintf(cause, "%s: %s: %s", what, file,
	    r != NULL ? r : "cannot be loaded");
	ERR_clear_error();
}

/* The CA store and the client certificate into ctx. */
static int
tls_load(SSL_CTX *ctx, const struct tier_tls_config *cf, char **cause)
{
	if (cf->ca_file != NULL) {
		if (SSL_CTX_load_verify_locations(ctx, cf->ca_file, NULL) !=
		    1) {
			tls_cause(cause, "redis-tls-ca-file", cf->ca_file);
			return -1;
		}
	} else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
		tls_cause(cause, "redis TLS", "the system's CA store");
		return -1;
	}
	if (cf->cert_file == NULL)
		return 0;
	if (SSL_CTX_use_certificate_chain_file(ctx, cf->cert_file) != 1) {
		tls_cause(cause, "redis-tls-cert-file", cf->cert_file);
		return -1;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, cf->key_file, SSL_FILETYPE_PEM) !=
	        1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		tls_cause(cause, "redis-tls-key-file", cf->key_file);
		return -1;
	}
	return 0;
}

struct tier_tls *
tier_tls_new(const struct tier_tls_config *cf, char **cause)
{
	struct tier_tls *tls;
	SSL_CTX *ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		tls_cause(cause, "redis TLS", "a new context");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (tls_load(ctx, cf, cause) == -1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	tls = xcalloc(1, sizeof(*tls));
	tls->ctx = ctx;
	if (cf->server_name != NULL)
		tls->server_name = xstrdup(cf->server_name);
	return tls;
}

void
tier_tls_free(struct tier_tls *tls)
{
	if (tls == NULL)
		return;
	SSL_CTX_free(tls->ctx);
	free(tls->server_name);
	free(tls);
}

/* The name the certificate must carry, checked; SNI for a host name. */
static int
tls_expect(SSL *ssl, const char *name)
{
	unsigned char addr[16];
	int is_ip = inet_pton(AF_INET, name, addr) == 1 ||
	            inet_pton(AF_INET6, name, addr) == 1;

	if (is_ip)
		return X509_VERIFY_PARAM_set1_ip_asc(
		           SSL_get0_param(ssl), name) == 1
		           ? 0
		           : -1;
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return SSL_set_tlsext_host_name(ssl, name) == 1 &&
	               SSL_set1_host(ssl, name) == 1
	           ? 0
	           : -1;
}

/*
 * A handshake that ended inside redisInitiateSSL() (the server's answer
 * was there before SSL_connect() returned, as a quick local server's can
 * be): its reason, while the session still holds it, in place of
 * hiredis's "SSL_connect failed: certificate verify failed", so the log
 * says what a handshake that ends later says.
 */
static void
tls_failed_at_once(struct redisContext *c, SSL *ssl)
{
	char why[sizeof(c->errstr)];

	if (tier_tls_why(ssl, why, sizeof(why)) != NULL)
		snprintf(c->errstr, sizeof(c->errstr), "%s", why);
}

int
tier_tls_start(struct tier_tls *tls, struct redisContext *c, const char *host,
    void **session)
{
	const char *name = tls->server_name != NULL ? tls->server_name : host;
	SSL *ssl;

	*session = NULL;
	ERR_clear_error();
	if ((ssl = SSL_new(tls->ctx)) == NULL || tls_expect(ssl, name) == -1) {
		SSL_free(ssl);
		return -1;
	}
	if (redisInitiateSSL(c, ssl) != REDIS_OK) {
		tls_failed_at_once(c, ssl);
		SSL_free(ssl); /* not taken: hiredis frees it only once it is */
		return -1;
	}
	*session = ssl;
	return 0;
}

const char *
tier_tls_why(void *session, char *buf, size_t size)
{
	SSL *ssl = session;
	unsigned long e = ERR_get_error();
	long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	const char *r;

	ERR_clear_error();
	if (ssl != NULL && v != X509_V_OK) {
		snprintf(buf, size, "TLS: the server's certificate: %s",
		    X509_verify_cert_error_string(v));
		return buf;
	}
	if (e == 0 || (r = ERR_reason_error_string(e)) == NULL)
		return NULL;
	snprintf(buf, size, "TLS: %s", r);
	return buf;
}

int
tier_tls_established(void *session)
{
	return session != NULL && SSL_is_init_finished((SSL *)session);
}

#else /* no TLS in this build: conf.c refuses rediss:// first */

struct tier_tls *
tier_tls_new(const struct tier_tls_config *cf, char **cause)
{
	(void)cf;
	xasprintf(cause, "this robotsd was built without TLS to Redis");
	return NULL;
}

void
tier_tls_free(struct tier_tls *tls)
{
	(void)tls;
}

int
tier_tls_start(struct tier_tls *tls, struct redisContext *c, const char *host,
    void **session)
{
	(void)tls, (void)c, (void)host;
	*session = NULL;
	return -1;
}

const char *
tier_tls_why(void *session, char *buf, size_t size)
{
	(void)session, (void)buf, (void)size;
	return NULL;
}

int
tier_tls_established(void *session)
{
	(void)session;
	return 0;
}

#endif
