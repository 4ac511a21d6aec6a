/*
 * sfv.h: an RFC 9651 Structured Field Values parser (Dictionaries, Lists
 * and Items), pure and without allocation: the parse is written as a flat
 * array of nodes in the caller's memory, pointing into the input.
 *
 * All RFC 9651 bare item types are read: Integer, Decimal, String, Token,
 * Byte Sequence, Boolean, Date ("@" Integer) and Display String ('%"',
 * lower-case %XX escapes of valid UTF-8). Any failure fails the whole
 * field, as section 4.2 requires. Duplicate keys are kept in the output in
 * the order written; a reader takes the last (RFC 9651: a later duplicate
 * overwrites the value).
 */
#ifndef ROBOTS_SFV_H
#define ROBOTS_SFV_H

#include <stddef.h>
#include <stdint.h>

enum sfv_type {
	SFV_INTEGER,
	SFV_DECIMAL, /* i is the value times 1000 */
	SFV_STRING,  /* s: between the quotes, escapes kept */
	SFV_TOKEN,
	SFV_BINARY,     /* s: the base64 between the colons */
	SFV_BOOLEAN,    /* i is 0 or 1 */
	SFV_DATE,       /* i: seconds since the epoch */
	SFV_DISPLAY,    /* s: between the quotes, %xx escapes kept */
	SFV_INNER_LIST, /* i: its items, which follow it */
};

enum sfv_role {
	SFV_MEMBER,     /* of a Dictionary or List; key NULL in a List */
	SFV_INNER_ITEM, /* an item of the inner list before it */
	SFV_PARAM,      /* a parameter of the member or item before it */
};

/*
 * In pre-order: a member; if it is an inner list, each item followed by
 * its parameters; then the member's parameters.
 */
struct sfv_node {
	enum sfv_role role;
	enum sfv_type type;
	const char *key; /* Dictionary members and parameters */
	size_t key_len;
	const char *s; /* string-like types */
	size_t len;
	int64_t i;      /* numbers, Boolean, Date; an inner list's item count */
	size_t nparams; /* members and items */
};

/*
 * Parse s (len bytes) as a Dictionary, a List or an Item (RFC 9651 4.2).
 * At most max nodes are written (nodes may be NULL when max is 0); *n is
 * set to the number the field has. Returns 0, or -1 when the field does
 * not parse (then *n means nothing).
 */
int robots_sfv_parse_dict(
    const char *s, size_t len, struct sfv_node *nodes, size_t max, size_t *n);
int robots_sfv_parse_list(
    const char *s, size_t len, struct sfv_node *nodes, size_t max, size_t *n);
int robots_sfv_parse_item(
    const char *s, size_t len, struct sfv_node *nodes, size_t max, size_t *n);

/*
 * The value of a String (escapes removed), Display String (UTF-8) or Byte
 * Sequence (decoded) node into out, which holds node->len bytes; returns
 * the length. Other types give 0.
 */
size_t robots_sfv_decode(const struct sfv_node *, char *out);

#endif /* ROBOTS_SFV_H */
