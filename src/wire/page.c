/*
 * page.c: the page's own signals of a check (page.h): the "page" member
 * (proto.c validated it), its header lines and meta pairs read with
 * librobots' parsers (robots_tag.h, robots_prefs.h), and its evidence id.
 */
#include <config.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ascii.h"
#include "wire/buf.h"
#include "wire/page.h"

/*
 * The header fields robotsd reads (only they enter the evidence), each
 * header name classified once by page_field_of(), kept in its pair.
 */
enum page_field {
	PF_OTHER,
	PF_ROBOTS_TAG,
	PF_X_ROBOTS_TAG,
	PF_CONTENT_USAGE,
	PF_CONTENT_SIGNAL,
	PF_TDM_RESERVATION,
	PF_TDM_POLICY,
	PF_LINK
};

/* The lowercase names of the fields, by enum page_field. */
static const struct {
	const char *name;
	size_t len;
} page_fields[] = {
	{ "", 0 },
	{ "robots-tag", 10 },
	{ "x-robots-tag", 12 },
	{ "content-usage", 13 },
	{ "content-signal", 14 },
	{ "tdm-reservation", 15 },
	{ "tdm-policy", 10 },
	{ "link", 4 },
};

/* One [NAME, VALUE] pair of an array. */
struct page_pair {
	const char *name, *value;
	size_t name_len, value_len;
	enum page_field field; /* of a header line; PF_OTHER for a meta */
};

/* Pair i of the decoded pairs a into *p. */
static void
page_pair(const struct wire_pair *a, size_t i, struct page_pair *p)
{
	*p = (struct page_pair){ a[i].name.p, a[i].value.p, a[i].name.len,
		a[i].value.len, PF_OTHER };
}

/* Whether s (n bytes) is the lowercase lit (n bytes), ignoring case. */
static int
page_same(const char *s, const char *lit, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)s[i]) != (unsigned char)lit[i])
			return 0;
	return 1;
}

/* The field header name (len bytes) is, or PF_OTHER. */
static enum page_field
page_field_of(const char *name, size_t len)
{
	size_t f, n = sizeof(page_fields) / sizeof(page_fields[0]);

	for (f = PF_OTHER + 1; f < n; f++)
		if (page_fields[f].len == len &&
		    page_same(name, page_fields[f].name, len))
			return (enum page_field)f;
	return PF_OTHER;
}

/* Header line i of pg into *p, its name classified (once: wire_pair). */
static void
page_header(const struct wire_page *pg, size_t i, struct page_pair *p)
{
	struct wire_pair *h = &pg->headers[i];
	enum page_field f;

	page_pair(pg->headers, i, p);
	if (h->field == 0) {
		f = page_field_of(p->name, p->name_len);
		h->field = (unsigned char)(f + 1);
	}
	p->field = (enum page_field)(h->field - 1);
}

/* The JSON string s, borrowed. */
static struct wire_str
page_json_str(const json_t *s)
{
	return (
	    struct wire_str){ json_string_value(s), json_string_length(s), 0 };
}

/* The strings of the pairs of JSON array a into out; their count. */
static size_t
page_json_pairs(const json_t *a, struct wire_pair *out)
{
	const json_t *pair;
	size_t i;

	json_array_foreach(a, i, pair)
	{
		out[i].name = page_json_str(json_array_get(pair, 0));
		out[i].value = page_json_str(json_array_get(pair, 1));
		out[i].field = 0;
	}
	return json_array_size(a);
}

int
page_from_json(const json_t *page, struct wire_page *pg)
{
	const json_t *h = json_object_get(page, "headers");
	const json_t *m = json_object_get(page, "meta");
	size_t n = json_array_size(h) + json_array_size(m);

	memset(pg, 0, sizeof(*pg));
	pg->present = 1;
	if ((pg->headers = malloc(n > 0 ? n * sizeof(pg->headers[0]) : 1)) ==
	    NULL)
		return -1;
	pg->nheaders = page_json_pairs(h, pg->headers);
	pg->meta = pg->headers + pg->nheaders;
	pg->nmeta = page_json_pairs(m, pg->meta);
	return 0;
}

