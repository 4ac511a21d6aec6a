/*
 * check_lifecycle.c: the lifecycle (lifecycle.c) over scripted ops on a
 * frozen clock. Each op appends its name to a log; each test feeds events
 * and compares the log with the exact sequence of ops it expects.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <check.h>

#include "lifecycle.h"
#include "test_main.h"

/* The scripted daemon: what the ops answer, and what they were asked. */
struct script {
	double now;        /* the frozen clock */
	int busy;          /* clients not yet answered */
	int reload_ok;     /* a reload applies */
	int save_fails;    /* save_start fails */
	int save_running;  /* a save's child runs */
	int save_timedout; /* save_wait hits the save's deadline */
	struct lifecycle_settings s;
	char log[1024];
};

/* Append one op's name to the log, space-separated. */
static void
say(struct script *sc, const char *op)
{
	size_t len = strlen(sc->log);

	snprintf(sc->log + len, sizeof(sc->log) - len, "%s%s",
	    len > 0 ? " " : "", op);
}

/* Append an op's name with its number argument, as name(n). */
static void
say_n(struct script *sc, const char *op, long n)
{
	char b[64];

	snprintf(b, sizeof(b), "%s(%ld)", op, n);
	say(sc, b);
}

/* The frozen clock (not logged). */
static double
op_now(void *a)
{
	return ((struct script *)a)->now;
}

/* The scripted config (not logged). */
static void
op_settings(void *a, struct lifecycle_settings *s)
{
	*s = ((struct script *)a)->s;
}

/* The scripted announce_stop op: logged, answered from the script. */
static void
op_announce_stop(void *a, int signo)
{
	say_n(a, "announce_stop", signo);
}

/* The scripted stop_accepting op: logged, answered from the script. */
static void
op_stop_accepting(void *a)
{
	say(a, "stop_accepting");
}

/* The scripted busy op: logged, answered from the script. */
static int
op_busy(void *a)
{
	say(a, "busy");
	return ((struct script *)a)->busy;
}

/* The scripted expire_waiting op: logged, answered from the script. */
static void
op_expire_waiting(void *a)
{
	say(a, "expire_waiting");
}

/* The scripted drain_arm op: logged, answered from the script. */
static void
op_drain_arm(void *a)
{
	say(a, "drain_arm");
}

/* The scripted exit_loop op: logged, answered from the script. */
static void
op_exit_loop(void *a)
{
	say(a, "exit_loop");
}

/* The scripted break_loop op: logged, answered from the script. */
static void
op_break_loop(void *a)
{
	say(a, "break_loop");
}

/* The scripted reload op: logged, answered from the script. */
static int
op_reload(void *a)
{
	struct script *sc = a;

	say(a, sc->reload_ok ? "reload" : "reload(failed)");
	return sc->reload_ok ? 0 : -1;
}

/* The scripted save_arm op: logged, answered from the script. */
static void
op_save_arm(void *a, long seconds)
{
	say_n(a, "save_arm", seconds);
}

/* Like saver_start(): refused while a child runs (saver.c). */
static int
op_save_start(void *a)
{
	struct script *sc = a;

	if (sc->save_fails || sc->save_running) {
		say(a, "save_start(refused)");
		return -1;
	}
	say(a, "save_start");
	sc->save_running = 1;
	return 0;
}

/* The scripted save_cancel op: logged, answered from the script. */
static void
op_save_cancel(void *a, const char *why)
{
	struct script *sc = a;

	(void)why;
	say(a, sc->save_running ? "save_cancel(killed)" : "save_cancel");
	sc->save_running = 0;
}

/* The scripted save_poll op: logged, answered from the script. */
static void
op_save_poll(void *a)
{
	struct script *sc = a;

	say(a, sc->save_running ? "save_poll(reaped)" : "save_poll");
	sc->save_running = 0;
}

/* Like saver_wait(): past the save's timeout, the child is killed. */
static void
op_save_wait(void *a)
{
	struct script *sc = a;

	say(a, sc->save_timedout ? "save_wait(timeout,killed)" : "save_wait");
	sc->save_running = 0;
}

static const struct lifecycle_ops ops = { op_now, op_settings, op_announce_stop,
	op_stop_accepting, op_busy, op_expire_waiting, op_drain_arm,
	op_exit_loop, op_break_loop, op_reload, op_save_arm, op_save_start,
	op_save_cancel, op_save_poll, op_save_wait };

static struct script sc;
static struct lifecycle *lc;

/* A daemon at clock 1000 with a 10 s stop, a state file saved every 60 s. */
static void
setup(void)
{
	memset(&sc, 0, sizeof(sc));
	sc.now = 1000;
	sc.reload_ok = 1;
	sc.s.stop_timeout = 10;
	sc.s.save_interval = 60;
	sc.s.saves = 1;
	lc = lifecycle_new(&ops, &sc);
	ck_assert_ptr_nonnull(lc);
}

