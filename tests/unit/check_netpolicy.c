/*
 * check_netpolicy.c: the network policy (netpolicy.c). Every non-public
 * address class with the addresses just inside and just outside each end;
 * each IPv4 row also through a sockaddr and in the IPv6 forms that carry an
 * IPv4 address (::ffff:a.b.c.d, NAT64, 6to4); every --connect-to shape,
 * valid and not, and what an entry matches.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "policy/netpolicy.h"
#include "test_main.h"

#define NROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

struct addr_row {
	const char *addr;
	int private;
};

static const struct addr_row v4_rows[] = {
	{ "0.0.0.0", 1 }, /* 0/8 */
	{ "0.255.255.255", 1 },
	{ "1.0.0.0", 0 },
	{ "9.255.255.255", 0 },
	{ "10.0.0.0", 1 }, /* 10/8 */
	{ "10.255.255.255", 1 },
	{ "11.0.0.0", 0 },
	{ "100.63.255.255", 0 },
	{ "100.64.0.0", 1 }, /* 100.64/10 */
	{ "100.127.255.255", 1 },
	{ "100.128.0.0", 0 },
	{ "126.255.255.255", 0 },
	{ "127.0.0.0", 1 }, /* loopback */
	{ "127.0.0.1", 1 },
	{ "127.255.255.255", 1 },
	{ "128.0.0.0", 0 },
	{ "169.253.255.255", 0 },
	{ "169.254.0.0", 1 }, /* link-local */
	{ "169.254.255.255", 1 },
	{ "169.255.0.0", 0 },
	{ "172.15.255.255", 0 },
	{ "172.16.0.0", 1 }, /* 172.16/12 */
	{ "172.31.255.255", 1 },
	{ "172.32.0.0", 0 },
	{ "191.255.255.255", 0 },
	{ "192.0.0.0", 1 }, /* 192.0.0/24 */
	{ "192.0.0.255", 1 },
	{ "192.0.1.0", 0 },
	{ "192.0.1.255", 0 },
	{ "192.0.2.0", 1 }, /* TEST-NET-1 */
	{ "192.0.2.255", 1 },
	{ "192.0.3.0", 0 },
	{ "192.88.98.255", 0 },
	{ "192.88.99.0", 1 }, /* 6to4 relay */
	{ "192.88.99.255", 1 },
	{ "192.88.100.0", 0 },
	{ "192.167.255.255", 0 },
	{ "192.168.0.0", 1 }, /* 192.168/16 */
	{ "192.168.255.255", 1 },
	{ "192.169.0.0", 0 },
	{ "198.17.255.255", 0 },
	{ "198.18.0.0", 1 }, /* 198.18/15 */
	{ "198.19.255.255", 1 },
	{ "198.20.0.0", 0 },
	{ "198.51.99.255", 0 },
	{ "198.51.100.0", 1 }, /* TEST-NET-2 */
	{ "198.51.100.255", 1 },
	{ "198.51.101.0", 0 },
	{ "203.0.112.255", 0 },
	{ "203.0.113.0", 1 }, /* TEST-NET-3 */
	{ "203.0.113.255", 1 },
	{ "203.0.114.0", 0 },
	{ "223.255.255.255", 0 },
	{ "224.0.0.0", 1 }, /* multicast */
	{ "239.255.255.255", 1 },
	{ "240.0.0.0", 1 },       /* reserved */
	{ "255.255.255.255", 1 }, /* broadcast */
	{ "8.8.8.8", 0 },
	{ "1.1.1.1", 0 },
	{ "93.184.216.34", 0 },
};

/* Parse a row's IPv4 address. */
static struct in_addr
v4(const char *s)
{
	struct in_addr a;

	ck_assert_msg(inet_pton(AF_INET, s, &a) == 1, "bad row %s", s);
	return a;
}

/* netpolicy's verdict on an IPv6 address written as s. */
static int
v6_private(const char *s)
{
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	ck_assert_msg(
	    inet_pton(AF_INET6, s, &sin6.sin6_addr) == 1, "bad row %s", s);
	ck_assert_int_eq(netpolicy_private_sa((struct sockaddr *)&sin6),
	    netpolicy_private_v6(sin6.sin6_addr.s6_addr));
	return netpolicy_private_v6(sin6.sin6_addr.s6_addr);
}

