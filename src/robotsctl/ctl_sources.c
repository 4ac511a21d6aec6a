/*
 * ctl_sources.c: recheck's sources (ctl_recheck_int.h). Every response
 * record of the WARC files (--warc), or of robotsd's archive files oldest
 * first, is one capture of its target URL. A record robotsd wrote names
 * its origin and version (WARC-Robotsd-Origin, WARC-Robotsd-Version) and
 * is a capture of that origin as it is. Any other record is judged as
 * robotsd judges a fetch: its status by librobots' status table, the
 * version id by the wire layer's (the body's for rules, after the 500 KiB
 * cut, else the status's); a 3xx with a Location is a redirect, followed
 * once every file is read to the capture of its target nearest in time,
 * at most five hops (RFC 9309 section 2.3.1.2; more is allow all, as
 * robotsd's "error:too_many_redirects"). A redirect whose target no
 * record captured gives no version (counted). A record robotsd wrote of
 * another resource (WARC-Robotsd-Resource: tdmrep) is passed over,
 * counted: its body holds no robots.txt rules. Each distinct version is
 * compiled once and shared by every capture of it, whatever the origin.
 */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "fnv.h"
#include "wire/buf.h"
#include "ctl_recheck_int.h"
#include "ctl_payload.h"
#include "ctl_warc.h"

#define RC_MAX_HOPS 5 /* RFC 9309 section 2.3.1.2 */
#define RC_ROBOTS_PATH "/robots.txt"

/* One capture of a URL before redirects are followed. */
struct rc_cap {
	double at;
	long ver;       /* a version's index, or -1: a redirect to location */
	char *location; /* the redirect target's key (origin + path) */
	unsigned seq;
};

struct rc_url {
	char *key; /* origin + match path */
	size_t origin_len;
	struct rc_cap *caps;
	size_t n, cap;
};

/*
 * The array p of *cap items of size bytes with room for item n: p, or p
 * moved to a larger block (*cap updated); NULL out of memory (p kept).
 */
static void *
room(void *p, size_t *cap, size_t n, size_t size)
{
	size_t ncap;

	if (n < *cap)
		return p;
	ncap = *cap < 8 ? 8 : *cap * 2;
	if ((p = realloc(p, ncap * size)) != NULL)
		*cap = ncap;
	return p;
}

/* The slot of key in m: its own, or the empty one it would take. */
static struct rc_slot *
map_slot(const struct rc_map *m, const char *key, size_t len, uint64_t h)
{
	size_t i = (size_t)h & (m->size - 1);

	while (m->slots[i].key != NULL &&
	       (m->slots[i].hash != h || m->slots[i].len != len ||
	           memcmp(m->slots[i].key, key, len) != 0))
		i = (i + 1) & (m->size - 1);
	return &m->slots[i];
}

/* 1 with *val when key is in m, else 0. */
static int
map_get(const struct rc_map *m, const char *key, size_t len, size_t *val)
{
	struct rc_slot *sl;

	if (m->size == 0)
		return 0;
	sl = map_slot(m, key, len, fnv1a64(FNV1A64_INIT, key, len));
	if (sl->key == NULL)
		return 0;
	*val = sl->val;
	return 1;
}

/* Double m's table (at least 64 slots); 0 or -1. */
static int
map_resize(struct rc_map *m)
{
	struct rc_map nm = { .size = m->size < 64 ? 64 : m->size * 2 };
	size_t i;

	if ((nm.slots = calloc(nm.size, sizeof(*nm.slots))) == NULL)
		return -1;
	for (i = 0; i < m->size; i++)
		if (m->slots[i].key != NULL)
			*map_slot(&nm, m->slots[i].key, m->slots[i].len,
			    m->slots[i].hash) = m->slots[i];
	nm.n = m->n;
	free(m->slots);
	*m = nm;
	return 0;
}

/* Add key (not in m; the caller keeps it alive) with val; 0 or -1. */
static int
map_put(struct rc_map *m, const char *key, size_t len, size_t val)
{
	uint64_t h = fnv1a64(FNV1A64_INIT, key, len);
	struct rc_slot *sl;

	if ((m->n + 1) * 2 > m->size && map_resize(m) == -1)
		return -1;
	sl = map_slot(m, key, len, h);
	*sl = (struct rc_slot){ key, len, val, h };
	m->n++;
	return 0;
}

