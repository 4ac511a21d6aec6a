/*
 * startup.h: robotsd before it serves (startup.c): its signals held, and
 * what a config that does not load becomes.
 */
#ifndef ROBOTSD_STARTUP_H
#define ROBOTSD_STARTUP_H

/* Block (SIG_BLOCK) or release (SIG_UNBLOCK) the signals robotsd handles. */
void startup_hold_signals(int how);

/*
 * The config does not load (cause, which this frees): EX_CONFIG, or, when
 * systemd handed robotsd its socket, config-error mode until TERM (0), or
 * a HUP with a file that loads (robotsd executes itself anew).
 */
int startup_bad_config(int argc, char **argv, char *cause);

/*
 * The config loads but robotsd cannot start with it (cause, which this
 * frees: a port taken, a file unreadable): 1, or, when systemd handed
 * robotsd its socket, config-error mode as above, answering this cause.
 */
int startup_start_error(int argc, char **argv, char *cause);

#endif /* ROBOTSD_STARTUP_H */
