/*
 * robots_parse.c: robots.txt body -> compiled ruleset (RFC 9309, with the
 * line, key and group handling of Google's reference parser where the RFC
 * is silent): the lines of a body into temporary vectors (rules, groups,
 * agent lines, sitemaps, compiled patterns) in a struct parser
 * (robots_parse_int.h); robots_build.c then lays the result out in one
 * allocation (see robots_int.h) and owns the ruleset's life.
 *
 * As google/robotstxt does: a partial leading BOM is skipped too; a NUL
 * ends its line; a line keeps its first 16,663 bytes (kMaxLineLen - 1);
 * keys match by case-insensitive prefix ("Disallowed:" is a disallow);
 * allow/disallow lines, even empty ones, end a run of User-agent lines,
 * other lines do not; a value that starts with neither '/' nor '*' is kept
 * but can never match a path. Where it has nothing to say, we chose:
 * Crawl-delay (a decimal number; not a group separator) takes the group's
 * first valid value, and a token in several groups takes the first group's
 * in file order; a User-agent value with no product token ("123") names
 * nobody; the index.html twin reports the Allow line it came from.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots_int.h"
#include "robots_parse_int.h"
/* C isspace() in the C locale. */
static int
robots_parse_is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Whether key starts with lit (lower case), ignoring ASCII case. */
static int
robots_parse_prefix_ci(const char *key, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; lit[i] != '\0'; i++) {
		unsigned char c = (unsigned char)key[i];

		if (i >= n || (c | 0x20) != (unsigned char)lit[i])
			return 0;
	}
	return 1;
}

/* The directive a key names; keys match by prefix as in Google's parser. */
static enum key
robots_parse_classify(const char *k, size_t n)
{
	/* The names' first letters differ: one switch picks the candidates. */
	switch (n > 0 ? (unsigned char)k[0] | 0x20 : 0) {
	case 'u':
		if (robots_parse_prefix_ci(k, n, "user-agent") ||
		    robots_parse_prefix_ci(k, n, "useragent") ||
		    robots_parse_prefix_ci(k, n, "user agent"))
			return KEY_USER_AGENT;
		break;
	case 'a':
		if (robots_parse_prefix_ci(k, n, "allow"))
			return KEY_ALLOW;
		break;
	case 'd':
		if (robots_parse_prefix_ci(k, n, "disallow") ||
		    robots_parse_prefix_ci(k, n, "dissallow") ||
		    robots_parse_prefix_ci(k, n, "dissalow") ||
		    robots_parse_prefix_ci(k, n, "disalow") ||
		    robots_parse_prefix_ci(k, n, "diasllow") ||
		    robots_parse_prefix_ci(k, n, "disallaw"))
			return KEY_DISALLOW;
		break;
	case 's':
		if (robots_parse_prefix_ci(k, n, "sitemap") ||
		    robots_parse_prefix_ci(k, n, "site-map"))
			return KEY_SITEMAP;
		break;
	case 'c':
		if (robots_parse_prefix_ci(k, n, "crawl-delay"))
			return KEY_CRAWL_DELAY;
		break;
	}
	return KEY_NONE;
}

/*
 * Parse a Crawl-delay value: digits with an optional fraction; -1 if bad,
 * or if it is too long to be a number (309 digits and more: infinite),
 * which no JSON answer could carry.
 */
static double
robots_parse_delay(const char *s, size_t n)
{
	double v = 0, scale = 1;
	size_t i = 0, digits = 0;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		v = v * 10 + (s[i] - '0');
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
			v += (s[i] - '0') * (scale /= 10);
	return digits > 0 && i == n && isfinite(v) ? v : -1.0;
}

/* The current group, or NULL before the first User-agent line. */
static struct robots_tgroup *
robots_parse_cur_group(struct parser *p)
{
	return p->groups.n
	           ? (struct robots_tgroup *)p->groups.v + p->groups.n - 1
	           : NULL;
}