START_TEST(test_v4_class)
{
	const struct addr_row *r = &v4_rows[_i];
	struct sockaddr_in sin;
	struct in_addr a = v4(r->addr);

	ck_assert_msg(netpolicy_private_v4(ntohl(a.s_addr)) == r->private,
	    "%s should be %s", r->addr, r->private ? "private" : "public");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr = a;
	ck_assert_int_eq(
	    netpolicy_private_sa((struct sockaddr *)&sin), r->private);
}
END_TEST

/* The same IPv4 rows carried in an IPv6 address: the same verdict. */
START_TEST(test_v4_carried_in_v6)
{
	const struct addr_row *r = &v4_rows[_i];
	const unsigned char *b;
	struct in_addr a = v4(r->addr);
	char s[64];

	snprintf(s, sizeof(s), "::ffff:%s", r->addr);
	ck_assert_msg(v6_private(s) == r->private, "%s", s);
	snprintf(s, sizeof(s), "64:ff9b::%s", r->addr);
	ck_assert_msg(v6_private(s) == r->private, "%s", s);
	b = (const unsigned char *)&a.s_addr;
	snprintf(s, sizeof(s), "2002:%02x%02x:%02x%02x:1::1", b[0], b[1], b[2],
	    b[3]);
	ck_assert_msg(v6_private(s) == r->private, "%s", s);
}
END_TEST

