/*
 * sfv.c: RFC 9651 Structured Field Values parsing (sfv.h), following the
 * algorithms of its section 4.2 step by step.
 */
#include <config.h>

#include <string.h>

#include "sfv.h"

struct sfv_in {
	const char *p, *end;
	struct sfv_node *nodes;
	size_t max, n;
};

/* A new node (written only while there is room); its index. */
static size_t
sfv_node_add(
    struct sfv_in *in, enum sfv_role role, const char *key, size_t key_len)
{
	size_t k = in->n++;

	if (k < in->max) {
		memset(&in->nodes[k], 0, sizeof(in->nodes[k]));
		in->nodes[k].role = role;
		in->nodes[k].key = key;
		in->nodes[k].key_len = key_len;
	}
	return k;
}

static struct sfv_node *
sfv_at(struct sfv_in *in, size_t k)
{
	static struct sfv_node sink; /* written, never read */

	return k < in->max ? &in->nodes[k] : &sink;
}

static int
sfv_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
sfv_is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
sfv_is_lcalpha(int c)
{
	return c >= 'a' && c <= 'z';
}

/* RFC 9110 tchar. */
static int
sfv_is_tchar(int c)
{
	return sfv_is_alpha(c) || sfv_is_digit(c) ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
sfv_peek(const struct sfv_in *in)
{
	return in->p < in->end ? (unsigned char)*in->p : -1;
}

static void
sfv_skip_sp(struct sfv_in *in)
{
	while (in->p < in->end && *in->p == ' ')
		in->p++;
}

static void
sfv_skip_ows(struct sfv_in *in)
{
	while (in->p < in->end && (*in->p == ' ' || *in->p == '\t'))
		in->p++;
}

/* 4.2.3.3 Parsing a Key. */
static int
sfv_parse_key(struct sfv_in *in, const char **key, size_t *len)
{
	const char *s = in->p;
	int c = sfv_peek(in);

	if (!sfv_is_lcalpha(c) && c != '*')
		return -1;
	for (in->p++; (c = sfv_peek(in)) >= 0; in->p++)
		if (!sfv_is_lcalpha(c) && !sfv_is_digit(c) && c != '_' &&
		    c != '-' && c != '.' && c != '*')
			break;
	*key = s;
	*len = (size_t)(in->p - s);
	return 0;
}

/* 4.2.4 Parsing an Integer or a Decimal; v->i, v->type. */
static int
sfv_parse_number(struct sfv_in *in, struct sfv_node *v)
{
	int64_t sign = 1, ip = 0, fp = 0;
	size_t digits = 0, frac = 0;
	int decimal = 0, c;

	if (sfv_peek(in) == '-') {
		sign = -1;
		in->p++;
	}
	if (!sfv_is_digit(sfv_peek(in)))
		return -1;
	while ((c = sfv_peek(in)) >= 0) {
		if (sfv_is_digit(c)) {
			if (decimal) {
				fp = fp * 10 + (c - '0');
				frac++;
			} else
				ip = ip * 10 + (c - '0');
			digits++;
		} else if (!decimal && c == '.') {
			if (digits > 12)
				return -1;
			decimal = 1;
		} else
			break;
		in->p++;
		if (!decimal && digits > 15)
			return -1;
		if (decimal && digits + 1 > 16)
			return -1;
	}
	if (!decimal) {
		v->type = SFV_INTEGER;
		v->i = sign * ip;
		return 0;
	}
	if (frac == 0 || frac > 3)
		return -1;
	while (frac++ < 3)
		fp *= 10;
	v->type = SFV_DECIMAL;
	v->i = sign * (ip * 1000 + fp);
	return 0;
}

/* 4.2.5 Parsing a String. */
static int
sfv_parse_string(struct sfv_in *in, struct sfv_node *v)
{
	const char *s = ++in->p;
	int c;

	while ((c = sfv_peek(in)) >= 0) {
		in->p++;
		if (c == '\\') {
			c = sfv_peek(in);
			if (c != '"' && c != '\\')
				return -1;
			in->p++;
		} else if (c == '"') {
			v->type = SFV_STRING;
			v->s = s;
			v->len = (size_t)(in->p - 1 - s);
			return 0;
		} else if (c < 0x20 || c > 0x7e)
			return -1;
	}
	return -1;
}

/* 4.2.6 Parsing a Token. */
static void
sfv_parse_token(struct sfv_in *in, struct sfv_node *v)
{
	const char *s = in->p;
	int c;

	for (in->p++; (c = sfv_peek(in)) >= 0; in->p++)
		if (!sfv_is_tchar(c) && c != ':' && c != '/')
			break;
	v->type = SFV_TOKEN;
	v->s = s;
	v->len = (size_t)(in->p - s);
}

/* The value of a base64 character, or -1. */
static int
sfv_b64(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (sfv_is_digit(c))
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * 4.2.7 Parsing a Byte Sequence. Base64 must decode: '=' only as the
 * last one or two characters of a complete quantum, never a lone
 * character in the last quantum; missing padding and non-zero pad bits
 * are accepted (SHOULD NOT fail).
 */
static int
sfv_parse_binary(struct sfv_in *in, struct sfv_node *v)
{
	const char *s = ++in->p, *e;
	size_t n, pad = 0, i;

	if ((e = memchr(s, ':', (size_t)(in->end - s))) == NULL)
		return -1;
	n = (size_t)(e - s);
	while (pad < n && pad < 2 && s[n - 1 - pad] == '=')
		pad++;
	if (pad > 0 && n % 4 != 0)
		return -1;
	for (i = 0; i < n - pad; i++)
		if (sfv_b64((unsigned char)s[i]) < 0)
			return -1;
	if ((n - pad) % 4 == 1)
		return -1;
	in->p = e + 1;
	v->type = SFV_BINARY;
	v->s = s;
	v->len = n;
	return 0;
}

/* 4.2.8 Parsing a Boolean. */
static int
sfv_parse_boolean(struct sfv_in *in, struct sfv_node *v)
{
	int c;

	in->p++;
	c = sfv_peek(in);
	if (c != '0' && c != '1')
		return -1;
	in->p++;
	v->type = SFV_BOOLEAN;
	v->i = c == '1';
	return 0;
}

/* 4.2.9 Parsing a Date. */
static int
sfv_parse_date(struct sfv_in *in, struct sfv_node *v)
{
	in->p++;
	if (sfv_parse_number(in, v) != 0 || v->type != SFV_INTEGER)
		return -1;
	v->type = SFV_DATE;
	return 0;
}

static int
sfv_hexval(int c)
{
	if (sfv_is_digit(c))
		return c - '0';
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * One byte of UTF-8 into the validator: *need continuation bytes still
 * due, the next in [*lo, *hi]. 0, or -1 when the bytes cannot be UTF-8.
 */
static int
sfv_utf8_step(int b, int *need, int *lo, int *hi)
{
	if (*need > 0) {
		if (b < *lo || b > *hi)
			return -1;
		(*need)--;
		*lo = 0x80, *hi = 0xbf;
		return 0;
	}
	*lo = 0x80, *hi = 0xbf;
	if (b < 0x80)
		return 0;
	if (b >= 0xc2 && b <= 0xdf)
		*need = 1;
	else if (b >= 0xe0 && b <= 0xef) {
		*need = 2;
		if (b == 0xe0)
			*lo = 0xa0;
		else if (b == 0xed)
			*hi = 0x9f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		*need = 3;
		if (b == 0xf0)
			*lo = 0x90;
		else if (b == 0xf4)
			*hi = 0x8f;
	} else
		return -1;
	return 0;
}

/* 4.2.10 Parsing a Display String. */
static int
sfv_parse_display(struct sfv_in *in, struct sfv_node *v)
{
	const char *s;
	int c, h, l, need = 0, lo = 0x80, hi = 0xbf;

	in->p++;
	if (sfv_peek(in) != '"')
		return -1;
	s = ++in->p;
	while ((c = sfv_peek(in)) >= 0) {
		in->p++;
		if (c < 0x20 || c > 0x7e)
			return -1;
		if (c == '%') {
			if (in->end - in->p < 2 ||
			    (h = sfv_hexval((unsigned char)in->p[0])) < 0 ||
			    (l = sfv_hexval((unsigned char)in->p[1])) < 0)
				return -1;
			in->p += 2;
			c = h << 4 | l;
		} else if (c == '"') {
			if (need > 0)
				return -1;
			v->type = SFV_DISPLAY;
			v->s = s;
			v->len = (size_t)(in->p - 1 - s);
			return 0;
		}
		if (sfv_utf8_step(c, &need, &lo, &hi) != 0)
			return -1;
	}
	return -1;
}

/* 4.2.3.1 Parsing a Bare Item into v. */
static int
sfv_parse_bare(struct sfv_in *in, struct sfv_node *v)
{
	int c = sfv_peek(in);

	if (c == '-' || sfv_is_digit(c))
		return sfv_parse_number(in, v);
	if (c == '"')
		return sfv_parse_string(in, v);
	if (c == '*' || sfv_is_alpha(c)) {
		sfv_parse_token(in, v);
		return 0;
	}
	if (c == ':')
		return sfv_parse_binary(in, v);
	if (c == '?')
		return sfv_parse_boolean(in, v);
	if (c == '@')
		return sfv_parse_date(in, v);
	if (c == '%')
		return sfv_parse_display(in, v);
	return -1;
}

/* 4.2.3.2 Parsing Parameters, as nodes after the current ones. */
static int
sfv_parse_params(struct sfv_in *in, size_t owner)
{
	const char *key;
	size_t key_len, k, count = 0;

	while (sfv_peek(in) == ';') {
		in->p++;
		sfv_skip_sp(in);
		if (sfv_parse_key(in, &key, &key_len) != 0)
			return -1;
		k = sfv_node_add(in, SFV_PARAM, key, key_len);
		sfv_at(in, k)->type = SFV_BOOLEAN;
		sfv_at(in, k)->i = 1;
		if (sfv_peek(in) == '=') {
			in->p++;
			if (sfv_parse_bare(in, sfv_at(in, k)) != 0)
				return -1;
		}
		count++;
	}
	sfv_at(in, owner)->nparams = count;
	return 0;
}

/* 4.2.3 Parsing an Item: a bare item and its parameters, into node k. */
static int
sfv_parse_item_at(struct sfv_in *in, size_t k)
{
	if (sfv_parse_bare(in, sfv_at(in, k)) != 0)
		return -1;
	return sfv_parse_params(in, k);
}

/* 4.2.1.2 Parsing an Inner List, into node k. */
static int
sfv_parse_inner(struct sfv_in *in, size_t k)
{
	int64_t count = 0;
	int c;

	in->p++;
	sfv_at(in, k)->type = SFV_INNER_LIST;
	while (in->p < in->end) {
		sfv_skip_sp(in);
		if (sfv_peek(in) == ')') {
			in->p++;
			sfv_at(in, k)->i = count;
			return sfv_parse_params(in, k);
		}
		if (sfv_parse_item_at(
		        in, sfv_node_add(in, SFV_INNER_ITEM, NULL, 0)) != 0)
			return -1;
		count++;
		c = sfv_peek(in);
		if (c != ' ' && c != ')')
			return -1;
	}
	return -1;
}

/* 4.2.1.1 Parsing an Item or Inner List, into node k. */
static int
sfv_parse_member(struct sfv_in *in, size_t k)
{
	if (sfv_peek(in) == '(')
		return sfv_parse_inner(in, k);
	return sfv_parse_item_at(in, k);
}

/* 4.2.1 / 4.2.2: the members of a List or Dictionary. */
static int
sfv_parse_members(struct sfv_in *in, int dict)
{
	const char *key = NULL;
	size_t key_len = 0, k;

	while (in->p < in->end) {
		if (dict) {
			if (sfv_parse_key(in, &key, &key_len) != 0)
				return -1;
			k = sfv_node_add(in, SFV_MEMBER, key, key_len);
			if (sfv_peek(in) == '=') {
				in->p++;
				if (sfv_parse_member(in, k) != 0)
					return -1;
			} else {
				sfv_at(in, k)->type = SFV_BOOLEAN;
				sfv_at(in, k)->i = 1;
				if (sfv_parse_params(in, k) != 0)
					return -1;
			}
		} else if (sfv_parse_member(
		               in, sfv_node_add(in, SFV_MEMBER, NULL, 0)) != 0)
			return -1;
		sfv_skip_ows(in);
		if (in->p == in->end)
			return 0;
		if (*in->p != ',')
			return -1;
		in->p++;
		sfv_skip_ows(in);
		if (in->p == in->end) /* a trailing comma */
			return -1;
	}
	return 0;
}

enum sfv_field { FIELD_DICT, FIELD_LIST, FIELD_ITEM };

/* 4.2 Parsing Structured Fields. */
static int
sfv_parse_field(const char *s, size_t len, struct sfv_node *nodes, size_t max,
    size_t *n, enum sfv_field f)
{
	struct sfv_in in = { s, s + len, nodes, nodes != NULL ? max : 0, 0 };
	int rc;

	sfv_skip_sp(&in);
	if (f == FIELD_ITEM)
		rc = sfv_parse_item_at(
		    &in, sfv_node_add(&in, SFV_MEMBER, NULL, 0));
	else
		rc = sfv_parse_members(&in, f == FIELD_DICT);
	sfv_skip_sp(&in);
	if (rc != 0 || in.p != in.end)
		return -1;
	*n = in.n;
	return 0;
}

int
robots_sfv_parse_dict(
    const char *s, size_t len, struct sfv_node *nodes, size_t max, size_t *n)
{
	return sfv_parse_field(s, len, nodes, max, n, FIELD_DICT);
}

int
robots_sfv_parse_list(
    const char *s, size_t len, struct sfv_node *nodes, size_t max, size_t *n)
{
	return sfv_parse_field(s, len, nodes, max, n, FIELD_LIST);
}

int
robots_sfv_parse_item(
    const char *s, size_t len, struct sfv_node *nodes, size_t max, size_t *n)
{
	return sfv_parse_field(s, len, nodes, max, n, FIELD_ITEM);
}

size_t
robots_sfv_decode(const struct sfv_node *v, char *out)
{
	size_t i, o = 0;
	unsigned acc = 0;
	int bits = 0, d;

	switch (v->type) {
	case SFV_STRING:
		for (i = 0; i < v->len; i++) {
			if (v->s[i] == '\\')
				i++;
			out[o++] = v->s[i];
		}
		return o;
	case SFV_DISPLAY:
		for (i = 0; i < v->len; i++) {
			if (v->s[i] == '%') {
				out[o++] =
				    (char)(sfv_hexval(
				               (unsigned char)v->s[i + 1])
				               << 4 |
				           sfv_hexval(
				               (unsigned char)v->s[i + 2]));
				i += 2;
			} else
				out[o++] = v->s[i];
		}
		return o;
	case SFV_BINARY:
		for (i = 0; i < v->len; i++) {
			if ((d = sfv_b64((unsigned char)v->s[i])) < 0)
				break;
			acc = (acc << 6 | (unsigned)d) & 0xffffff;
			if ((bits += 6) >= 8) {
				bits -= 8;
				out[o++] = (char)(acc >> bits & 0xff);
			}
		}
		return o;
	default:
		return 0;
	}
}
