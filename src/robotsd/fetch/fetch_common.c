/*
 * fetch_common.c: what both of the fetcher's threads call (fetch.c on the
 * main loop, fetch_curl.c on the fetch thread): waking the other side of a
 * mailbox, moving a fetch to another phase with the counters it keeps, and
 * freeing a copy of the settings or a fetch that curl no longer knows of.
 */
#include <config.h>

#include <sys/queue.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "wire/buf.h"
#include "fetch/cabundle.h"
#include "fetch/fetch_int.h"
#include "base/strv.h"

/* Wake the other side: a message waits. */
void
fetch_post(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
}

/* Clear the wake-up before reading the messages. */
void
fetch_take_post(int fd)
{
	uint64_t n;

	while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR)
		;
}

/*
 * Move a fetch to another phase and keep the counters; 0 (nothing done)
 * once it is cancelled: the cancel has taken it off the counters.
 */
int
fetch_set_phase(struct fetch *fe, enum fetch_phase to)
{
	struct fetcher *f = fe->fetcher;

	if (fe->cancelled)
		return 0;
	if (fe->phase == FETCH_QUEUED)
		atomic_fetch_sub(&f->nqueued, 1);
	else if (fe->phase == FETCH_RUNNING)
		atomic_fetch_sub(&f->nrunning, 1);
	if (to == FETCH_QUEUED)
		atomic_fetch_add(&f->nqueued, 1);
	else if (to == FETCH_RUNNING)
		atomic_fetch_add(&f->nrunning, 1);
	if (fe->phase == FETCH_ENDED && to != FETCH_ENDED)
		atomic_fetch_add(&f->nactive, 1);
	else if (fe->phase != FETCH_ENDED && to == FETCH_ENDED)
		atomic_fetch_sub(&f->nactive, 1);
	fe->phase = to;
	return 1;
}

/* Free what settings hold. */
void
fetch_conf_clear(struct fetch_conf *c)
{
	free(c->user_agent);
	free(c->ca_file);
	strv_free(c->connect_to);
	cabundle_close(&c->ca);
	memset(c, 0, sizeof(*c));
	c->ca = (struct cabundle)CABUNDLE_NONE;
}

/* Free a fetch curl no longer knows of; either thread. */
void
fetch_free_mem(struct fetch *fe)
{
	size_t i;

	atomic_fetch_sub(&fe->fetcher->bytes, fe->held);
	for (i = 0; i < HDR_COUNT; i++)
		free(fe->hdr[i]);
	buf_clear(&fe->body);
	buf_clear(&fe->raw);
	curl_slist_free_all(fe->cond_headers);
	free(fe->errbuf);
	free(fe->final_url);
	free(fe->url);
	free(fe);
}
