/*
 * tier_url.h: the --redis URL. Pure: no I/O.
 *
 *   redis://[USERINFO@]HOST[:PORT][/DB]      TCP; PORT 6379, DB 0 by default
 *   rediss://[USERINFO@]HOST[:PORT][/DB]     the same over TLS
 *   unix://[USERINFO@]/PATH[?db=N]           Unix socket at the absolute PATH
 *
 * USERINFO is ":PASSWORD" (AUTH PASSWORD: the default user), "USER:PASSWORD"
 * (AUTH USER PASSWORD: a Redis 6 ACL user) or "USER" (its password from
 * --redis-password-file). HOST is a name, an IPv4 address or an IPv6
 * address in brackets. The user name and password may hold %XX escapes
 * (e.g. %40 for '@', %3A for ':').
 */
#ifndef ROBOTSD_TIER_URL_H
#define ROBOTSD_TIER_URL_H

#define TIER_URL_MAX_DB 2147483647
/* --redis URLs at most: stats and /metrics show each server's state. */
#define TIER_MAX_SERVERS 32

struct tier_url {
	int is_unix;
	char *host;     /* TCP: name or address (no brackets); else NULL */
	int port;       /* TCP */
	int tls;        /* rediss:// */
	char *path;     /* Unix socket; else NULL */
	char *user;     /* ACL user for AUTH; NULL: the default user */
	char *password; /* NULL: no AUTH */
	int db;         /* SELECT db when not 0 */
	char *name; /* canonical URL without user or password (logs, hashing) */
};

/*
 * Parse s into *u (strings malloc'd; free with tier_url_clear). 0, or -1
 * with *err set to a static message naming what is wrong.
 */
int tier_url_parse(const char *s, struct tier_url *u, const char **err);
void tier_url_clear(struct tier_url *); /* NULL is fine */
/*
 * s, for a message: everything between "://" (or the start) and its last
 * '@' replaced by "***", so no password, even in a URL that does not
 * parse, is ever shown. malloc'd; NULL when memory runs out.
 */
char *tier_url_masked(const char *s);

#endif /* ROBOTSD_TIER_URL_H */