/*
 * The index of version id (state; body for rules), compiled the first
 * time it is seen; -1 out of memory.
 */
static long
version_get(struct rc_sources *s, const char *id, enum rc_state state,
    const char *body, size_t len)
{
	struct rc_version *v;
	size_t i;

	if (map_get(&s->vmap, id, VERSION_HEX, &i))
		return (long)i;
	if ((v = room(s->vers, &s->capvers, s->nvers, sizeof(*v))) == NULL)
		return -1;
	s->vers = v;
	v = &s->vers[s->nvers];
	memcpy(v->id, id, VERSION_HEX + 1);
	v->state = state;
	v->r = NULL;
	if (state == RC_RULES &&
	    (v->r = robots_parse(body != NULL ? body : "", len)) == NULL)
		return -1;
	if (map_put(&s->vmap, v->id, VERSION_HEX, s->nvers) == -1) {
		robots_unref(v->r);
		return -1;
	}
	return (long)s->nvers++;
}

/* The index of the origin named (len bytes), added if new; -1 no memory. */
static long
origin_get(struct rc_sources *s, const char *name, size_t len)
{
	struct rc_origin *o;
	size_t i;

	if (map_get(&s->omap, name, len, &i))
		return (long)i;
	o = room(s->origins, &s->caporigins, s->norigins, sizeof(*o));
	if (o == NULL)
		return -1;
	s->origins = o;
	o = &s->origins[s->norigins];
	memset(o, 0, sizeof(*o));
	if ((o->name = strndup(name, len)) == NULL ||
	    map_put(&s->omap, o->name, len, s->norigins) == -1) {
		free(o->name);
		return -1;
	}
	return (long)s->norigins++;
}

/* A capture of version ver at at for the origin named; 0 or -1. */
static int
origin_add(
    struct rc_sources *s, const char *name, size_t len, double at, long ver)
{
	long oi = origin_get(s, name, len);
	struct ctl_capture *caps;
	struct rc_origin *o;

	if (oi < 0)
		return -1;
	o = &s->origins[oi];
	if ((caps = room(o->caps, &o->cap, o->n, sizeof(*caps))) == NULL)
		return -1;
	o->caps = caps;
	o->caps[o->n++] = (struct ctl_capture){ at, (unsigned)ver, s->seq++ };
	return 0;
}

/* A capture of URL key (its origin origin_len bytes); 0 or -1. */
static int
url_add(
    struct rc_sources *s, const char *key, size_t origin_len, struct rc_cap c)
{
	struct rc_cap *caps;
	struct rc_url *u;
	size_t i, len = strlen(key);

	if (!map_get(&s->umap, key, len, &i)) {
		if ((u = room(s->urls, &s->capurls, s->nurls, sizeof(*u))) ==
		    NULL)
			return -1;
		s->urls = u;
		u = &s->urls[s->nurls];
		memset(u, 0, sizeof(*u));
		u->origin_len = origin_len;
		if ((u->key = strdup(key)) == NULL ||
		    map_put(&s->umap, u->key, len, s->nurls) == -1) {
			free(u->key);
			return -1;
		}
		i = s->nurls++;
	}
	u = &s->urls[i];
	if ((caps = room(u->caps, &u->cap, u->n, sizeof(*caps))) == NULL)
		return -1;
	u->caps = caps;
	c.seq = s->seq++;
	u->caps[u->n++] = c;
	return 0;
}

/* An HTTP response as a WARC response record's block holds it. */
struct rc_http {
	int status;
	const char *location; /* the Location header's value, or NULL */
	size_t location_len;
	const char *body;
	size_t body_len;
	struct ctl_payload pl; /* how the body was sent */
	int undecodable;       /* the body could not be decoded */
};

/* The header line at p (len bytes, no line end) if it is Location. */
static void
http_header(const char *p, size_t len, struct rc_http *h)
{
	ctl_payload_header(p, len, &h->pl);
	if (len < 9 || strncasecmp(p, "Location:", 9) != 0)
		return;
	p += 9;
	len -= 9;
	while (len > 0 && (*p == ' ' || *p == '\t'))
		p++, len--;
	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	h->location = p;
	h->location_len = len;
}

