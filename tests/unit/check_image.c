/*
 * check_image.c: the deep check of ruleset images (robots_image_check.c).
 * A state file holds images that anyone able to write the file may craft;
 * each corruption of the table below leads a check, an introspection
 * call or a preference answer outside the image, into a loop without end
 * or into a value JSON cannot carry, and must be refused by
 * robots_from_image(). The image they start from loads.
 */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "robots_int.h"
#include "test_main.h"

/* A writable table of r. */
#define TAB(r, type, off) ((type *)(void *)((char *)(r) + (off)))
#define SLOTS(r) ((uint32_t *)(void *)((r) + 1))

/*
 * Every table in use: agent a is named by two groups (two lists, so the
 * lists and agent_lists tables), the first group's list is long enough
 * for an index with nested prefixes, '*', a sitemap, preference lines, an
 * extra line and a warning.
 */
static const char body[] = "Content-Signal: search=yes\n"
                           "User-agent: a\nUser-agent: b\n"
                           "Disallow: /p\nDisallow: /p/a\nDisallow: /p/a/b\n"
                           "Disallow: /q1\nDisallow: /q2\nDisallow: /q3\n"
                           "Disallow: /q4\nDisallow: /q5\nDisallow: /q6\n"
                           "Allow: /p/a/*x$\n"
                           "Content-Usage: train-ai=n\nCrawl-delay: 2\n"
                           "X-Extra: v\n"
                           "\nUser-agent: a\nDisallow: /r\n"
                           "\nUser-agent: *\nDisallow: /z\n"
                           "Content-Usage: bogus=1\n"
                           "Sitemap: https://x.test/s.xml\n";

/* Bytes of r's main text. */
static uint32_t
text_len(const struct robots *r)
{
	return (r->prefs > ROBOTS_PREFS_EMPTY ? r->prefs : r->memsize) -
	       r->text;
}

/* r's lists table. */
static struct robots_list *
lists(struct robots *r)
{
	return TAB(r, struct robots_list, r->lists);
}

/* The first list of the lists table that has an index. */
static struct robots_list *
indexed(struct robots *r)
{
	size_t i, n = (r->nodes - r->lists) / sizeof(struct robots_list);

	for (i = 0; i < n; i++)
		if (lists(r)[i].nnodes >= 3)
			return &lists(r)[i];
	ck_abort_msg("no list with an index");
	return NULL;
}

/* The nodes of list l. */
static struct robots_node *
nodes(struct robots *r, const struct robots_list *l)
{
	return (struct robots_node *)(void *)(TAB(r, uint64_t, r->nodes) +
	                                      l->node_first + l->nnodes);
}

static struct robots_agent_rules *
agents(struct robots *r)
{
	return TAB(r, struct robots_agent_rules, robots_agents_off(r));
}

static struct robots_crule *
rules(struct robots *r)
{
	return TAB(r, struct robots_crule, r->rules);
}

static struct robots_prefs *
prefs(struct robots *r)
{
	return TAB(r, struct robots_prefs, r->prefs);
}

static struct robots_pstmt *
stmts(struct robots *r)
{
	return TAB(r, struct robots_pstmt, prefs(r)->stmts);
}

/* The agent that has several lists. */
static struct robots_merged *
several(struct robots *r)
{
	uint32_t i;

	for (i = 0; i < r->nagents; i++)
		if (agents(r)[i].rules.nlists > 1)
			return &agents(r)[i].rules;
	ck_abort_msg("no agent with several lists");
	return NULL;
}

