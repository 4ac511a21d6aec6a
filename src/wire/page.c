/*
 * page.c: the page's own signals of a check (page.h): the "page" member
 * (proto.c validated it), its header lines and meta pairs read with
 * librobots' parsers (robots_tag.h, robots_prefs.h), and its evidence id.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "wire/buf.h"
#include "wire/page.h"

/* The header fields robotsd reads; only they enter the evidence. */
static const char *const page_read_names[] = { "robots-tag", "x-robots-tag",
	"content-usage", "content-signal", "tdm-reservation", "tdm-policy",
	"link" };

/* One [NAME, VALUE] pair of an array. */
struct page_pair {
	const char *name, *value;
	size_t name_len, value_len;
};

/* Pair i of the decoded pairs a into *p. */
static void
page_pair(const struct wire_pair *a, size_t i, struct page_pair *p)
{
	*p = (struct page_pair){ a[i].name.p, a[i].value.p, a[i].name.len,
		a[i].value.len };
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

/* Whether the pair's name is the lowercase name w, ignoring case. */
static int
page_named(const struct page_pair *p, const char *w)
{
	return ascii_is_lit(p->name, p->name_len, w);
}

/*
 * The lines of header name (lowercase) joined with ", " (RFC 9110 5.3)
 * into a new string *out (*len bytes, NUL-terminated); 0 when there is no
 * such line, 1 when there is, -1 when out of memory.
 */
static int
page_join(const struct wire_page *pg, const char *name, char **out, size_t *len)
{
	struct buf b = BUF_INIT(0);
	struct page_pair p;
	size_t i, n = 0;

	for (i = 0; i < pg->nheaders; i++) {
		page_pair(pg->headers, i, &p);
		if (!page_named(&p, name))
			continue;
		if (n++ > 0)
			buf_lit(&b, ", ");
		buf_add(&b, p.value, p.value_len);
	}
	if (n == 0)
		return 0;
	if (buf_terminate(&b) == -1) {
		buf_clear(&b);
		return -1;
	}
	*out = buf_take(&b, len);
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

/* The Robots-Tag field (its lines joined) for agent, into t. */
static int
page_robots_tag(const struct wire_page *pg, const char *agent, size_t agent_len,
    struct page_tags *t)
{
	struct robots_tag_set s;
	struct page_pair p = { .name = "robots-tag", .name_len = 10 };
	enum robots_tag_status st;
	int has = page_join(pg, "robots-tag", &t->joined, &p.value_len);

	if (has <= 0)
		return has;
	p.value = t->joined;
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

	memset(t, 0, sizeof(*t));
	robots_tag_set_init(&t->set);
	for (i = 0; i < pg->nheaders; i++) {
		page_pair(pg->headers, i, &p);
		if (page_named(&p, "robots-tag") && rt++ == 0 &&
		    page_robots_tag(pg, agent, agent_len, t) == -1)
			return -1;
		if (!page_named(&p, "x-robots-tag"))
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
page_pref(const struct wire_page *pg, const char *name, struct page_pref *pp,
    void (*reader)(const char *, size_t, struct pref_read *))
{
	int has = page_join(pg, name, &pp->value, &pp->len);

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
	if (page_pref(h, "content-usage", &p->usage, robots_pref_read_usage) ==
	        -1 ||
	    page_pref(h, "content-signal", &p->signal,
	        robots_pref_read_signal) == -1) {
		page_prefs_clear(p);
		return -1;
	}
	return 0;
}

void
page_prefs_clear(struct page_prefs *p)
{
	free(p->usage.value);
	free(p->signal.value);
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
		page_pair(pg->headers, i, &p);
		robots_tdm_page_add(
		    t, 0, p.name, p.name_len, p.value, p.value_len);
	}
	for (i = 0; i < pg->nmeta; i++) {
		page_pair(pg->meta, i, &p);
		robots_tdm_page_add(
		    t, 1, p.name, p.name_len, p.value, p.value_len);
	}
}

/* name lowercased into b. */
static void
page_lower(struct buf *b, const char *s, size_t n)
{
	char c;
	size_t i;

	for (i = 0; i < n; i++) {
		c = (char)ascii_lower((unsigned char)s[i]);
		buf_add(b, &c, 1);
	}
}

/* Whether robotsd reads the header line p. */
static int
page_read_header(const struct page_pair *p)
{
	size_t i, n = sizeof(page_read_names) / sizeof(page_read_names[0]);

	for (i = 0; i < n; i++)
		if (page_named(p, page_read_names[i]))
			return 1;
	return 0;
}

int
page_evidence(const struct wire_page *pg, char *out)
{
	struct buf b = BUF_INIT(0);
	struct page_pair p;
	size_t i;
	int rc = 0;

	for (i = 0; i < pg->nheaders; i++) {
		page_pair(pg->headers, i, &p);
		if (!page_read_header(&p))
			continue;
		page_lower(&b, p.name, p.name_len);
		buf_lit(&b, ": ");
		buf_add(&b, p.value, p.value_len);
		buf_lit(&b, "\n");
	}
	for (i = 0; i < pg->nmeta; i++) {
		page_pair(pg->meta, i, &p);
		buf_lit(&b, "meta ");
		page_lower(&b, p.name, p.name_len);
		buf_lit(&b, ": ");
		buf_add(&b, p.value, p.value_len);
		buf_lit(&b, "\n");
	}
	if (b.state != BUF_OK)
		rc = -1;
	else
		version_of_body(b.p, b.len, out);
	buf_clear(&b);
	return rc;
}