/* Free the test's lifecycle. */
static void
teardown(void)
{
	lifecycle_free(lc);
}

/* TERM while fetches run: stop accepting, wait while busy, exit, save. */
START_TEST(term_while_busy)
{
	lifecycle_event(lc, LC_TERM, 15);
	ck_assert_int_eq(lifecycle_stopping(lc), 1);
	sc.busy = 1;
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	sc.now += 9.9;
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	sc.busy = 0;
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	lifecycle_save_at_exit(lc);
	ck_assert_str_eq(sc.log,
	    "announce_stop(15) stop_accepting drain_arm busy busy busy "
	    "exit_loop save_cancel save_start save_wait");
}
END_TEST

/* The deadline passes: "timeout" answers, one more second, then exit. */
START_TEST(drain_deadline)
{
	lifecycle_event(lc, LC_TERM, 2);
	sc.busy = 1;
	sc.now += 10;
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	sc.now += 0.5;
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	sc.now += 0.5;
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	ck_assert_str_eq(sc.log,
	    "announce_stop(2) stop_accepting drain_arm busy expire_waiting "
	    "busy busy exit_loop expire_waiting");
}
END_TEST

/* A second TERM breaks the loop at once, and announces nothing. */
START_TEST(second_term)
{
	lifecycle_event(lc, LC_TERM, 15);
	lifecycle_event(lc, LC_TERM, 15);
	lifecycle_event(lc, LC_TERM, 2);
	ck_assert_str_eq(sc.log, "announce_stop(15) stop_accepting drain_arm "
	                         "break_loop break_loop");
}
END_TEST

/* HUP re-arms the save timer with the reloaded interval; a failed one not. */
START_TEST(hup_rearms_save)
{
	lifecycle_schedule_save(lc);
	sc.s.save_interval = 5;
	lifecycle_event(lc, LC_HUP, 1);
	sc.s.saves = 0;
	lifecycle_event(lc, LC_HUP, 1);
	sc.reload_ok = 0;
	lifecycle_event(lc, LC_HUP, 1);
	ck_assert_str_eq(sc.log, "save_arm(60) reload save_arm(5) reload "
	                         "save_arm(0) reload(failed)");
}
END_TEST

/* HUP during a running save: no second save, the running one is reaped. */
START_TEST(hup_during_save)
{
	lifecycle_event(lc, LC_SAVE_TICK, 0);
	lifecycle_event(lc, LC_HUP, 1);
	lifecycle_event(lc, LC_CHLD, 17);
	lifecycle_event(lc, LC_SAVE_TICK, 0);
	ck_assert_str_eq(sc.log,
	    "save_start reload save_arm(60) save_poll(reaped) save_start");
}
END_TEST

/* Without --state-file: no save, at a tick or at exit. */
START_TEST(no_state_file)
{
	sc.s.saves = 0;
	lifecycle_schedule_save(lc);
	lifecycle_event(lc, LC_SAVE_TICK, 0);
	lifecycle_save_at_exit(lc);
	ck_assert_str_eq(sc.log, "save_arm(0)");
}
END_TEST

/*
 * A save that outlives its timeout: at exit the periodic one still running
 * is killed, the fresh one is waited for until its deadline and killed,
 * and the stop goes on (nothing else is asked).
 */
START_TEST(save_past_timeout)
{
	lifecycle_event(lc, LC_SAVE_TICK, 0);
	lifecycle_event(lc, LC_TERM, 15);
	lifecycle_event(lc, LC_DRAIN_TICK, 0);
	sc.save_timedout = 1;
	lifecycle_save_at_exit(lc);
	ck_assert_int_eq(sc.save_running, 0);
	ck_assert_str_eq(sc.log,
	    "save_start announce_stop(15) stop_accepting drain_arm busy "
	    "exit_loop save_cancel(killed) save_start "
	    "save_wait(timeout,killed)");
}
END_TEST

/* A save at exit that cannot start is not waited for. */
START_TEST(save_at_exit_refused)
{
	sc.save_fails = 1;
	lifecycle_save_at_exit(lc);
	ck_assert_str_eq(sc.log, "save_cancel save_start(refused)");
}
END_TEST

/* The lifecycle's tests. */
static Suite *
lifecycle_suite(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *tc = tcase_create("events");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, term_while_busy);
	tcase_add_test(tc, drain_deadline);
	tcase_add_test(tc, second_term);
	tcase_add_test(tc, hup_rearms_save);
	tcase_add_test(tc, hup_during_save);
	tcase_add_test(tc, no_state_file);
	tcase_add_test(tc, save_past_timeout);
	tcase_add_test(tc, save_at_exit_refused);
	suite_add_tcase(s, tc);
	return s;
}

TEST_PROGRAM(lifecycle_suite, NULL, NULL);