/* clang-format off */
static void rule_pat_past_text(struct robots *r) { rules(r)[0].pat = text_len(r); }
static void rule_src_past_text(struct robots *r) { rules(r)[1].src_len = UINT16_MAX; }
static void rule_lit_past_pat(struct robots *r) { rules(r)[0].lit_len = rules(r)[0].pat_len + 1; }
static void rule_allow_2(struct robots *r) { rules(r)[0].allow = 2; }
static void idx_past_rules(struct robots *r) { TAB(r, uint32_t, r->idx)[0] = r->nrules; }
static void list_past_idx(struct robots *r) { indexed(r)->count = UINT32_MAX; }
static void whole_table_past_rules(struct robots *r) { r->global.list.node_first = ROBOTS_WHOLE_TABLE; r->global.list.count = r->nrules + 1; }
static void whole_table_with_nodes(struct robots *r) { indexed(r)->node_first = ROBOTS_WHOLE_TABLE; }
static void nodes_past_table(struct robots *r) { indexed(r)->node_first = (r->idx - r->nodes) / 8; }
static void node_lit_past_text(struct robots *r) { nodes(r, indexed(r))[0].lit = text_len(r); }
static void node_parent_itself(struct robots *r) { nodes(r, indexed(r))[1].parent = 1; }
static void node_parent_after(struct robots *r) { nodes(r, indexed(r))[0].parent = 2; }
static void node_first_past_list(struct robots *r) { nodes(r, indexed(r))[1].first = indexed(r)->count; }
static void agent_list_past_lists(struct robots *r) { TAB(r, uint32_t, robots_agent_lists_off(r))[several(r)->list_first] = 1000; }
static void agent_lists_past_table(struct robots *r) { several(r)->list_first = UINT32_MAX - 1; }
static void slot_past_agents(struct robots *r) { SLOTS(r)[0] = r->nagents + 1; }
static void slot_mask_not_power(struct robots *r) { r->slot_mask = 2; }
static void agent_name_past_text(struct robots *r) { agents(r)[0].name.len = text_len(r) + 1; }
static void agent_delay_inf(struct robots *r) { agents(r)[0].rules.crawl_delay = INFINITY; }
static void global_delay_nan(struct robots *r) { r->global.crawl_delay = NAN; }
static void group_delay_inf(struct robots *r) { TAB(r, struct robots_group, r->groups)[0].crawl_delay = INFINITY; }
static void group_agents_past(struct robots *r) { TAB(r, struct robots_group, r->groups)[0].agent_count = 1000; }
static void gagent_past_text(struct robots *r) { TAB(r, struct robots_span, r->gagents)[0].off = text_len(r); TAB(r, struct robots_span, r->gagents)[0].len = 1; }
static void sitemap_past_text(struct robots *r) { TAB(r, struct robots_span, r->sitemaps)[0].len = text_len(r) + 1; }
static void groups_misaligned(struct robots *r) { r->groups += 4; r->ngroups--; }
static void stmt_pat_past(struct robots *r) { stmts(r)[0].m.pat = prefs(r)->end - prefs(r)->text; }
static void stmt_value_past(struct robots *r) { stmts(r)[0].value_len = UINT32_MAX; }
static void stmt_kind_2(struct robots *r) { stmts(r)[0].kind = 2; }
static void stmt_pref_3(struct robots *r) { stmts(r)[0].pref[0] = 3; }
static void gslice_past_stmts(struct robots *r) { TAB(r, uint32_t, prefs(r)->gslices)[1] = prefs(r)->nstmts + 1; }
static void agent_sel_past_sel(struct robots *r) { TAB(r, uint32_t, prefs(r)->agent_sel)[0] = prefs(r)->nsel; TAB(r, uint32_t, prefs(r)->agent_sel)[1] = 1; }
static void sel_past_groups(struct robots *r) { TAB(r, uint32_t, prefs(r)->sel)[0] = r->ngroups; }
static void extra_past_text(struct robots *r) { TAB(r, struct robots_pextra, prefs(r)->extras)[0].value.off = UINT32_MAX; }
static void extra_group_past(struct robots *r) { TAB(r, struct robots_pextra, prefs(r)->extras)[0].group1 = r->ngroups + 1; }
static void warn_code_past(struct robots *r) { TAB(r, struct robots_pwarn, prefs(r)->warns)[0].code = RW_CODES; }
/* clang-format on */

