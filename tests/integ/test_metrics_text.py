"""The counters table, pinned: /metrics and the stats op of a known state
(three checks: a fetched origin with rules, a 404 origin, a cache hit),
with and without a shared tier of two Redis servers (one up, one down),
compared line by line with tests/data/metrics-*.prom and
tests/data/stats-*.json. Every family's name, HELP, TYPE, labels and order
is pinned, and every value the known state fixes; values that depend on
timing (durations, loop lateness, process figures, output peaks) read
"*". ROBOTSD_WRITE_GOLDEN=1 rewrites the files from the binary under test
(only for a change meant to alter the table: review the diff)."""
import json
import os
import re
import tempfile

from harness import VERSION, poll
import test_metrics
from test_hostile import sanitized
from test_shared import Redis, tier_built

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")

# Families whose values the test's known state does not fix.
VOLATILE = {
    "robotsd_fetch_duration_seconds", "robotsd_request_duration_seconds",
    "robotsd_op_duration_seconds", "robotsd_loop_lag_seconds",
    "robotsd_loop_lag_p99_micros", "robotsd_loop_lag_max_micros",
    "robotsd_loop_work_p99_micros", "robotsd_loop_work_max_micros",
    "robotsd_loop_late_total", "robotsd_client_input_bytes",
    "robotsd_client_output_bytes", "robotsd_client_output_peak_bytes",
    "process_cpu_seconds_total", "process_resident_memory_bytes",
    "process_start_time_seconds", "process_open_fds",
    "robotsd_uptime_seconds",  # wall-clock seconds: 1 on a slow machine
}
VOLATILE_STATS = {"uptime_s", "loop_lag_p99_us", "loop_lag_max_us", "loop_late",
                  "loop_work_p99_us", "loop_work_max_us",
                  "client_input_bytes", "client_output_bytes",
                  "client_output_peak_bytes"}
# cache_bytes of the known state, in the files: what glibc holds for its
# five blocks (asked for: the two entries 205 and 204 bytes, their final
# URLs 29 and 28, the ruleset 162), each with its size word rounded up to
# 16 bytes: 224 + 224 + 48 + 48 + 176. ASan's allocator holds each block
# as asked, with the word: 628 + 5 x 8. glibc may also hand out a free
# chunk one 16-byte step larger than the size asked for, when what would be
# left of it is too small to split off; which chunk a block gets depends on
# the heap's history (the environment, the paths), so each of the five
# blocks may hold up to 16 bytes more, never less.
CACHE_BYTES, CACHE_BYTES_ASAN = 720, 668
CACHE_BYTES_SPREAD = 5 * 16
SAMPLE = re.compile(r"^([a-z0-9_]+?)(_bucket|_sum|_count)?(\{[^}]*\})? (\S+)$")


# With two Redis servers: which one an origin's key is on follows from the
# servers' names, which hold the temporary directory of their sockets.
VOLATILE_RING = {
    "robotsd_shared_misses_total", "robotsd_shared_local_total",
    "robotsd_shared_publishes_total", "robotsd_redis_errors_total",
}


def normalize(text, tmp="@TMP@", volatile=frozenset()):
    """The exposition text with volatile values (and those of the families
    in volatile) as "*", the version as @VERSION@ and the directory tmp
    (the Redis sockets') as @TMP@."""
    volatile = VOLATILE | volatile
    out = []
    for ln in text.splitlines():
        m = SAMPLE.match(ln)
        if m and not ln.startswith("#"):
            name = m.group(1) + (m.group(2) or "")
            if m.group(1) in volatile or name in volatile:
                ln = ln[:m.start(4)] + "*"
        out.append(ln.replace('version="%s"' % VERSION,
                              'version="@VERSION@"').replace(tmp, "@TMP@"))
    return "\n".join(out) + "\n"


class MetricsText(test_metrics.MetricsBase):

    def known_state(self, *args):
        self.origin.robots("rules.test", "User-agent: *\nDisallow: /p\n")
        self.origin.set("gone.test", status=404)
        c = self.start_metrics(*args)
        self.assertAnswer(self.check("http://rules.test/p"), allowed=False,
                          source="fetched")
        self.assertAnswer(self.check("http://gone.test/p"), allowed=True,
                          source="fetched")
        self.assertAnswer(self.check("http://rules.test/q"), allowed=True,
                          source="cache")
        return c

    def compare(self, name, tmp="@TMP@", volatile=frozenset()):
        stats = {k: "*" if k in VOLATILE_STATS or
                 "robotsd_%s_total" % k in volatile else v
                 for k, v in self.stats().items()}
        held = stats["cache_bytes"]
        lo, hi = ((CACHE_BYTES_ASAN, CACHE_BYTES_ASAN) if sanitized() else
                  (CACHE_BYTES, CACHE_BYTES + CACHE_BYTES_SPREAD))
        self.assertTrue(lo <= held <= hi, "cache_bytes %d not in [%d, %d]"
                        % (held, lo, hi))
        # Past that bound the files pin the size classes' own sum.
        stats["cache_bytes"] = CACHE_BYTES
        text = normalize(self.scrape(), tmp, volatile).replace(
            "robotsd_cache_bytes %d\n" % held,
            "robotsd_cache_bytes %d\n" % CACHE_BYTES)
        stats_text = json.dumps(stats, indent=1) + "\n"
        prom = os.path.join(DATA, "metrics-%s.prom" % name)
        js = os.path.join(DATA, "stats-%s.json" % name)
        if os.environ.get("ROBOTSD_WRITE_GOLDEN") == "1":
            for path, t in ((prom, text), (js, stats_text)):
                with open(path, "w") as f:
                    f.write(t)
        with open(prom) as f:
            self.assertEqual(text, f.read())
        with open(js) as f:
            self.assertEqual(stats_text, f.read())

    def test_metrics_text_of_a_known_state(self):
        self.known_state()
        self.compare("local")

    def test_metrics_text_with_two_redis_servers(self):
        if not tier_built():
            self.skipTest("robotsd was built without hiredis")
        tmp = tempfile.mkdtemp(prefix="robotsd-metrics-")
        up = Redis(tmp, "up").start()
        self.addCleanup(up.stop)
        down = Redis(tmp, "down")  # never started: its socket is absent
        self.known_state("--redis", up.url, "--redis", down.url)
        self.assertTrue(poll(lambda: self.stats()["redis_up_0"] == 1))
        self.compare("redis", tmp, VOLATILE_RING)
