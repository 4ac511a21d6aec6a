/*
 * fuzz_tdmrep.c: libFuzzer target for the TDMRep parsers
 * (src/wire/tdmrep_json.c, src/robots/robots_tdmrep.c). The input is
 * parsed as tdmrep.json: a file is either invalid with a reason or rules
 * within the limits, each rule's location starting with '/' or '*' and
 * its reservation 0 or 1; each rule's own location, as a match path, and
 * the input as one, are matched and the deciding rule must be one of the
 * file's. The input is also read as tdm-reservation and tdm-policy values,
 * and as robotsctl test reads a file: its warnings' lines and texts, and
 * the answer with the input as a page's values; and defused, as the
 * reader does before jansson, which must move no byte.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots/tdmrep.h"
#include "wire/tdmrep_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[3 * 65536 + 1];

/* Match s as a path (prefixed '/', normalized); the rule must be t's. */
static void
fuzz_tdmrep_match(const struct tdmrep *t, const char *s, size_t len)
{
	const struct tdmrep_rule *r;
	size_t n, i;

	if (len > 65535)
		len = 65535;
	path[0] = '/';
	n = 1 + robots_pct_normalize(s, len, path + 1, 0);
	if ((r = robots_tdmrep_match(t, path, n)) == NULL)
		return;
	for (i = 0; i < robots_tdmrep_count(t); i++)
		if (robots_tdmrep_rule(t, i) == r)
			return;
	abort();
}

static void
fuzz_tdmrep_rules(const struct tdmrep *t, const char *s, size_t size)
{
	const struct tdmrep_warning *w;
	size_t i, kept, total;

	if (robots_tdmrep_count(t) > TDMREP_MAX_RULES)
		abort();
	for (i = 0; i < robots_tdmrep_count(t); i++) {
		const struct tdmrep_rule *r = robots_tdmrep_rule(t, i);

		if (r->location_len == 0 || r->reservation > 1 ||
		    (r->location[0] != '/' && r->location[0] != '*') ||
		    r->location_len > TDMREP_MAX_LOCATION ||
		    memchr(r->location, '\0', r->location_len) != NULL ||
		    (r->policy != NULL && r->policy_len > TDMREP_MAX_POLICY))
			abort();
		if (r->policy != NULL &&
		    memchr(r->policy, '\0', r->policy_len) != NULL)
			abort();
		fuzz_tdmrep_match(t, r->location, r->location_len);
	}
	fuzz_tdmrep_match(t, s, size);
	w = robots_tdmrep_warnings(t, &kept, &total);
	if (kept > total || kept > TDMREP_MAX_WARNINGS)
		abort();
	for (i = 0; i < kept; i++)
		if (strcmp(robots_tdmrep_wcode_name(w[i].code), "unknown") == 0)
			abort();
}

/*
 * The file as robotsctl test and inspect read it: every warning has a
 * code and a line within the input; the input as a page's TDM values
 * gives an answer whose reservation is 0, 1 or none.
 */
static void
fuzz_tdmrep_file(const char *s, size_t size)
{
	struct tdmrep_file f;
	struct tdm_page page;
	struct tdm_answer a;
	const char *code;
	char text[256];
	uint32_t line;
	size_t i, lines = 1;

	for (i = 0; i < size; i++)
		lines += s[i] == '\n';
	if (tdmrep_file_read(&f, s, size) == -1)
		return;
	i = 0;
	while (tdmrep_file_warning(&f, i++, &code, &line, text, sizeof(text)) ==
	       0) {
		if (code == NULL || line > lines || strlen(text) == 0)
			abort();
	}
	robots_tdm_page_init(&page);
	robots_tdm_page_add(&page, 0, "TDM-Reservation", 15, s, size);
	robots_tdm_page_add(&page, 1, "tdm-policy", 10, s, size);
	robots_tdm_decide(f.rules,
	    f.rules != NULL ? TDM_STATE_RULES : TDM_STATE_INVALID, "/", 1,
	    &page, &a);
	if (a.reservation < -1 || a.reservation > 1)
		abort();
	tdmrep_file_clear(&f);
}

/* Whether c is a byte defusing must never write or overwrite. */
static int
fuzz_structural(char c)
{
	return c == '"' || c == '\n' || c == '[' || c == '{';
}

/*
 * robots_tdmrep_defuse() on a copy: no byte moves (quotes, brackets and
 * newlines stay where they were), and a second pass finds nothing.
 */
static void
fuzz_tdmrep_defuse(const char *s, size_t size)
{
	char *c;
	size_t i;

	if ((c = malloc(size > 0 ? size : 1)) == NULL)
		return;
	memcpy(c, s, size);
	(void)robots_tdmrep_defuse(c, size);
	for (i = 0; i < size; i++)
		if (fuzz_structural(s[i]) != fuzz_structural(c[i]))
			abort();
	if (robots_tdmrep_defuse(c, size) != 0)
		abort();
	free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *p = NULL;
	enum tdmrep_error err;
	char why[256];
	struct tdmrep *t = tdmrep_json_parse(s, size, &err, why);
	int v;

	if (t == NULL) {
		if (err == TDMREP_OK)
			abort();
	} else {
		if (err != TDMREP_OK)
			abort();
		fuzz_tdmrep_rules(t, s, size);
		robots_tdmrep_free(t);
	}
	fuzz_tdmrep_file(s, size);
	fuzz_tdmrep_defuse(s, size);
	if ((v = robots_tdm_reservation_value(s, size)) < -1 || v > 1)
		abort();
	if (robots_tdm_policy_value(s, size, &p) > 0 &&
	    (p < s || p >= s + size))
		abort();
	return 0;
}
