/*
 * parse.h: strict parsing of the values options take: decimal and octal
 * integers, byte sizes with a K/M/G suffix, yes/no, and HOST:PORT addresses.
 * Pure: no I/O, no state. Durations are plain decimal seconds (parse_num):
 * robotsd.conf(5) gives them no unit suffix.
 *
 * Every number parser accepts only digits (no sign, no spaces, no "0x"),
 * returns the value and sets *errstr to NULL when it lies in [min, max], and
 * otherwise returns 0 with *errstr "invalid", "too small" or "too large".
 */
#ifndef ROBOTSD_PARSE_H
#define ROBOTSD_PARSE_H

#define PARSE_KIB 1024LL
#define PARSE_MIB (1024 * PARSE_KIB)
#define PARSE_GIB (1024 * PARSE_MIB)

/* A decimal integer in [min, max]. */
long long parse_num(
    const char *s, long long min, long long max, const char **errstr);
/* An octal integer in [min, max] (file modes). */
long long parse_octal(
    const char *s, long long min, long long max, const char **errstr);
/*
 * A byte count, decimal, optionally followed by one K, M or G (either case,
 * binary multiples), in [min, max]; max must be >= 0.
 */
long long parse_size(
    const char *s, long long min, long long max, const char **errstr);
/* "yes" to 1, "no" to 0, anything else -1. */
int parse_bool(const char *s);
/* --tdmrep: "on-demand" to 0, "always" to 1, "off" to 2, else -1. */
int parse_tdmrep(const char *s);
/*
 * Split "HOST:PORT" or "[V6]:PORT" (PORT 1..65535; a bare IPv6 address
 * needs its brackets). host (allocated, without brackets) and port may be
 * NULL to only validate. -1 when addr is not that shape.
 */
int parse_hostport(const char *addr, char **host, unsigned short *port);

#endif /* ROBOTSD_PARSE_H */
