/*
 * robots_tdm.c: the TDMRep answer of tdmrep.h, pure: the page's
 * TDM-Reservation / TDM-Policy header lines and <meta> elements (the last
 * valid one of a name counts), the tdmrep.json match and the overrides
 * (header over tdmrep.json, meta over header, an absent field resetting
 * nothing), and the usage purpose "tdm".
 */
#include <config.h>

#include <string.h>

#include "tdmrep.h"

/* Whether name (n bytes) is the lowercase word w, ignoring ASCII case. */
static int
tdm_named(const char *name, size_t n, const char *w)
{
	size_t i;
	char c;

	if (n != strlen(w))
		return 0;
	for (i = 0; i < n; i++) {
		c = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] | 0x20)
		                                     : name[i];
		if (c != w[i])
			return 0;
	}
	return 1;
}

/* Fields that say nothing. */
static void
tdm_values_init(struct tdm_values *v)
{
	*v = (struct tdm_values){ .reservation = -1 };
}

void
robots_tdm_page_init(struct tdm_page *p)
{
	tdm_values_init(&p->header);
	tdm_values_init(&p->meta);
}

void
robots_tdm_page_add(struct tdm_page *p, int meta, const char *name,
    size_t name_len, const char *value, size_t value_len)
{
	struct tdm_values *v = meta ? &p->meta : &p->header;
	const char *pol;
	size_t pl;
	int r;

	if (tdm_named(name, name_len, "tdm-reservation")) {
		if ((r = robots_tdm_reservation_value(value, value_len)) != -1)
			v->reservation = r;
	} else if (tdm_named(name, name_len, "tdm-policy")) {
		if ((pl = robots_tdm_policy_value(value, value_len, &pol)) >
		    0) {
			v->policy = pol;
			v->policy_len = pl;
		}
	}
}

/* The fields source gives (those it has) over *out, as from. */
static void
tdm_override(struct tdm_answer *out, const struct tdm_values *v,
    enum tdm_from from, enum tdm_from *pfrom)
{
	if (v->reservation != -1) {
		out->reservation = v->reservation;
		out->from = from;
	}
	if (v->policy != NULL) {
		out->policy = v->policy;
		out->policy_len = v->policy_len;
		*pfrom = from;
	}
}

void
robots_tdm_decide(const struct tdmrep *rules, enum tdm_state state,
    const char *path, size_t len, const struct tdm_page *page,
    struct tdm_answer *out)
{
	const struct tdmrep_rule *m = NULL;
	enum tdm_from pfrom = TDM_FROM_ABSENT;

	*out = (struct tdm_answer){ .state = state, .reservation = -1 };
	if (state == TDM_STATE_RULES && rules != NULL)
		m = robots_tdmrep_match(rules, path, len);
	if (m != NULL) {
		out->reservation = m->reservation;
		out->location = m->location;
		out->location_len = m->location_len;
		out->policy = m->policy;
		out->policy_len = m->policy_len;
		out->from = TDM_FROM_FILE;
		if (m->policy != NULL)
			pfrom = TDM_FROM_FILE;
	}
	if (page == NULL) {
		out->from = TDM_FROM_ABSENT; /* "from" only with a page */
		return;
	}
	tdm_override(out, &page->header, TDM_FROM_HEADER, &pfrom);
	tdm_override(out, &page->meta, TDM_FROM_META, &pfrom);
	if (out->reservation == -1)
		out->from = pfrom;
}

enum robots_pref
robots_tdm_pref(int reservation)
{
	if (reservation == 1)
		return ROBOTS_PREF_DISALLOWED;
	if (reservation == 0)
		return ROBOTS_PREF_ALLOWED;
	return ROBOTS_PREF_UNKNOWN;
}

const char *
robots_tdm_state_name(enum tdm_state s)
{
	static const char *const names[] = { "rules", "none", "invalid",
		"unreachable", "pending" };

	return (size_t)s < sizeof(names) / sizeof(names[0]) ? names[s]
	                                                    : "unknown";
}

const char *
robots_tdm_from_name(enum tdm_from f)
{
	static const char *const names[] = { NULL, "tdmrep.json", "header",
		"meta" };

	return (size_t)f < sizeof(names) / sizeof(names[0]) ? names[f] : NULL;
}
