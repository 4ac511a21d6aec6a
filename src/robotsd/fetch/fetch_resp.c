/*
 * fetch_resp.c: what a response leaves in a fetch: the policy headers of
 * the final hop, the body up to ROBOTS_MAX_BODY decoded bytes, and the
 * fetch_result that curl's outcome and those make.
 */
#include <config.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "robots.h"
#include "policy/bounds.h"
#include "fetch/fetch_int.h"

static const char *const fetch_hdr_names[HDR_COUNT] = {
	"cache-control",
	"expires",
	"age",
	"retry-after",
	"date",
	"etag",
	"last-modified",
};

/* Forget the headers and body of a previous response (redirect hop). */
void
fetch_reset_response(struct fetch *fe)
{
	size_t i;

	for (i = 0; i < HDR_COUNT; i++) {
		free(fe->hdr[i]);
		fe->hdr[i] = NULL;
	}
	buf_reset(&fe->body);
	buf_reset(&fe->raw);
	fe->truncated = 0;
}

/*
 * Keep a header line as received (the end of line made CRLF; the blank
 * line that ends the headers is not kept), up to the cap: what an archive
 * of the response needs. Memory is counted like the body's.
 */
static void
fetch_keep_raw(struct fetch *fe, const char *line, size_t len)
{
	size_t cap = fe->raw.cap;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (len == 0)
		return;
	if (fe->raw.max - fe->raw.len >= len + 2) {
		(void)buf_add_some(&fe->raw, line, len);
		(void)buf_add_some(&fe->raw, "\r\n", 2);
	}
	fe->held += fe->raw.cap - cap;
	atomic_fetch_add(&fe->fetcher->bytes, fe->raw.cap - cap);
}

/* CURLOPT_HEADERFUNCTION: keep the final response's policy headers. */
size_t
fetch_header_cb(char *buf, size_t size, size_t n, void *arg)
{
	struct fetch *fe = arg;
	size_t len = size * n, i, nlen;
	const char *colon, *v, *end = buf + len;

	if (len >= 5 && strncasecmp(buf, "HTTP/", 5) == 0) {
		fetch_reset_response(fe);
		fetch_keep_raw(fe, buf, len);
		return len;
	}
	if (fe->raw.len > 0) /* an HTTP response's (not FTP's replies) */
		fetch_keep_raw(fe, buf, len);
	if ((colon = memchr(buf, ':', len)) == NULL)
		return len;
	nlen = (size_t)(colon - buf);
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
	                      end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (i = 0; i < HDR_COUNT; i++) {
		if (strlen(fetch_hdr_names[i]) == nlen &&
		    strncasecmp(buf, fetch_hdr_names[i], nlen) == 0) {
			/* repeats join with ", " (Cache-Control) */
			if (bounds_header_join(
			        &fe->hdr[i], v, (size_t)(end - v)) == -1)
				fe->nomem = 1;
			break;
		}
	}
	return len;
}

/* CURLOPT_WRITEFUNCTION: keep decoded bytes up to the cap, then stop. */
size_t
fetch_write_cb(char *buf, size_t size, size_t n, void *arg)
{
	struct fetch *fe = arg;
	size_t len = size * n, cap, added;

	cap = fe->body.cap;
	added = buf_add_some(&fe->body, buf, len);
	fe->held += fe->body.cap - cap;
	atomic_fetch_add(&fe->fetcher->bytes, fe->body.cap - cap);
	if (added == len)
		return len;
	if (fe->body.state == BUF_NOMEM)
		fe->nomem = 1;
	else
		fe->truncated = 1;
	return 0; /* CURLE_WRITE_ERROR: the first 500 KiB are used */
}

/*
 * Map curl's result code to a fetch error. A redirect whose Location
 * cannot be followed (malformed, or another protocol) ends the chain like
 * too many redirects do.
 */
static enum fetch_error
fetch_classify(const struct fetch *fe, CURLcode rc, long code)
{
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && fe->truncated))
		return FETCH_OK;
	if (fe->private_refused)
		return FETCH_PRIVATE_ADDR;
	if (fe->local_errno != 0 || fe->nomem || rc == CURLE_OUT_OF_MEMORY)
		return FETCH_LOCAL;
	if (code >= 300 && code < 400 &&
	    (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL))
		return FETCH_REDIRECTS;
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return FETCH_TIMEOUT;
	case CURLE_TOO_MANY_REDIRECTS:
		return FETCH_REDIRECTS;
	default:
		return FETCH_NETWORK;
	}
}

/*
 * The cause a failed transfer's code names: a pure table (check_fetch.c
 * tests it). Codes of a local kind (memory, options) are CAUSE_OTHER.
 */