static const struct addr_row v6_rows[] = {
	{ "::", 1 },
	{ "::1", 1 },
	{ "::2", 1 }, /* ::/96 */
	{ "::8.8.8.8", 1 },
	{ "::ffff", 1 },
	{ "::ffff:ffff", 1 },
	{ "0:0:0:0:0:1::", 0 },
	{ "0:0:0:0:1::", 0 },
	{ "::fffe:ffff:ffff", 0 },
	{ "::1:ffff:0:0", 0 }, /* not mapped */
	{ "64:ff9b:1::", 1 },  /* local-use NAT64 */
	{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "64:ff9b:2::", 0 },
	{ "64:ff9b:0:1::808:808", 0 },
	{ "64:ff9b::1:0:808:808", 0 },
	{ "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "64:ff9c::", 0 },
	{ "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "100::", 1 },
	{ "100::ffff:ffff:ffff:ffff", 1 },
	{ "100:0:0:1::", 0 }, /* 100::/64 */
	{ "2001:1:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "2001:2::", 1 },
	{ "2001:2:0:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "2001:2:1::", 0 },
	{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "2001:db8::", 1 },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "2001:db9::", 0 },
	{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", 0 }, /* Teredo: relayed */
	{ "2001:4860:4860::8888", 0 },
	{ "2606:4700::1111", 0 },
	{ "2002:808:808::", 0 },
	{ "2002:a00:1::", 1 }, /* 6to4 */
	{ "2002:6440::", 1 },
	{ "2002:643f:ffff::", 0 },
	{ "2003::", 0 },
	{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "fc00::", 1 },
	{ "fd00::1", 1 },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "fe00::", 0 },
	{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "fe80::", 1 },
	{ "fe80::1", 1 }, /* link-local */
	{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "fec0::", 1 },
	{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 }, /* site-local */
	{ "ff00::", 1 },
	{ "ff02::1", 1 }, /* multicast */
	{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
};

START_TEST(test_v6_class)
{
	const struct addr_row *r = &v6_rows[_i];

	ck_assert_msg(v6_private(r->addr) == r->private, "%s should be %s",
	    r->addr, r->private ? "private" : "public");
}
END_TEST

START_TEST(test_other_families_are_private)
{
	struct sockaddr_un sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_int_eq(netpolicy_private_sa((struct sockaddr *)&sun), 1);
}
END_TEST

struct ct_row {
	const char *spec;
	int valid;
	const char *host, *host2;
	long port, port2;
};

static const struct ct_row ct_rows[] = {
	{ "::127.0.0.1:8080", 1, "", "127.0.0.1", 0, 8080 },
	{ "a.test:80:127.0.0.1:8080", 1, "a.test", "127.0.0.1", 80, 8080 },
	{ "a.test:80::", 1, "a.test", "", 80, 0 },
	{ ":::", 1, "", "", 0, 0 },
	{ "::b:", 1, "", "b", 0, 0 },
	{ "[::1]:443:[::2]:8443", 1, "[::1]", "[::2]", 443, 8443 },
	{ "A.Test:65535:b:1", 1, "A.Test", "b", 65535, 1 },
	{ "a:1:[fe80::1%lo]:2", 1, "a", "[fe80::1%lo]", 1, 2 },
	{ "", 0, NULL, NULL, 0, 0 },
	{ "a", 0, NULL, NULL, 0, 0 },
	{ "a:80", 0, NULL, NULL, 0, 0 },
	{ "a:80:b", 0, NULL, NULL, 0, 0 },
	{ "a:80:b:8080:", 0, NULL, NULL, 0, 0 },
	{ "a:80:b:8080:x", 0, NULL, NULL, 0, 0 },
	{ "a:0:b:1", 0, NULL, NULL, 0, 0 },
	{ "a:65536:b:1", 0, NULL, NULL, 0, 0 },
	{ "a:1:b:0", 0, NULL, NULL, 0, 0 },
	{ "a:1:b:65536", 0, NULL, NULL, 0, 0 },
	{ "a:00000080:b:1", 0, NULL, NULL, 0, 0 },
	{ "a:+1:b:1", 0, NULL, NULL, 0, 0 },
	{ "a:-1:b:1", 0, NULL, NULL, 0, 0 },
	{ "a: 1:b:1", 0, NULL, NULL, 0, 0 },
	{ "a:1x:b:1", 0, NULL, NULL, 0, 0 },
	{ "a:1:b:1x", 0, NULL, NULL, 0, 0 },
	{ "a:1:b:1 ", 0, NULL, NULL, 0, 0 },
	{ "a b:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "a\t:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "a/b:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "a:1:c/d:1", 0, NULL, NULL, 0, 0 },
	{ "a[:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "a]:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "[]:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "[::1:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "[::1]x:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "[::1]:1:c:1]", 0, NULL, NULL, 0, 0 },
	{ "[a[b]:1:c:1", 0, NULL, NULL, 0, 0 },
	{ "a:1:[]:1", 0, NULL, NULL, 0, 0 },
	{ "a:1:::1:1", 0, NULL, NULL, 0, 0 },
	{ "a:1:b:[1]", 0, NULL, NULL, 0, 0 },
};

START_TEST(test_connect_to_parse)
{
	const struct ct_row *r = &ct_rows[_i];
	struct netpolicy_ct ct;

	if (!r->valid) {
		ck_assert_msg(netpolicy_ct_parse(r->spec, &ct) == -1,
		    "'%s' accepted", r->spec);
		ck_assert_int_eq(netpolicy_ct_parse(r->spec, NULL), -1);
		return;
	}
	ck_assert_msg(
	    netpolicy_ct_parse(r->spec, &ct) == 0, "'%s' refused", r->spec);
	ck_assert_int_eq(netpolicy_ct_parse(r->spec, NULL), 0);
	ck_assert_uint_eq(ct.host_len, strlen(r->host));
	ck_assert_int_eq(strncmp(ct.host, r->host, ct.host_len), 0);
	ck_assert_uint_eq(ct.host2_len, strlen(r->host2));
	ck_assert_int_eq(strncmp(ct.host2, r->host2, ct.host2_len), 0);
	ck_assert_int_eq(ct.port, r->port);
	ck_assert_int_eq(ct.port2, r->port2);
}
END_TEST

struct match_row {
	const char *spec, *host;
	long port;
	int hit;
};

static const struct match_row match_rows[] = {
	{ "::127.0.0.1:1", "x.test", 80, 1 },
	{ "::127.0.0.1:1", "[::1]", 443, 1 },
	{ "a.test::h:1", "a.test", 80, 1 },
	{ "a.test::h:1", "A.TEST", 443, 1 },
	{ "A.Test::h:1", "a.test", 443, 1 },
	{ "a.test::h:1", "b.test", 80, 0 },
	{ "a.test::h:1", "a.test.evil", 80, 0 },
	{ "a.test::h:1", "a.tes", 80, 0 },
	{ "a.test::h:1", "sub.a.test", 80, 0 },
	{ "a.test:80:h:1", "a.test", 80, 1 },
	{ "a.test:80:h:1", "a.test", 8080, 0 },
	{ "a.test:80:h:1", "a.test", 8, 0 },
	{ "a.test:80:h:1", "b.test", 80, 0 },
	{ ":443:h:1", "x", 443, 1 },
	{ ":443:h:1", "x", 80, 0 },
	{ "[::1]:80:h:1", "[::1]", 80, 1 },
	{ "[::1]:80:h:1", "::1", 80, 0 },
	{ "[::1]:80:h:1", "[::2]", 80, 0 },
};

START_TEST(test_connect_to_match)
{
	const struct match_row *r = &match_rows[_i];
	struct netpolicy_ct ct;
	char *list[] = { (char *)r->spec, NULL };

	ck_assert_int_eq(netpolicy_ct_parse(r->spec, &ct), 0);
	ck_assert_msg(netpolicy_ct_match(&ct, r->host, r->port) == r->hit,
	    "%s vs %s:%ld", r->spec, r->host, r->port);
	ck_assert_int_eq(netpolicy_ct_any(list, r->host, r->port), r->hit);
}
END_TEST

START_TEST(test_connect_to_any_of_a_list)
{
	char a[] = "a.test:80:h:1", b[] = "b.test::h:2";
	char x1[] = "x:80", x2[] = "x:80:h";
	char *list[] = { a, b, NULL }, *none[] = { NULL };
	char *bad[] = { x1, x2, NULL };

	ck_assert_int_eq(netpolicy_ct_any(list, "b.test", 1), 1);
	ck_assert_int_eq(netpolicy_ct_any(list, "a.test", 80), 1);
	ck_assert_int_eq(netpolicy_ct_any(list, "a.test", 81), 0);
	ck_assert_int_eq(netpolicy_ct_any(list, "c.test", 80), 0);
	ck_assert_int_eq(netpolicy_ct_any(none, "a.test", 80), 0);
	ck_assert_int_eq(netpolicy_ct_any(bad, "x", 80), 0);
}
END_TEST

/* Who may run admin ops: root, robotsd's uid (100), --admin-group (50). */
static const unsigned sup[] = { 7, 50 }, other[] = { 7, 8 };
static const struct {
	unsigned uid, gid;
	const unsigned *groups;
	size_t n;
	long admin_gid;
	int want;
} admin_rows[] = {
	{ 0, 0, NULL, 0, -1, 1 },       /* root */
	{ 100, 100, NULL, 0, -1, 1 },   /* robotsd's own user */
	{ 1000, 1000, NULL, 0, -1, 0 }, /* anyone else, no group */
	{ 1000, 50, NULL, 0, -1, 0 },   /* gid 50 means nothing then */
	{ 1000, 50, NULL, 0, 50, 1 },   /* the admin group, primary */
	{ 1000, 7, sup, 2, 50, 1 },     /* ... or supplementary */
	{ 1000, 7, other, 2, 50, 0 },   /* in other groups only */
	{ 1000, 100, NULL, 0, 50, 0 },  /* robotsd's group is not its uid */
	{ 0, 9, other, 2, 50, 1 },
};

START_TEST(test_peer_admin)
{
	ck_assert_int_eq(netpolicy_peer_admin(admin_rows[_i].uid,
	                     admin_rows[_i].gid, admin_rows[_i].groups,
	                     admin_rows[_i].n, 100, admin_rows[_i].admin_gid),
	    admin_rows[_i].want);
}
END_TEST

/* The network policy suite. */
static Suite *
netpolicy_suite(void)
{
	Suite *s = suite_create("netpolicy");
	TCase *addr = tcase_create("addresses");
	TCase *ct = tcase_create("connect-to");

	tcase_add_loop_test(addr, test_v4_class, 0, NROWS(v4_rows));
	tcase_add_loop_test(addr, test_v4_carried_in_v6, 0, NROWS(v4_rows));
	tcase_add_loop_test(addr, test_v6_class, 0, NROWS(v6_rows));
	tcase_add_test(addr, test_other_families_are_private);
	tcase_add_loop_test(ct, test_connect_to_parse, 0, NROWS(ct_rows));
	tcase_add_loop_test(ct, test_connect_to_match, 0, NROWS(match_rows));
	tcase_add_test(ct, test_connect_to_any_of_a_list);
	tcase_add_loop_test(ct, test_peer_admin, 0, NROWS(admin_rows));
	suite_add_tcase(s, addr);
	suite_add_tcase(s, ct);
	return s;
}

TEST_PROGRAM(netpolicy_suite, NULL, NULL);
