/*
 * lifecycle.h: the daemon's lifecycle as a small state machine, without
 * I/O of its own: TERM/INT (stop accepting, drain, a second one breaks the
 * loop), the drain's deadline, HUP (reload, re-arm the periodic save), the
 * periodic save, the saver child's end and the save at exit. signals.c
 * turns its signal and timer callbacks into lifecycle events and does
 * every action through struct lifecycle_ops; the unit tests script them
 * on a frozen clock.
 */
#ifndef ROBOTSD_LIFECYCLE_H
#define ROBOTSD_LIFECYCLE_H

enum lc_event {
	LC_TERM,       /* SIGTERM or SIGINT */
	LC_HUP,        /* SIGHUP */
	LC_DRAIN_TICK, /* the drain's poll timer fired */
	LC_SAVE_TICK,  /* --state-save-interval ran out */
	LC_CHLD        /* SIGCHLD: a save's child may have ended */
};

/* What the lifecycle needs to know of the live config. */
struct lifecycle_settings {
	long stop_timeout;  /* seconds a stop drains at most */
	long save_interval; /* seconds between saves, 0: none */
	int saves;          /* --state-file is set */
};

/* Every action the lifecycle takes; arg is lifecycle_new()'s. */
struct lifecycle_ops {
	double (*now)(void *);
	void (*settings)(void *, struct lifecycle_settings *);
	void (*announce_stop)(void *, int signo); /* log, health, systemd */
	void (*stop_accepting)(void *);
	int (*busy)(void *);            /* clients not yet answered */
	void (*expire_waiting)(void *); /* answer waiting checks "timeout" */
	void (*drain_arm)(void *);      /* start the drain's poll timer */
	void (*exit_loop)(void *);
	void (*break_loop)(void *);
	int (*reload)(void *); /* 0: applied (and said), -1: kept the old */
	void (*save_arm)(void *, long seconds); /* 0: disarm */
	int (*save_start)(void *);              /* 0: a child runs */
	void (*save_cancel)(void *, const char *why);
	void (*save_poll)(void *);
	void (*save_wait)(void *);
};

struct lifecycle;

struct lifecycle *lifecycle_new(const struct lifecycle_ops *, void *);
void lifecycle_free(struct lifecycle *);
void lifecycle_event(struct lifecycle *, enum lc_event, int signo);
void lifecycle_schedule_save(struct lifecycle *);
void lifecycle_save_at_exit(struct lifecycle *);
int lifecycle_stopping(const struct lifecycle *);

#endif /* ROBOTSD_LIFECYCLE_H */
