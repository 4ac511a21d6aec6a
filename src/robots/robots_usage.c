/*
 * robots_usage.c: answers on the usage-preference section of a compiled
 * ruleset (robots_int.h): the preferences of an agent for a path, the
 * extra lines and the warnings for reports. Never allocates.
 */
#include <config.h>

#include <string.h>

#include "robots_int.h"

const char *
robots_purpose_name(enum robots_purpose p)
{
	switch (p) {
	case ROBOTS_PURPOSE_TRAIN_AI:
		return "train-ai";
	case ROBOTS_PURPOSE_SEARCH:
		return "search";
	case ROBOTS_PURPOSE_AI_INPUT:
		return "ai-input";
	case ROBOTS_PURPOSES:
		break;
	}
	return "unknown";
}

const char *
robots_pref_name(enum robots_pref p)
{
	switch (p) {
	case ROBOTS_PREF_ALLOWED:
		return "allowed";
	case ROBOTS_PREF_DISALLOWED:
		return "disallowed";
	case ROBOTS_PREF_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *
robots_pref_kind_name(enum robots_pref_kind k)
{
	return k == ROBOTS_CONTENT_SIGNAL ? "content-signal" : "content-usage";
}

int
robots_has_prefs(const struct robots *r)
{
	return r->prefs != 0;
}

int
robots_prefs_bounded(const struct robots *r, size_t len)
{
	(void)len;
	return r->prefs == 0;
}

void
robots_usage(const struct robots *r, const char *agent, size_t agent_len,
    const char *path, size_t path_len, struct robots_usage *u)
{
	(void)r, (void)agent, (void)agent_len, (void)path, (void)path_len;
	memset(u->pref, 0, sizeof(u->pref));
	u->nfrom = 0;
}

size_t
robots_extra_count(const struct robots *r)
{
	(void)r;
	return 0;
}

void
robots_extra(const struct robots *r, size_t i, struct robots_extra *e)
{
	(void)r, (void)i;
	memset(e, 0, sizeof(*e));
	e->group = -1;
}

size_t
robots_warning_count(const struct robots *r)
{
	(void)r;
	return 0;
}

void
robots_warning(const struct robots *r, size_t i, struct robots_warning *w)
{
	(void)r, (void)i;
	w->line = 0;
	w->code = "";
	w->message = "";
}
