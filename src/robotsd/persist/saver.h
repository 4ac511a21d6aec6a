/*
 * saver.h: state file saves (state.h) run in a child process with a
 * deadline: the periodic ones (--state-save-interval) never stall the
 * loop, and the one at exit cannot hang shutdown. One save at a time.
 */
#ifndef ROBOTSD_SAVER_H
#define ROBOTSD_SAVER_H

struct saver;
struct state_caches;

struct saver *saver_new(void);
void saver_free(struct saver *); /* kills a save still running; NULL ok */
/*
 * Start saving the caches to path in a child, killed after timeout
 * seconds. 0 started; -1 when a save still runs or it could not start
 * (logged).
 */
int saver_start(struct saver *, const struct state_caches *, const char *path,
    double timeout);
/*
 * Reap a finished save; kill one past its deadline (its temporary file is
 * removed and a warning logged). 1 while a save still runs, else 0.
 */
int saver_poll(struct saver *);
/* Block until the save ends or its deadline kills it. */
void saver_wait(struct saver *);
/* Kill a save still running now, logging why. */
void saver_cancel(struct saver *, const char *why);

#endif /* ROBOTSD_SAVER_H */
