/*
 * robots_tag_xrt.c: the legacy robots rule syntax, as Google documents it
 * for the X-Robots-Tag header and the robots <meta> element: rules
 * separated by commas, a valued rule written "name: value" (the value of
 * unavailable_after may itself hold a comma after its weekday), and in a
 * header line an optional leading "AGENT:" naming the crawler the line is
 * for.
 */
#include <config.h>

#include <string.h>

#include "robots_int.h"
#include "robots_tag.h"
#include "robots_tag_int.h"

/* One rule s[0..n), "name" or "name: value". */
static void
robots_tag_xrt_rule(const char *s, size_t n, struct robots_tag_set *set)
{
	const char *colon, *v;
	size_t nl, vl;

	s = robots_trim_ows(s, &n);
	colon = memchr(s, ':', n);
	if (n == 0)
		return;
	if (colon == NULL) {
		robots_tag_add_rule(set, s, n, NULL, 0, 0);
		return;
	}
	nl = (size_t)(colon - s);
	vl = n - nl - 1;
	v = robots_trim_ows(colon + 1, &vl);
	robots_trim_ows(s, &nl);
	robots_tag_add_rule(set, s, nl, v, vl, 1);
}

/*
 * The end of the rule starting at s[i]: the next ',', or the one after it
 * when the rule is unavailable_after and its value so far is a weekday
 * ("unavailable_after: Friday, 25-Jun-10 15:00:00 GMT").
 */
static size_t
robots_tag_xrt_end(const char *s, size_t i, size_t len)
{
	const char *comma = memchr(s + i, ',', len - i), *colon, *next;
	size_t e = comma != NULL ? (size_t)(comma - s) : len, nl, vl;
	const char *name = s + i, *v;

	if (comma == NULL || (colon = memchr(name, ':', e - i)) == NULL)
		return e;
	nl = (size_t)(colon - name);
	name = robots_trim_ows(name, &nl);
	if (robots_tag_valued_index(name, nl) != 3)
		return e;
	vl = (size_t)(comma - colon) - 1;
	v = robots_trim_ows(colon + 1, &vl);
	if (!robots_tag_weekday(v, vl))
		return e;
	next = memchr(comma + 1, ',', len - e - 1);
	return next != NULL ? (size_t)(next - s) : len;
}

void
robots_tag_parse_rules(const char *s, size_t len, struct robots_tag_set *set)
{
	size_t i = 0, e;

	while (i < len) {
		e = robots_tag_xrt_end(s, i, len);
		robots_tag_xrt_rule(s + i, e - i, set);
		i = e + 1;
	}
}

/* The length of the line's "AGENT:" prefix (to the ':'), or 0. */
static size_t
robots_tag_xrt_agent(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len), *t;
	size_t n, i;

	if (colon == NULL || memchr(s, ',', (size_t)(colon - s)) != NULL)
		return 0;
	n = (size_t)(colon - s);
	t = robots_trim_ows(s, &n);
	if (n == 0 || robots_tag_known(t, n))
		return 0;
	for (i = 0; i < n; i++)
		if (!(t[i] >= 'a' && t[i] <= 'z') &&
		    !(t[i] >= 'A' && t[i] <= 'Z') &&
		    !(t[i] >= '0' && t[i] <= '9') && t[i] != '-' &&
		    t[i] != '_' && t[i] != '.' && t[i] != '/')
			return 0;
	return (size_t)(colon - s);
}

/* The first ROBOTS_TAG_LIMIT bytes of s, without the rule they cut. */
static size_t
robots_tag_xrt_limit(const char *s, size_t len)
{
	size_t n = ROBOTS_TAG_LIMIT;

	if (len <= n)
		return len;
	if (s[n] != ',')
		while (n > 0 && s[n - 1] != ',')
			n--;
	return n;
}

int
robots_tag_parse_xrt(const char *s, size_t len, const char *agent,
    size_t agent_len, struct robots_tag_set *set)
{
	size_t a, n;
	const char *name;

	len = robots_tag_xrt_limit(s, len);
	if ((a = robots_tag_xrt_agent(s, len)) > 0) {
		n = a;
		name = robots_trim_ows(s, &n);
		if (!robots_tag_names_agent(name, n, agent, agent_len))
			return 0;
		s += a + 1;
		len -= a + 1;
	}
	robots_tag_parse_rules(s, len, set);
	return 1;
}

int
robots_tag_parse_meta(const char *name, size_t name_len, const char *content,
    size_t len, const char *agent, size_t agent_len, struct robots_tag_set *set)
{
	static const char robots[] = "robots";
	size_t i = 0;

	name = robots_trim_ows(name, &name_len);
	if (name_len == 6)
		while (
		    i < 6 && ascii_lower((unsigned char)name[i]) == robots[i])
			i++;
	if (i != 6 && !robots_tag_names_agent(name, name_len, agent, agent_len))
		return 0;
	robots_tag_parse_rules(
	    content, robots_tag_xrt_limit(content, len), set);
	return 1;
}