enum fetch_cause
fetch_cause_of_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_OK:
		return CAUSE_NONE;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return CAUSE_DNS;
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return CAUSE_CONNECT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_SHUTDOWN_FAILED:
	case CURLE_SSL_CLIENTCERT:
	case CURLE_USE_SSL_FAILED:
		return CAUSE_TLS;
	case CURLE_OPERATION_TIMEDOUT:
		return CAUSE_TIMEOUT;
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_BAD_CONTENT_ENCODING:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_FTP_WEIRD_PASS_REPLY:
	case CURLE_FTP_WEIRD_PASV_REPLY:
	case CURLE_FTP_WEIRD_227_FORMAT:
		return CAUSE_BAD_RESPONSE;
	default:
		return CAUSE_OTHER;
	}
}

/*
 * Keep what curl says of a transfer that ended, in the fetch: the easy
 * handle goes next, and main builds the result from this alone.
 */
void
fetch_fill_outcome(struct fetch *fe, CURLcode rc)
{
	long code = 0, redirs = 0;
	char *url = NULL, *scheme = NULL, *ip = NULL;
	curl_off_t us = 0;
	enum fetch_error error;

	curl_easy_getinfo(fe->easy, CURLINFO_RESPONSE_CODE, &code);
	error = fetch_classify(fe, rc, code);
	curl_easy_getinfo(fe->easy, CURLINFO_EFFECTIVE_URL, &url);
	curl_easy_getinfo(fe->easy, CURLINFO_REDIRECT_COUNT, &redirs);
	curl_easy_getinfo(fe->easy, CURLINFO_SCHEME, &scheme);
	if (scheme != NULL && strcasecmp(scheme, "ftp") == 0) {
		/* An FTP file is a 200; a missing one a 404. */
		code = error == FETCH_OK ? 200 : 0;
		if (rc == CURLE_REMOTE_FILE_NOT_FOUND ||
		    rc == CURLE_FTP_COULDNT_RETR_FILE) {
			error = FETCH_OK;
			code = 404;
		}
	}
	if (url != NULL && strcmp(url, fe->url) != 0 &&
	    (fe->final_url = strdup(url)) == NULL)
		fe->nomem = 1;
	if (fe->nomem && error == FETCH_OK)
		error = FETCH_LOCAL;
	fe->http_status = error == FETCH_NETWORK || error == FETCH_TIMEOUT ||
	                          error == FETCH_PRIVATE_ADDR ||
	                          error == FETCH_LOCAL
	                      ? 0
	                      : (int)code;
	if (error != FETCH_OK)
		fe->error_message = fe->nomem ? "out of memory"
		                    : fe->errbuf[0] != '\0'
		                        ? fe->errbuf
		                        : curl_easy_strerror(rc);
	if (error == FETCH_PRIVATE_ADDR)
		fe->error_message = "refused a non-public address";
	if (error == FETCH_LOCAL && fe->local_errno != 0) {
		snprintf(fe->errbuf, CURL_ERROR_SIZE,
		    "robotsd could not open a socket: %s",
		    strerror(fe->local_errno));
		fe->error_message = fe->errbuf;
	} else if (error == FETCH_LOCAL && !fe->nomem)
		fe->error_message = "robotsd ran out of memory";
	fe->error = (unsigned char)error;
	fe->cause =
	    (unsigned char)(fe->nomem ? CAUSE_OTHER : fetch_cause_of_curl(rc));
	fe->redirects = (unsigned)redirs;
	curl_easy_getinfo(fe->easy, CURLINFO_TOTAL_TIME_T, &us);
	fe->seconds = (double)us / 1e6;
	if (curl_easy_getinfo(fe->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK &&
	    ip != NULL)
		snprintf(fe->ip, sizeof(fe->ip), "%s", ip);
}

/* The result handed to the callback: strings of the fetch's own. */
void
fetch_result_of(const struct fetch *fe, struct fetch_result *r)
{
	memset(r, 0, sizeof(*r));
	r->error = (enum fetch_error)fe->error;
	r->error_message = fe->error_message;
	r->cause = fe->cause;
	r->http_status = fe->http_status;
	r->body = fe->body.p != NULL ? fe->body.p : "";
	r->body_len = fe->body.len;
	r->truncated = fe->truncated;
	r->final_url = fe->final_url != NULL ? fe->final_url : fe->url;
	r->redirects = fe->redirects;
	r->seconds = fe->seconds;
	r->cache_control = fe->hdr[HDR_CACHE_CONTROL];
	r->expires = fe->hdr[HDR_EXPIRES];
	r->age = fe->hdr[HDR_AGE];
	r->retry_after = fe->hdr[HDR_RETRY_AFTER];
	r->date = fe->hdr[HDR_DATE];
	r->etag = fe->hdr[HDR_ETAG];
	r->last_modified = fe->hdr[HDR_LAST_MODIFIED];
	if (fe->raw.len > 0 && fe->error == FETCH_OK) {
		r->raw_headers = fe->raw.p;
		r->raw_headers_len = fe->raw.len;
	}
	r->ip = fe->ip[0] != '\0' ? fe->ip : NULL;
}
