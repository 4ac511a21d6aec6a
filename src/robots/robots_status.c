/*
 * robots_status.c: the status table (robots.h): what a fetched robots.txt
 * status means for the rules.
 */
#include <config.h>

#include "robots.h"

/* See robots.h. */
enum robots_status_class
robots_status_class(int answered, int redirects, int status)
{
	if (redirects)
		return ROBOTS_STATUS_ALLOW_ALL;
	if (!answered)
		return ROBOTS_STATUS_FAILED;
	if (status >= 200 && status < 300)
		return ROBOTS_STATUS_RULES;
	if (status == 503 || status == 429)
		return ROBOTS_STATUS_FAILED_SOON;
	if (status >= 300 && status < 500)
		return ROBOTS_STATUS_ALLOW_ALL;
	return ROBOTS_STATUS_FAILED;
}
