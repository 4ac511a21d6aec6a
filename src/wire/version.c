/*
 * version.c: version ids (version.h), SHA-256 through libcrypto's EVP.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "wire/version.h"

/* The first VERSION_HEX hex digits of SHA-256(p, len) into out. */
static void
version_hash(const void *p, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t i;

	if (EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen * 2 < VERSION_HEX) {
		out[0] = '\0'; /* no id rather than a wrong one */
		return;
	}
	for (i = 0; i < VERSION_HEX / 2; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[VERSION_HEX] = '\0';
}

/* See version.h. */
void
version_of_body(const char *body, size_t len, char *out)
{
	version_hash(len > 0 ? body : "", len, out);
}

/* See version.h. */
void
version_of_status(int status, char *out)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "status:%d", status);

	version_hash(t, (size_t)n, out);
}

/* See version.h. */
void
version_of_error_class(const char *cls, char *out)
{
	char t[64];
	int n = snprintf(t, sizeof(t), "error:%s", cls);

	version_hash(t, (size_t)n < sizeof(t) ? (size_t)n : sizeof(t) - 1, out);
}
