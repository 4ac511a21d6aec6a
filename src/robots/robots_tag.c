/*
 * robots_tag.c: the robots rule set of robots_tag.h (its union and the
 * reading of one rule, name and value, shared by every source) and the
 * Robots-Tag field of draft-illyes-repext (section 3.1.1): an RFC 9651
 * List read with sfv.c, cut at ROBOTS_TAG_LIMIT after the last complete
 * member.
 */
#include <config.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "robots_int.h"
#include "robots_tag.h"
#include "robots_tag_int.h"
#include "sfv.h"

static const char *const robots_tag_names[RT_NRULES] = { "noindex", "nofollow",
	"none", "nosnippet", "noarchive", "noimageindex", "notranslate",
	"indexifembedded", "noai", "noimageai" };

/* The valued rules, in RT_HAS_* bit order. */
static const char *const robots_tag_valued[] = { "max-snippet",
	"max-image-preview", "max-video-preview", "unavailable_after" };

static const char *const robots_tag_previews[] = { "none", "standard",
	"large" };

const char *
robots_tag_rule_name(enum robots_tag_rule r)
{
	return (size_t)r < RT_NRULES ? robots_tag_names[r] : "unknown";
}

const char *
robots_tag_preview_name(enum robots_tag_preview p)
{
	return (size_t)p < sizeof(robots_tag_previews) /
	                       sizeof(robots_tag_previews[0])
	           ? robots_tag_previews[p]
	           : "unknown";
}

void
robots_tag_set_init(struct robots_tag_set *set)
{
	/* unknown[] is read only below nunknown: its kilobyte left as is */
	memset(set, 0, offsetof(struct robots_tag_set, unknown));
}

/* Whether s (n bytes) equals the lowercase word w, ignoring case. */
static int
robots_tag_is(const char *s, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i] == '\0' || ascii_lower((unsigned char)s[i]) != w[i])
			return 0;
	return w[n] == '\0';
}

/* The index of s in the table words[0..n), or -1. */
static int
robots_tag_find(const char *s, size_t len, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (robots_tag_is(s, len, words[i]))
			return (int)i;
	return -1;
}

int
robots_tag_valued_index(const char *s, size_t len)
{
	return robots_tag_find(s, len, robots_tag_valued,
	    sizeof(robots_tag_valued) / sizeof(robots_tag_valued[0]));
}

int
robots_tag_known(const char *s, size_t len)
{
	return robots_tag_find(s, len, robots_tag_names, RT_NRULES) >= 0 ||
	       robots_tag_valued_index(s, len) >= 0;
}

/* Keep the unknown name s (lowercased), once: printable ASCII only. */
static void
robots_tag_unknown(struct robots_tag_set *set, const char *s, size_t len)
{
	char low[ROBOTS_TAG_UNKNOWN_LEN + 1];
	size_t i;

	if (len == 0)
		return;
	if (len > ROBOTS_TAG_UNKNOWN_LEN) {
		set->unknown_dropped++;
		return;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) {
			set->unknown_dropped++; /* a NUL, a control, not ASCII
			                         */
			return;
		}
		low[i] = (char)ascii_lower((unsigned char)s[i]);
	}
	low[len] = '\0';
	for (i = 0; i < set->nunknown; i++)
		if (strcmp(set->unknown[i], low) == 0)
			return;
	if (set->nunknown == ROBOTS_TAG_MAX_UNKNOWN) {
		set->unknown_dropped++;
		return;
	}
	memcpy(set->unknown[set->nunknown++], low, len + 1);
}

/* The stricter of two limits: the smaller, -1 standing for none. */
static int64_t
robots_tag_min_limit(int64_t a, int64_t b)
{
	if (a == -1)
		return b;
	if (b == -1)
		return a;
	return a < b ? a : b;
}

/* Merge valued rule bit `has` with value v into set, most restrictive. */
static void
robots_tag_set_valued(struct robots_tag_set *set, uint32_t has, int64_t v)
{
	int first = (set->valued & has) == 0;

	set->valued |= has;
	if (has == RT_HAS_MAX_SNIPPET)
		set->max_snippet =
		    first ? v : robots_tag_min_limit(set->max_snippet, v);
	else if (has == RT_HAS_MAX_VIDEO_PREVIEW)
		set->max_video_preview =
		    first ? v : robots_tag_min_limit(set->max_video_preview, v);
	else if (has == RT_HAS_MAX_IMAGE_PREVIEW)
		set->max_image_preview =
		    first || v < (int64_t)set->max_image_preview
		        ? (enum robots_tag_preview)v
		        : set->max_image_preview;
	else
		set->unavailable_after = first || v < set->unavailable_after
		                             ? v
		                             : set->unavailable_after;
}