/* Parse the status line, headers and body of a block; 0 or -1. */
static int
http_parse(const char *p, size_t len, struct rc_http *h)
{
	const char *end = p + len, *nl = NULL, *sp;
	size_t n;

	memset(h, 0, sizeof(*h));
	if (len < 12 || memcmp(p, "HTTP/", 5) != 0 ||
	    (sp = memchr(p, ' ', len)) == NULL || end - sp < 4 || sp[1] < '1' ||
	    sp[1] > '5' || sp[2] < '0' || sp[2] > '9' || sp[3] < '0' ||
	    sp[3] > '9')
		return -1;
	h->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
	for (p = sp; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return -1; /* no end of the headers */
		n = (size_t)(nl - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0 && p != sp)
			break;
		http_header(p, n, h);
	}
	if (nl == NULL)
		return -1;
	h->body = nl + 1;
	h->body_len = (size_t)(end - h->body);
	return 0;
}

/* The version of a state without rules: allow all or disallow all. */
static enum rc_state
status_state(int status)
{
	switch (robots_status_class(1, 0, status)) {
	case ROBOTS_STATUS_RULES:
		return RC_RULES;
	case ROBOTS_STATUS_ALLOW_ALL:
		return RC_ALLOW_ALL;
	case ROBOTS_STATUS_FAILED:
	case ROBOTS_STATUS_FAILED_SOON:
		break;
	}
	return RC_DISALLOW_ALL;
}

/* The version of an HTTP answer (id given: robotsd's); -1 no memory. */
static long
http_version(struct rc_sources *s, const struct rc_http *h, const char *id)
{
	enum rc_state st = status_state(h->status);
	size_t len = h->body_len;
	char own[VERSION_HEX + 1];

	if (len > ROBOTS_MAX_BODY)
		len = ROBOTS_MAX_BODY; /* robotsd's cut */
	if (id == NULL && st == RC_RULES && h->undecodable) {
		st = RC_DISALLOW_ALL; /* robotsd: a network error */
		version_of_error_class("network", own);
	} else if (id == NULL && st == RC_RULES)
		version_of_body(h->body, len, own);
	else if (id == NULL)
		version_of_status(h->status, own);
	return version_get(s, id != NULL ? id : own, st, h->body, len);
}

/*
 * The key of URL url (len bytes): its origin and match path, allocated;
 * *origin_len the origin's part. NULL when it is no http(s) URL.
 */
static char *
url_key(const char *url, size_t len, size_t *origin_len)
{
	struct url u;
	char *key;
	size_t olen;

	if (robots_url_parse(url, len, &u) != URL_OK)
		return NULL;
	olen = strlen(u.origin);
	if ((key = malloc(olen + u.path_len + 1)) != NULL) {
		memcpy(key, u.origin, olen);
		memcpy(key + olen, u.path, u.path_len + 1);
		*origin_len = olen;
	}
	robots_url_clear(&u);
	return key;
}

/* 1 when loc starts with a URI scheme and ':' (RFC 3986 section 3.1). */
static int
has_scheme(const char *loc, size_t len)
{
	size_t i = 0;

	while (i < len && (isalnum((unsigned char)loc[i]) || loc[i] == '+' ||
	                      loc[i] == '-' || loc[i] == '.'))
		i++;
	return i > 0 && i < len && loc[i] == ':' &&
	       isalpha((unsigned char)loc[0]);
}

/*
 * The key of a redirect's target: loc resolved against the URL whose key
 * is base (its origin olen bytes): absolute, scheme-relative ("//h/p"),
 * absolute-path or relative to "/". NULL when it is none.
 */
static char *
location_key(const char *base, size_t olen, const char *loc, size_t len)
{
	struct buf b = BUF_INIT(CTL_MAX_BLOCK);
	const char *colon = memchr(base, ':', olen);
	size_t unused;
	char *key = NULL;

	if (len >= 2 && loc[0] == '/' && loc[1] == '/')
		buf_add(&b, base, (size_t)(colon + 1 - base));
	else if (!has_scheme(loc, len)) {
		buf_add(&b, base, olen);
		if (len == 0 || loc[0] != '/')
			buf_lit(&b, "/");
	}
	buf_add(&b, loc, len);
	if (b.state == BUF_OK)
		key = url_key(b.p, b.len, &unused);
	buf_clear(&b);
	return key;
}

