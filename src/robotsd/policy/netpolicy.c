/*
 * netpolicy.c: non-public address classes and --connect-to entries; see
 * netpolicy.h. fetch.c asks it before every connect, options.c checks each
 * --connect-to value with the same parser.
 */
#include <config.h>

#include <sys/socket.h>

#include <netinet/in.h>

#include <string.h>
#include <strings.h>

#include "policy/netpolicy.h"
#include "policy/parse.h"

int
netpolicy_private_v4(uint32_t a)
{
	return (a >> 24) == 0 ||                 /* 0.0.0.0/8 "this network" */
	       (a >> 24) == 10 ||                /* 10/8 */
	       (a >> 24) == 127 ||               /* loopback */
	       (a & 0xffc00000) == 0x64400000 || /* 100.64/10 CGNAT */
	       (a & 0xffff0000) == 0xa9fe0000 || /* 169.254/16 link-local */
	       (a & 0xfff00000) == 0xac100000 || /* 172.16/12 */
	       (a & 0xffffff00) == 0xc0000000 || /* 192.0.0/24 IETF */
	       (a & 0xffffff00) == 0xc0000200 || /* 192.0.2/24 TEST-NET-1 */
	       (a & 0xffffff00) == 0xc0586300 || /* 192.88.99/24 6to4 relay */
	       (a & 0xffff0000) == 0xc0a80000 || /* 192.168/16 */
	       (a & 0xfffe0000) == 0xc6120000 || /* 198.18/15 benchmarking */
	       (a & 0xffffff00) == 0xc6336400 || /* 198.51.100/24 TEST-NET-2 */
	       (a & 0xffffff00) == 0xcb007100 || /* 203.0.113/24 TEST-NET-3 */
	       (a >> 28) >= 0xe; /* multicast, reserved, bcast */
}

/* The IPv4 address in b[0..3], network order. */
static uint32_t
netpolicy_v4_at(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

int
netpolicy_private_v6(const unsigned char *b)
{
	static const unsigned char zero[12];
	uint32_t v4 = netpolicy_v4_at(b + 12);

	if (memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff)
		return netpolicy_private_v4(v4); /* ::ffff:a.b.c.d */
	if (memcmp(b, zero, 12) == 0)
		return 1; /* ::, ::1, v4-compatible */
	if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
		if (memcmp(b + 4, zero, 8) == 0) /* 64:ff9b::/96 NAT64 */
			return netpolicy_private_v4(v4);
		if (b[4] == 0x00 && b[5] == 0x01)
			return 1; /* 64:ff9b:1::/48 local-use NAT64 */
	}
	if (b[0] == 0x20 && b[1] == 0x02) /* 2002::/16 6to4 */
		return netpolicy_private_v4(netpolicy_v4_at(b + 2));
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return 1; /* 2001:db8::/32 documentation */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x02 &&
	    b[4] == 0x00 && b[5] == 0x00)
		return 1; /* 2001:2::/48 benchmarking */
	if (b[0] == 0x01 && b[1] == 0x00 && memcmp(b + 2, zero, 6) == 0)
		return 1;                                 /* 100::/64 discard */
	return (b[0] & 0xfe) == 0xfc ||                   /* fc00::/7 ULA */
	       (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || /* fe80::/10 */
	       (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) || /* fec0::/10 site */
	       b[0] == 0xff;                              /* multicast */
}

int
netpolicy_private_sa(const struct sockaddr *sa)
{
	const struct sockaddr_in *in4;
	const struct sockaddr_in6 *in6;

	switch (sa->sa_family) {
	case AF_INET:
		in4 = (const struct sockaddr_in *)(const void *)sa;
		return netpolicy_private_v4(ntohl(in4->sin_addr.s_addr));
	case AF_INET6:
		in6 = (const struct sockaddr_in6 *)(const void *)sa;
		return netpolicy_private_v6(in6->sin6_addr.s6_addr);
	}
	return 1; /* anything else is not the public Internet */
}

/* A host field at s: its end (at the ':' after it), or NULL. */
static const char *
netpolicy_ct_host(const char *s)
{
	const char *end;

	if (*s == '[') {
		end = s + 1 + strcspn(s + 1, "[] \t/");
		if (*end != ']' || end == s + 1)
			return NULL;
		end++;
	} else
		end = s + strcspn(s, ":[] \t/");
	return *end == ':' ? end : NULL;
}

/* A port field of len bytes at s: 0 when empty, 1..65535, or -1. */
static long
netpolicy_ct_port(const char *s, size_t len)
{
	char buf[8];
	const char *errstr;
	long long p;

	if (len == 0)
		return 0;
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	p = parse_num(buf, 1, 65535, &errstr);
	return errstr == NULL ? (long)p : -1;
}

int
netpolicy_ct_parse(const char *s, struct netpolicy_ct *out)
{
	struct netpolicy_ct ct;
	const char *end;
	size_t plen;

	if ((end = netpolicy_ct_host(s)) == NULL)
		return -1;
	ct.host = s;
	ct.host_len = (size_t)(end - s);
	s = end + 1;
	plen = strcspn(s, ":");
	if (s[plen] != ':' || (ct.port = netpolicy_ct_port(s, plen)) == -1)
		return -1;
	s += plen + 1;
	if ((end = netpolicy_ct_host(s)) == NULL)
		return -1;
	ct.host2 = s;
	ct.host2_len = (size_t)(end - s);
	s = end + 1;
	if ((ct.port2 = netpolicy_ct_port(s, strlen(s))) == -1)
		return -1;
	if (out != NULL)
		*out = ct;
	return 0;
}

int
netpolicy_ct_match(const struct netpolicy_ct *ct, const char *host, long port)
{
	if (ct->host_len != 0 &&
	    (strlen(host) != ct->host_len ||
	        strncasecmp(host, ct->host, ct->host_len) != 0))
		return 0;
	return ct->port == 0 || ct->port == port;
}

int
netpolicy_ct_any(char *const *specs, const char *host, long port)
{
	struct netpolicy_ct ct;
	size_t i;

	for (i = 0; specs[i] != NULL; i++) {
		if (netpolicy_ct_parse(specs[i], &ct) == 0 &&
		    netpolicy_ct_match(&ct, host, port))
			return 1;
	}
	return 0;
}

/* See netpolicy.h. */
int
netpolicy_peer_admin(unsigned uid, unsigned gid, const unsigned *groups,
    size_t n, unsigned self, long admin_gid)
{
	size_t i;

	if (uid == 0 || uid == self)
		return 1;
	if (admin_gid < 0)
		return 0;
	if (gid == (unsigned long)admin_gid)
		return 1;
	for (i = 0; i < n; i++)
		if (groups[i] == (unsigned long)admin_gid)
			return 1;
	return 0;
}