void
robots_tag_set_union(
    struct robots_tag_set *dst, const struct robots_tag_set *src)
{
	size_t i;

	dst->rules |= src->rules;
	if (src->valued & RT_HAS_MAX_SNIPPET)
		robots_tag_set_valued(
		    dst, RT_HAS_MAX_SNIPPET, src->max_snippet);
	if (src->valued & RT_HAS_MAX_VIDEO_PREVIEW)
		robots_tag_set_valued(
		    dst, RT_HAS_MAX_VIDEO_PREVIEW, src->max_video_preview);
	if (src->valued & RT_HAS_MAX_IMAGE_PREVIEW)
		robots_tag_set_valued(dst, RT_HAS_MAX_IMAGE_PREVIEW,
		    (int64_t)src->max_image_preview);
	if (src->valued & RT_HAS_UNAVAILABLE_AFTER)
		robots_tag_set_valued(
		    dst, RT_HAS_UNAVAILABLE_AFTER, src->unavailable_after);
	for (i = 0; i < src->nunknown; i++)
		robots_tag_unknown(
		    dst, src->unknown[i], strlen(src->unknown[i]));
	dst->unknown_dropped += src->unknown_dropped;
}

/* An integer limit, -1 or more (at most 15 digits), or -2. */
static int64_t
robots_tag_limit_value(const char *s, size_t len)
{
	int64_t v = 0;
	size_t i = 0;

	if (len == 2 && s[0] == '-' && s[1] == '1')
		return -1;
	if (len == 0 || len > 15)
		return -2;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -2;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* Valued rule k with the value v (vlen bytes, trimmed), if readable. */
static void
robots_tag_add_valued(
    struct robots_tag_set *set, int k, const char *v, size_t vlen)
{
	int64_t x;
	int p;

	if (k == 1) {
		if ((p = robots_tag_find(v, vlen, robots_tag_previews, 3)) >= 0)
			robots_tag_set_valued(set, 1u << k, p);
		return;
	}
	if (k == 3) {
		if (robots_tag_parse_date(v, vlen, &x) == 0)
			robots_tag_set_valued(set, 1u << k, x);
		return;
	}
	if ((x = robots_tag_limit_value(v, vlen)) >= -1)
		robots_tag_set_valued(set, 1u << k, x);
}

void
robots_tag_add_rule(struct robots_tag_set *set, const char *name, size_t nlen,
    const char *v, size_t vlen, int has_value)
{
	int k = robots_tag_find(name, nlen, robots_tag_names, RT_NRULES);

	if (k == RT_NONE)
		set->rules |= 1u << RT_NOINDEX | 1u << RT_NOFOLLOW;
	if (k >= 0) {
		set->rules |= 1u << k;
		return;
	}
	if ((k = robots_tag_valued_index(name, nlen)) >= 0) {
		if (has_value)
			robots_tag_add_valued(set, k, v, vlen);
		return;
	}
	robots_tag_unknown(set, name, nlen);
}

void
robots_tag_set_date(struct robots_tag_set *set, int64_t t)
{
	robots_tag_set_valued(set, RT_HAS_UNAVAILABLE_AFTER, t);
}

int
robots_tag_names_agent(
    const char *s, size_t len, const char *agent, size_t agent_len)
{
	size_t a = robots_agent_token(agent, agent_len);
	size_t n = robots_agent_token(s, len);
	size_t i;

	if (n == 0 || n != a)
		return 0;
	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)s[i]) !=
		    ascii_lower((unsigned char)agent[i]))
			return 0;
	return 1;
}

/*
 * The length of s's first ROBOTS_TAG_LIMIT bytes that holds only complete
 * List members (len > ROBOTS_TAG_LIMIT): all of it when the byte after
 * the limit ends a member (',', SP or HTAB outside a String and an inner
 * list), else up to the last ',' outside them; trailing SP and HTAB and
 * the ',' dropped.
 */