/* Every slot taken: a probe for an unknown agent would never end. */
static void
slots_full(struct robots *r)
{
	uint32_t i;

	for (i = 0; i <= r->slot_mask; i++)
		if (SLOTS(r)[i] == 0)
			SLOTS(r)[i] = 1;
}

/* clang-format off */
#define C(f) { #f, f }
/* clang-format on */
static const struct corruption {
	const char *name;
	void (*apply)(struct robots *);
} corruptions[] = {
	C(rule_pat_past_text),
	C(rule_src_past_text),
	C(rule_lit_past_pat),
	C(rule_allow_2),
	C(idx_past_rules),
	C(list_past_idx),
	C(whole_table_past_rules),
	C(whole_table_with_nodes),
	C(nodes_past_table),
	C(node_lit_past_text),
	C(node_parent_itself),
	C(node_parent_after),
	C(node_first_past_list),
	C(agent_list_past_lists),
	C(agent_lists_past_table),
	C(slot_past_agents),
	C(slot_mask_not_power),
	C(slots_full),
	C(agent_name_past_text),
	C(agent_delay_inf),
	C(global_delay_nan),
	C(group_delay_inf),
	C(group_agents_past),
	C(gagent_past_text),
	C(sitemap_past_text),
	C(groups_misaligned),
	C(stmt_pat_past),
	C(stmt_value_past),
	C(stmt_kind_2),
	C(stmt_pref_3),
	C(gslice_past_stmts),
	C(agent_sel_past_sel),
	C(sel_past_groups),
	C(extra_past_text),
	C(extra_group_past),
	C(warn_code_past),
#undef C
};

/* A writable copy of the image of body's ruleset; *len its size. */
static struct robots *
image_copy(size_t *len)
{
	struct robots *r = robots_parse(body, sizeof(body) - 1);
	const void *img;
	void *copy;

	ck_assert_ptr_nonnull(r);
	img = robots_image(r, len);
	ck_assert_ptr_nonnull(copy = malloc(*len));
	memcpy(copy, img, *len);
	robots_unref(r);
	return copy;
}

START_TEST(test_the_image_uses_every_table_and_loads)
{
	size_t len;
	struct robots *r = image_copy(&len), *back;

	ck_assert_uint_ge(r->nagents, 2);
	ck_assert_uint_eq(several(r)->nlists, 2);
	ck_assert_uint_ne(nodes(r, indexed(r))[1].parent, ROBOTS_NONE);
	ck_assert_uint_gt(r->prefs, ROBOTS_PREFS_EMPTY);
	ck_assert_uint_ge(prefs(r)->nstmts, 2);
	ck_assert_uint_ge(prefs(r)->nsel, 1);
	ck_assert_uint_ge(prefs(r)->nextras, 1);
	ck_assert_uint_ge(prefs(r)->nwarns, 1);
	ck_assert_uint_eq(r->nsitemaps, 1);
	ck_assert_ptr_nonnull(back = robots_adopt_image(r, len));
	robots_unref(back);
}
END_TEST

START_TEST(test_each_corruption_is_refused)
{
	size_t len;
	struct robots *r = image_copy(&len);

	corruptions[_i].apply(r);
	ck_assert_msg(robots_adopt_image(r, len) == NULL, "%s: loaded",
	    corruptions[_i].name);
}
END_TEST

static Suite *
image_suite(void)
{
	Suite *s = suite_create("image");
	TCase *t = tcase_create("image");

	tcase_add_test(t, test_the_image_uses_every_table_and_loads);
	tcase_add_loop_test(t, test_each_corruption_is_refused, 0,
	    (int)(sizeof(corruptions) / sizeof(corruptions[0])));
	suite_add_tcase(s, t);
	return s;
}

TEST_PROGRAM(image_suite, NULL, NULL);