/* A response record robotsd wrote: a capture of its origin; 0 or -1. */
static int
load_own(struct rc_sources *s, const struct ctl_warc_rec *r,
    const struct rc_http *h, double at)
{
	long ver = http_version(s, h, r->version);

	if (ver < 0)
		return -1;
	return origin_add(s, r->origin, strlen(r->origin), at, ver);
}

/* Any other tool's response record: a capture of its target; 0 or -1. */
static int
load_other(struct rc_sources *s, const struct ctl_warc_rec *r,
    const struct rc_http *h, double at)
{
	struct rc_cap c = { .at = at, .ver = -1 };
	size_t olen;
	char *key = url_key(r->target, strlen(r->target), &olen);
	int rc;

	if (key == NULL)
		return 0; /* not a URL robots.txt rules are for */
	if (h->status >= 300 && h->status < 400 && h->location != NULL)
		c.location =
		    location_key(key, olen, h->location, h->location_len);
	if (c.location == NULL && (c.ver = http_version(s, h, NULL)) < 0) {
		free(key);
		return -1;
	}
	if ((rc = url_add(s, key, olen, c)) == -1)
		free(c.location);
	free(key);
	return rc;
}

/* One record (header r, block b) of a file; 0, or -1 out of memory. */
static int
load_record(
    struct rc_sources *s, const struct ctl_warc_rec *r, const struct buf *b)
{
	struct buf body = BUF_INIT(0);
	struct rc_http h;
	double at;
	int rc;

	if (strcmp(r->type, "response") != 0 || b->state != BUF_OK ||
	    ctl_parse_time(r->date, strlen(r->date), &at) == -1 ||
	    http_parse(b->p, b->len, &h) == -1)
		return 0; /* no capture of an HTTP answer */
	if (!ctl_warc_is_resource(r, NULL)) {
		s->others++; /* robotsd's tdmrep.json: no robots.txt rules */
		return 0;
	}
	s->records++;
	if (h.pl.chunked || h.pl.coding != CTL_CODING_IDENTITY ||
	    h.pl.unknown) { /* as another crawler kept it */
		if (ctl_payload_decode(h.body, h.body_len, &h.pl,
		        ROBOTS_MAX_BODY, &body) == 0) {
			h.body = body.p != NULL ? body.p : "";
			h.body_len = body.len;
		} else
			h.undecodable = 1;
	}
	if (r->origin[0] != '\0' && ctl_is_version(r->version))
		rc = load_own(s, r, &h, at);
	else
		rc = load_other(s, r, &h, at);
	buf_clear(&body);
	return rc;
}