/* A User-agent line: extend the current group or start the next one. */
static void
robots_parse_on_user_agent(struct parser *p, const char *v, size_t n)
{
	struct robots_tgroup *g = robots_parse_cur_group(p);
	struct robots_tagent *a;
	size_t tok;

	robots_prefs_user_agent(p, g != NULL && !g->separated);
	if (g == NULL || g->separated) {
		if ((g = robots_parse_vec_push(
		         &p->groups, sizeof(*g), &p->nomem)) == NULL)
			return;
		g->agent_first = (uint32_t)p->agents.n;
		g->crawl_delay = -1.0;
	}
	if (robots_agent_is_global(v, n)) {
		tok = 1;
	} else if ((tok = robots_agent_token(v, n)) == 0) {
		return; /* names nobody */
	}
	if ((a = robots_parse_vec_push(&p->agents, sizeof(*a), &p->nomem)) ==
	    NULL)
		return;
	a->src = v;
	a->len = (uint32_t)tok;
	a->global = robots_agent_is_global(v, n);
	g->global |= a->global;
	g->agent_count++;
}

/* Position after the last '/' of o if "index.htm" follows it, else 0. */
static size_t
robots_parse_index_html_dir(const char *o, size_t k)
{
	size_t i = k;

	while (i > 0 && o[i - 1] != '/')
		i--;
	if (i == 0 || k - i < 9 || memcmp(o + i, "index.htm", 9) != 0)
		return 0;
	return i;
}

/*
 * Google: an Allow pattern ending in /index.htm(l) also allows its directory,
 * as "Allow: /dir/$" would (specificity: the length of "/dir/$").
 */
static void
robots_parse_add_twin(struct parser *p, const struct trule *r, size_t norm_dir)
{
	const char *o = (const char *)p->comp.v + r->comp;
	size_t dir = robots_parse_index_html_dir(o, r->comp_len);
	struct trule *t;

	if (dir == 0 || (t = robots_parse_vec_push(
	                     &p->rules, sizeof(*t), &p->nomem)) == NULL)
		return;
	*t = *r;
	t->seq = p->seq++;
	t->twin = 1;
	t->comp_len = (uint32_t)dir;
	t->anchored = 1;
	t->lit_len = r->lit_len < dir ? r->lit_len : (uint32_t)dir;
	t->prio = (uint32_t)norm_dir + 1;
	((struct robots_tgroup *)p->groups.v)[r->group].table_count++;
}

/* An allow or disallow line with a non-empty value in the current group. */
static void
robots_parse_add_rule(
    struct parser *p, const char *v, size_t n, int allow, uint32_t line)
{
	struct trule *r, copy;
	size_t k, norm_dir = 0;
	char *o;

	if (robots_parse_vec_reserve(&p->comp, 1, 3 * n, &p->nomem) != 0 ||
	    (r = robots_parse_vec_push(&p->rules, sizeof(*r), &p->nomem)) ==
	        NULL)
		return;
	r->src = v;
	r->src_len = (uint32_t)n;
	r->line = line;
	r->group = (uint32_t)p->groups.n - 1;
	r->seq = p->seq++;
	r->allow = (uint8_t)allow;
	r->comp = (uint32_t)p->comp.n;
	o = (char *)p->comp.v + p->comp.n;
	k = robots_pct_normalize(v, n, o, 1);
	r->prio = (uint32_t)k;
	if (allow)
		norm_dir = robots_parse_index_html_dir(o, k);
	k = robots_pattern_tail(o, k, r);
	r->shared = k <= n && memcmp(o, v, k) == 0;
	if (!r->shared)
		p->comp.n += k;
	robots_parse_cur_group(p)->rule_count++;
	robots_parse_cur_group(p)->table_count++;
	copy = *r;
	if (norm_dir > 0)
		robots_parse_add_twin(p, &copy, norm_dir);
}

/* Act on one key: value line. */
static void
robots_parse_dispatch(
    struct parser *p, enum key key, const char *v, size_t n, uint32_t line)
{
	struct robots_tgroup *g = robots_parse_cur_group(p);
	struct tspan *s;
	double d;

