/*
 * version.h: the version id of an origin's robots.txt state, computed once
 * per fetch outcome (or shared-tier read) with the wire layer's ids
 * (wire/version.h); here the CLASS of a fetch error in "error:CLASS".
 */
#ifndef ROBOTSD_VERSION_H
#define ROBOTSD_VERSION_H

#include <stddef.h>

#include "iface/outcome.h"
#include "wire/version.h"

/* The id of a state without an HTTP answer: "error:" version_error_class(). */
void version_of_error(enum fetch_error, char *out);
/*
 * The CLASS of a fetch error in "error:CLASS": network, timeout,
 * too_many_redirects, private_address. The one place that names them.
 */
const char *version_error_class(enum fetch_error);

#endif /* ROBOTSD_VERSION_H */