/* Every record of the WARC file at path; 0, or -1 (reported). */
static int
load_file(struct rc_sources *s, const char *path)
{
	struct buf block = BUF_INIT(CTL_MAX_BLOCK);
	struct ctl_warc_rec r;
	gzFile g;
	int rc = 0, h = 0;

	errno = 0;
	if ((g = gzopen(path, "rb")) == NULL) {
		ctl_warnx(
		    "recheck: %s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	while (rc == 0 && (h = ctl_warc_header(g, &r)) == 1) {
		int want = strcmp(r.type, "response") == 0;

		buf_reset(&block);
		if (ctl_warc_block(g, r.length, want ? &block : NULL) == -1) {
			ctl_warnx("recheck: %s: a record is cut short", path);
			rc = -1;
		} else if (want && load_record(s, &r, &block) == -1) {
			ctl_warnx("out of memory");
			rc = -1;
		}
	}
	if (rc == 0 && h == -1) {
		ctl_warnx("recheck: %s: not a WARC file", path);
		rc = -1;
	}
	gzclose(g);
	buf_clear(&block);
	s->files++;
	return rc;
}

/* Every robotsd-*.warc.gz file of robotsd's archive dir, oldest first. */
static int
load_dir(struct rc_sources *s, const char *dir)
{
	struct dirent **ents;
	char path[4096];
	int n, i, rc = 0;

	if ((n = scandir(dir, &ents, ctl_archive_is_file, alphasort)) == -1) {
		ctl_warnx("recheck: %s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (rc == 0 && load_file(s, path) == -1)
			rc = -1;
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* The capture of u nearest in time to at (the later one of a tie). */
static const struct rc_cap *
nearest(const struct rc_url *u, double at)
{
	const struct rc_cap *best = &u->caps[0];
	size_t i;

	for (i = 1; i < u->n; i++) {
		double d = u->caps[i].at - at, bd = best->at - at;

		if ((d < 0 ? -d : d) <= (bd < 0 ? -bd : bd))
			best = &u->caps[i];
	}
	return best;
}

/*
 * The version capture c leads to, through at most RC_MAX_HOPS redirects
 * (each to the target's capture nearest in time to the redirect); -2
 * past them, -1 when a target has no capture.
 */
static long
follow(const struct rc_sources *s, const struct rc_cap *c)
{
	int hops = 0;
	size_t ui;

	while (c->ver < 0) {
		if (++hops > RC_MAX_HOPS)
			return -2;
		if (!map_get(&s->umap, c->location, strlen(c->location), &ui))
			return -1;
		c = nearest(&s->urls[ui], c->at);
	}
	return c->ver;
}

/* The captures of u, a robots.txt URL, into its origin's timeline. */
static int
resolve_url(struct rc_sources *s, size_t ui)
{
	char tooid[VERSION_HEX + 1];
	size_t i;
	long ver;

	for (i = 0; i < s->urls[ui].n; i++) {
		const struct rc_url *u = &s->urls[ui];

		if (u->caps[i].ver < 0)
			s->redirects++;
		if ((ver = follow(s, &u->caps[i])) == -1) {
			s->unresolved++;
			continue;
		}
		if (ver == -2) {
			version_of_error_class("too_many_redirects", tooid);
			if ((ver = version_get(
			         s, tooid, RC_ALLOW_ALL, NULL, 0)) < 0)
				return -1;
		}
		u = &s->urls[ui];
		if (origin_add(s, u->key, u->origin_len, u->caps[i].at, ver) ==
		    -1)
			return -1;
	}
	return 0;
}

/* Follow the redirects, then sort and merge every timeline; 0 or -1. */
static int
finish(struct rc_sources *s)
{
	size_t i, plen = strlen(RC_ROBOTS_PATH);

	for (i = 0; i < s->nurls; i++) {
		const struct rc_url *u = &s->urls[i];

		if (strlen(u->key) == u->origin_len + plen &&
		    strcmp(u->key + u->origin_len, RC_ROBOTS_PATH) == 0 &&
		    resolve_url(s, i) == -1)
			return -1;
	}
	for (i = 0; i < s->norigins; i++)
		s->origins[i].n =
		    ctl_timeline(s->origins[i].caps, s->origins[i].n);
	return 0;
}

/* See ctl_recheck_int.h. */
int
rc_sources_load(
    struct rc_sources *s, const struct ctl *ctl, char *const *files, int nfiles)
{
	const char *dir;
	int i;

	if (ctl->nwarc == 0 && nfiles == 0) {
		if ((dir = ctl_archive_dir(ctl, "recheck")) == NULL ||
		    load_dir(s, dir) == -1)
			return -1;
	}
	for (i = 0; i < ctl->nwarc; i++)
		if (load_file(s, ctl->warc[i]) == -1)
			return -1;
	for (i = 0; i < nfiles; i++)
		if (load_file(s, files[i]) == -1)
			return -1;
	if (finish(s) == -1) {
		ctl_warnx("out of memory");
		return -1;
	}
	return 0;
}

/* See ctl_recheck_int.h. */
const struct rc_origin *
rc_sources_origin(const struct rc_sources *s, const char *origin, size_t len)
{
	size_t i;

	return map_get(&s->omap, origin, len, &i) ? &s->origins[i] : NULL;
}

/* See ctl_recheck_int.h. */
void
rc_sources_free(struct rc_sources *s)
{
	size_t i, k;

	for (i = 0; i < s->nvers; i++)
		robots_unref(s->vers[i].r);
	for (i = 0; i < s->norigins; i++) {
		free(s->origins[i].name);
		free(s->origins[i].caps);
	}
	for (i = 0; i < s->nurls; i++) {
		for (k = 0; k < s->urls[i].n; k++)
			free(s->urls[i].caps[k].location);
		free(s->urls[i].key);
		free(s->urls[i].caps);
	}
	free(s->vers);
	free(s->origins);
	free(s->urls);
	free(s->vmap.slots);
	free(s->omap.slots);
	free(s->umap.slots);
	memset(s, 0, sizeof(*s));
}