	switch (key) {
	case KEY_USER_AGENT:
		robots_parse_on_user_agent(p, v, n);
		break;
	case KEY_ALLOW:
	case KEY_DISALLOW:
		if (g == NULL) /* before any User-agent: nobody's rule */
			break;
		g->separated = 1;
		if (n > 0)
			robots_parse_add_rule(p, v, n, key == KEY_ALLOW, line);
		break;
	case KEY_SITEMAP:
		if (n > 0 && (s = robots_parse_vec_push(
		                  &p->sitemaps, sizeof(*s), &p->nomem))) {
			s->s = v;
			s->len = (uint32_t)n;
		}
		break;
	case KEY_CRAWL_DELAY:
		if (g != NULL && g->crawl_delay < 0 &&
		    (d = robots_parse_delay(v, n)) >= 0)
			g->crawl_delay = d;
		break;
	case KEY_NONE:
		break;
	}
}

/* Split one line into key and value the way Google's parser does. */
static void
robots_parse_line(struct parser *p, const char *l, size_t n, uint32_t line)
{
	const char *cut, *sep, *v, *end;
	size_t kn;
	enum key key;

	if ((cut = memchr(l, '\0', n)) != NULL) /* it reads C strings */
		n = (size_t)(cut - l);
	if ((cut = memchr(l, '#', n)) != NULL)
		n = (size_t)(cut - l);
	while (n > 0 && robots_parse_is_space((unsigned char)l[n - 1]))
		n--;
	while (n > 0 && robots_parse_is_space((unsigned char)*l))
		l++, n--;
	end = l + n;
	if (n == 0)
		return;
	if ((sep = memchr(l, ':', n)) == NULL) {
		/* No colon: "key value", exactly two tokens. */
		for (sep = l; sep < end && *sep != ' ' && *sep != '\t'; sep++)
			;
		if (sep == end)
			return;
		for (v = sep; *v == ' ' || *v == '\t'; v++)
			;
		for (; v < end; v++)
			if (*v == ' ' || *v == '\t')
				return;
	}
	kn = (size_t)(sep - l);
	while (kn > 0 && robots_parse_is_space((unsigned char)l[kn - 1]))
		kn--;
	if (kn == 0)
		return;
	v = sep + 1;
	while (v < end && robots_parse_is_space((unsigned char)*v))
		v++;
	if ((key = robots_parse_classify(l, kn)) == KEY_NONE)
		robots_prefs_line(
		    p, l, kn, v, (size_t)(end - v), line, *sep == ':');
	else
		robots_parse_dispatch(p, key, v, (size_t)(end - v), line);
}

/* At least one byte of v is zero (the classic SWAR test). */
static inline uint64_t
robots_parse_has_zero(uint64_t v)
{
	return ((v - 0x0101010101010101ULL) & ~v) & 0x8080808080808080ULL;
}

/* The first CR or LF at or after s, or end; eight bytes at a time. */
static const char *
robots_parse_line_end(const char *s, const char *end)
{
	uint64_t v;

	while (end - s >= 8) {
		memcpy(&v, s, 8);
		if (robots_parse_has_zero(v ^ 0x0a0a0a0a0a0a0a0aULL) |
		    robots_parse_has_zero(v ^ 0x0d0d0d0d0d0d0d0dULL))
			break;
		s += 8;
	}
	while (s < end && *s != '\n' && *s != '\r')
		s++;
	return s;
}

/* Cut the body into lines: CR, LF or CRLF; a leading (partial) BOM skipped. */
void
robots_parse_body(struct parser *p, const char *body, size_t len)
{
	static const char bom[] = "\xEF\xBB\xBF";
	const char *s = body, *end, *e;
	uint32_t line = 0;
	size_t n;

	if (len > ROBOTS_MAX_BODY)
		len = ROBOTS_MAX_BODY;
	end = body + len;
	while (s < end && s - body < 3 && *s == bom[s - body])
		s++;
	for (;;) {
		e = robots_parse_line_end(s, end);
		n = (size_t)(e - s);
		robots_parse_line(p, s, n < LINE_KEEP ? n : LINE_KEEP, ++line);
		if (e == end || p->nomem)
			break;
		if (*e == '\r' && e + 1 < end && e[1] == '\n')
			e++;
		s = e + 1;
	}
}