void
page_from_json_clear(struct wire_page *pg)
{
	free(pg->headers);
	memset(pg, 0, sizeof(*pg));
}

/*
 * The lines of header field f, from line i on, joined with ", " (RFC 9110
 * 5.3) into *out (*len bytes): the one line's value itself, or a new
 * string *own (NUL-terminated; else *own is NULL). 0 when there is no such
 * line, 1 when there is, -1 when out of memory.
 */
static int
page_join(const struct wire_page *pg, size_t i, enum page_field f,
    const char **out, size_t *len, char **own)
{
	struct buf b = BUF_INIT(0);
	struct page_pair p;
	size_t n = 0;

	for (*own = NULL; i < pg->nheaders; i++) {
		page_header(pg, i, &p);
		if (p.field != f)
			continue;
		if (n++ == 0) {
			*out = p.value != NULL ? p.value : "";
			*len = p.value_len;
			continue;
		}
		if (n == 2)
			buf_add(&b, *out, *len);
		buf_lit(&b, ", ");
		buf_add(&b, p.value, p.value_len);
	}
	if (n < 2)
		return n == 1;
	if (buf_terminate(&b) == -1) {
		buf_clear(&b);
		return -1;
	}
	*out = *own = buf_take(&b, len);
	return 1;
}

/* Whether a set has any rule. */
static int
page_set_any(const struct robots_tag_set *s)
{
	return s->rules != 0 || s->valued != 0 || s->nunknown > 0 ||
	       s->unknown_dropped > 0;
}

/* The rules of one source into t, and the source into its "from". */
static void
page_add(struct page_tags *t, const struct robots_tag_set *s, int meta,
    const struct page_pair *p)
{
	if (!page_set_any(s))
		return;
	robots_tag_set_union(&t->set, s);
	if (t->nfrom < PAGE_FROM_MAX)
		t->from[t->nfrom++] = (struct page_tag_from){ meta, p->name,
			p->name_len, p->value, p->value_len };
}

/* The Robots-Tag field (its lines, the first line i, joined) into t. */
static int
page_robots_tag(const struct wire_page *pg, size_t i, const char *agent,
    size_t agent_len, struct page_tags *t)
{
	struct robots_tag_set s;
	struct page_pair p = { .name = "robots-tag", .name_len = 10 };
	enum robots_tag_status st;
	int has =
	    page_join(pg, i, PF_ROBOTS_TAG, &p.value, &p.value_len, &t->joined);

	if (has <= 0)
		return has;
	robots_tag_set_init(&s);
	st = robots_tag_parse_field(p.value, p.value_len, agent, agent_len, &s);
	if (st == RT_NOMEM)
		return -1;
	if (st == RT_OK || st == RT_CUT)
		page_add(t, &s, 0, &p);
	return 0;
}

int
page_tags(const struct wire_page *pg, const char *agent, size_t agent_len,
    struct page_tags *t)
{
	struct robots_tag_set s;
	struct page_pair p;
	size_t i;
	int rt = 0;

	t->nfrom = 0; /* from[] is read only below nfrom */
	t->joined = NULL;
	robots_tag_set_init(&t->set);
	for (i = 0; i < pg->nheaders; i++) {
		page_header(pg, i, &p);
		if (p.field == PF_ROBOTS_TAG && rt++ == 0 &&
		    page_robots_tag(pg, i, agent, agent_len, t) == -1)
			return -1;
		if (p.field != PF_X_ROBOTS_TAG)
			continue; /* no set to clear: it is large */
		robots_tag_set_init(&s);
		if (robots_tag_parse_xrt(
		        p.value, p.value_len, agent, agent_len, &s))
			page_add(t, &s, 0, &p);
	}
	for (i = 0; i < pg->nmeta; i++) {
		page_pair(pg->meta, i, &p);
		robots_tag_set_init(&s);
		if (robots_tag_parse_meta(p.name, p.name_len, p.value,
		        p.value_len, agent, agent_len, &s))
			page_add(t, &s, 1, &p);
	}
	return 0;
}