static size_t
robots_tag_cut(const char *s, size_t len)
{
	size_t i, last = 0, n = ROBOTS_TAG_LIMIT;
	int in_str = 0, in_list = 0;

	for (i = 0; i < n && i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] == '"')
			in_str = 1;
		else if (s[i] == '(')
			in_list = 1;
		else if (s[i] == ')')
			in_list = 0;
		else if (s[i] == ',' && !in_list)
			last = i;
	}
	if (i == n && !in_str && !in_list &&
	    (s[n] == ',' || s[n] == ' ' || s[n] == '\t'))
		last = n;
	while (last > 0 && (s[last - 1] == ' ' || s[last - 1] == '\t'))
		last--;
	return last;
}

/* v in decimal into buf (room for 21 bytes); the length. */
static size_t
robots_tag_itoa(int64_t v, char *buf)
{
	char tmp[24];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = 0, k = 0;

	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		buf[k++] = '-';
	while (n > 0)
		buf[k++] = tmp[--n];
	return k;
}

/* Parameter p of a member naming the agent, into set. */
static void
robots_tag_param(const struct sfv_node *p, struct robots_tag_set *set)
{
	char buf[ROBOTS_TAG_LIMIT + 32];
	size_t n = 0;

	switch (p->type) {
	case SFV_BOOLEAN:
		if (p->i == 0)
			return;
		robots_tag_add_rule(set, p->key, p->key_len, NULL, 0, 0);
		return;
	case SFV_DATE:
		if (robots_tag_valued_index(p->key, p->key_len) == 3) {
			robots_tag_set_date(set, p->i);
			return;
		}
		break;
	case SFV_INTEGER:
		n = robots_tag_itoa(p->i, buf);
		break;
	case SFV_TOKEN:
		memcpy(buf, p->s, n = p->len);
		break;
	case SFV_STRING:
		n = robots_sfv_decode(p, buf);
		break;
	default:
		robots_tag_add_rule(set, p->key, p->key_len, NULL, 0, 0);
		return;
	}
	robots_tag_add_rule(set, p->key, p->key_len, buf, n, 1);
}

/* Whether List member m names agent or '*'. */
static int
robots_tag_member_applies(
    const struct sfv_node *m, const char *agent, size_t agent_len)
{
	char buf[ROBOTS_TAG_LIMIT];
	size_t n;

	if (m->type == SFV_TOKEN) {
		if (m->len == 1 && m->s[0] == '*')
			return 1;
		return robots_tag_names_agent(m->s, m->len, agent, agent_len);
	}
	if (m->type != SFV_STRING || m->len >= sizeof(buf))
		return 0;
	n = robots_sfv_decode(m, buf);
	if (n == 1 && buf[0] == '*')
		return 1;
	return robots_tag_names_agent(buf, n, agent, agent_len);
}

/* The parsed nodes[0..n) into set. */
static void
robots_tag_walk(const struct sfv_node *nodes, size_t n, const char *agent,
    size_t agent_len, struct robots_tag_set *set)
{
	enum sfv_role owner = SFV_MEMBER;
	int applies = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sfv_node *x = &nodes[i];

		if (x->role == SFV_MEMBER)
			applies =
			    robots_tag_member_applies(x, agent, agent_len);
		if (x->role != SFV_PARAM)
			owner = x->role;
		else if (owner == SFV_MEMBER && applies)
			robots_tag_param(x, set);
	}
}

enum robots_tag_status
robots_tag_parse_field(const char *s, size_t len, const char *agent,
    size_t agent_len, struct robots_tag_set *set)
{
	enum robots_tag_status st = RT_OK;
	struct sfv_node *nodes;
	size_t n;

	if (len > ROBOTS_TAG_LIMIT) {
		len = robots_tag_cut(s, len);
		st = RT_CUT;
	}
	if (robots_sfv_parse_list(s, len, NULL, 0, &n) != 0)
		return RT_INVALID;
	if (n == 0)
		return st;
	if ((nodes = malloc(n * sizeof(*nodes))) == NULL)
		return RT_NOMEM;
	if (robots_sfv_parse_list(s, len, nodes, n, &n) == 0)
		robots_tag_walk(nodes, n, agent, agent_len, set);
	free(nodes);
	return st;
}
