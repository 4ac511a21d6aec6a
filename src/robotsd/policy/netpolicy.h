/*
 * netpolicy.h: which addresses robotsd may fetch from. The non-public
 * address classes refused under --deny-private-addresses, and the
 * --connect-to "HOST:PORT:HOST2:PORT2" entries (one parser for the option
 * check and for the fetch-time match; reaching an address through an entry
 * exempts it). Pure: no I/O, no state, nothing allocated.
 */
#ifndef ROBOTSD_NETPOLICY_H
#define ROBOTSD_NETPOLICY_H

#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

/*
 * 1 when the IPv4 address (host byte order) is not on the public Internet:
 * 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24,
 * 192.0.2/24, 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24,
 * 203.0.113/24 and everything from 224/4 up (multicast, reserved,
 * broadcast).
 */
/*
 * May a client whose socket peer has uid and gid (SO_PEERCRED) and the
 * supplementary groups (SO_PEERGROUPS, n of them) run admin ops (purge)?
 * Yes for root, for robotsd's own uid (self), and for members of
 * admin_gid (its primary group or a supplementary one); admin_gid -1 is
 * no such group.
 */
int netpolicy_peer_admin(unsigned uid, unsigned gid, const unsigned *groups,
    size_t n, unsigned self, long admin_gid);

int netpolicy_private_v4(uint32_t addr);
/*
 * 1 when the IPv6 address (16 bytes, network order) is not public: ::/96
 * (::, ::1, v4-compatible), 100::/64, 2001:2::/48, 2001:db8::/32, fc00::/7,
 * fe80::/10, fec0::/10, ff00::/8, 64:ff9b:1::/48; and, by the IPv4 address
 * they carry, ::ffff:a.b.c.d, 64:ff9b::a.b.c.d (NAT64) and 2002:AABB:CCDD::/48
 * (6to4).
 */
int netpolicy_private_v6(const unsigned char *addr);
/* The same for a socket address; any family but AF_INET/AF_INET6 is 1. */
int netpolicy_private_sa(const struct sockaddr *);

/*
 * One --connect-to entry, pointing into the string it was parsed from.
 * host/host2 keep IPv6 brackets; an empty host or a port of 0 is "any"
 * (host2/port2: "keep the URL's").
 */
struct netpolicy_ct {
	const char *host;
	size_t host_len;
	long port;
	const char *host2;
	size_t host2_len;
	long port2;
};

/*
 * Parse "HOST:PORT:HOST2:PORT2" like curl's --connect-to: each field may
 * be empty; a host is a bracketed non-empty IPv6 literal or a name without
 * ':', '[', ']', '/', space or tab; a port is decimal 1..65535. out may be
 * NULL to only validate. 0, or -1 when spec is not that shape.
 */
int netpolicy_ct_parse(const char *spec, struct netpolicy_ct *out);
/*
 * 1 when the entry applies to a URL's host (as curl spells it: IPv6 in
 * brackets; compared without regard to case) and port.
 */
int netpolicy_ct_match(
    const struct netpolicy_ct *, const char *host, long port);
/* 1 when any entry of the NULL-terminated list applies; bad entries never. */
int netpolicy_ct_any(char *const *specs, const char *host, long port);

#endif /* ROBOTSD_NETPOLICY_H */