void
page_tags_clear(struct page_tags *t)
{
	free(t->joined);
	t->joined = NULL;
}

/* One preference header of page into *pp, read by reader. */
static int
page_pref(const struct wire_page *pg, enum page_field f, struct page_pref *pp,
    void (*reader)(const char *, size_t, struct pref_read *))
{
	int has = page_join(pg, 0, f, &pp->value, &pp->len, &pp->own);

	if (has <= 0)
		return has;
	pp->present = 1;
	reader(pp->value, pp->len, &pp->read);
	return 0;
}

int
page_prefs(const struct wire_page *h, struct page_prefs *p)
{
	memset(p, 0, sizeof(*p));
	if (page_pref(h, PF_CONTENT_USAGE, &p->usage, robots_pref_read_usage) ==
	        -1 ||
	    page_pref(h, PF_CONTENT_SIGNAL, &p->signal,
	        robots_pref_read_signal) == -1) {
		page_prefs_clear(p);
		return -1;
	}
	return 0;
}

void
page_prefs_clear(struct page_prefs *p)
{
	free(p->usage.own);
	free(p->signal.own);
	memset(p, 0, sizeof(*p));
}

/* The more restrictive of two preferences. */
static enum robots_pref
page_strictest(enum robots_pref a, enum robots_pref b)
{
	if (a == ROBOTS_PREF_DISALLOWED || b == ROBOTS_PREF_DISALLOWED)
		return ROBOTS_PREF_DISALLOWED;
	if (a == ROBOTS_PREF_ALLOWED || b == ROBOTS_PREF_ALLOWED)
		return ROBOTS_PREF_ALLOWED;
	return ROBOTS_PREF_UNKNOWN;
}

void
page_prefs_combine(const struct page_prefs *p, struct robots_usage *us)
{
	size_t i;

	for (i = 0; i < ROBOTS_PURPOSES; i++) {
		if (p->usage.present)
			us->pref[i] = page_strictest(us->pref[i],
			    (enum robots_pref)p->usage.read.pref[i]);
		if (p->signal.present)
			us->pref[i] = page_strictest(us->pref[i],
			    (enum robots_pref)p->signal.read.pref[i]);
	}
}

void
page_tdm(const struct wire_page *pg, struct tdm_page *t)
{
	struct page_pair p;
	size_t i;

	robots_tdm_page_init(t);
	for (i = 0; i < pg->nheaders; i++) {
		page_header(pg, i, &p);
		if (p.field != PF_TDM_RESERVATION && p.field != PF_TDM_POLICY)
			continue; /* robots_tdm_page_add() reads no other */
		robots_tdm_page_add(
		    t, 0, p.name, p.name_len, p.value, p.value_len);
	}
	for (i = 0; i < pg->nmeta; i++) {
		page_pair(pg->meta, i, &p);
		robots_tdm_page_add(
		    t, 1, p.name, p.name_len, p.value, p.value_len);
	}
}

/*
 * SHA-256 of libcrypto's default provider, fetched once: EVP_sha256()
 * would look it up again for every digest, which costs more than hashing
 * a page's few lines.
 */
static const EVP_MD *
page_sha256(void)
{
	static _Atomic(EVP_MD *) fetched;
	EVP_MD *md = atomic_load(&fetched), *none = NULL;

	if (md != NULL)
		return md;
	if ((md = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL)
		return EVP_sha256();
	if (!atomic_compare_exchange_strong(&fetched, &none, md)) {
		EVP_MD_free(md); /* another thread's came first */
		md = none;
	}
	return md;
}

/*
 * A digest context, reused: one is kept between calls (taken by one
 * thread at a time; another thread meanwhile makes its own), since making
 * and freeing one, and binding it to SHA-256 anew, costs more than hashing
 * a page's few lines. NULL when out of memory.
 */
static _Atomic(EVP_MD_CTX *) page_kept;

static EVP_MD_CTX *
page_ctx_take(void)
{
	EVP_MD_CTX *ctx = atomic_exchange(&page_kept, NULL);

	return ctx != NULL ? ctx : EVP_MD_CTX_new();
}

/* Keep ctx for the next call, or free it when one is kept already. */
static void
page_ctx_give(EVP_MD_CTX *ctx)
{
	EVP_MD_CTX *none = NULL;

	if (!atomic_compare_exchange_strong(&page_kept, &none, ctx))
		EVP_MD_CTX_free(ctx);
}

/* The evidence's bytes on their way to the digest, a block at a time. */
struct page_hash {
	EVP_MD_CTX *ctx;
	int ok;
	size_t len;
	unsigned char b[256];
};

/* The bytes held to the digest. */
static void
page_hash_flush(struct page_hash *h)
{
	if (h->len > 0 && EVP_DigestUpdate(h->ctx, h->b, h->len) != 1)
		h->ok = 0;
	h->len = 0;
}

/* n bytes of s to the digest. */
static void
page_hash_add(struct page_hash *h, const void *s, size_t n)
{
	if (n == 0)
		return;
	if (n > sizeof(h->b) - h->len) {
		page_hash_flush(h);
		if (n >= sizeof(h->b)) {
			if (EVP_DigestUpdate(h->ctx, s, n) != 1)
				h->ok = 0;
			return;
		}
	}
	memcpy(h->b + h->len, s, n);
	h->len += n;
}

/* n bytes of s lowercased to the digest. */
static void
page_hash_lower(struct page_hash *h, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (h->len == sizeof(h->b))
			page_hash_flush(h);
		h->b[h->len++] =
		    (unsigned char)ascii_lower((unsigned char)s[i]);
	}
}

/* "name: value\n" of pair p to the digest, name as given (lowercase). */
static void
page_hash_line(struct page_hash *h, const char *name, size_t name_len,
    const struct page_pair *p)
{
	page_hash_add(h, name, name_len);
	page_hash_add(h, ": ", 2);
	page_hash_add(h, p->value, p->value_len);
	page_hash_add(h, "\n", 1);
}

/*
 * The id of the digest's bytes into out, as version_of_body() writes one:
 * its first VERSION_HEX hex digits, or "" when libcrypto failed.
 */
static void
page_hash_id(struct page_hash *h, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t i, n = 0;

	page_hash_flush(h);
	if (h->ok && EVP_DigestFinal_ex(h->ctx, md, &mdlen) == 1 &&
	    mdlen * 2 >= VERSION_HEX)
		n = VERSION_HEX;
	for (i = 0; i < n; i++)
		out[i] =
		    "0123456789abcdef"[(md[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[n] = '\0';
}

int
page_evidence(const struct wire_page *pg, char *out)
{
	struct page_hash h = { .ok = 1 };
	struct page_pair p;
	size_t i;

	if ((h.ctx = page_ctx_take()) == NULL)
		return -1;
	if (EVP_DigestInit_ex(h.ctx, page_sha256(), NULL) != 1)
		h.ok = 0;
	for (i = 0; i < pg->nheaders && h.ok; i++) {
		page_header(pg, i, &p);
		if (p.field != PF_OTHER)
			page_hash_line(&h, page_fields[p.field].name,
			    page_fields[p.field].len, &p);
	}
	for (i = 0; i < pg->nmeta && h.ok; i++) {
		page_pair(pg->meta, i, &p);
		page_hash_add(&h, "meta ", 5);
		page_hash_lower(&h, p.name, p.name_len);
		page_hash_line(&h, "", 0, &p);
	}
	page_hash_id(&h, out);
	page_ctx_give(h.ctx);
	return 0;
}
