package robotsd_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	robotsd "robotsd.dev/client"
)

const agent = "GoBot/1.0 (+https://bot.example)"
const siteRobots = "User-agent: gobot\nCrawl-delay: 2\nDisallow: /private/\nAllow: /private/ok\n"

var (
	testOrigin *origin
	testDaemon *daemon
	client     *robotsd.Client
)

// TestMain runs one origin server and one robotsd for the tests; the
// Example finds that robotsd through $ROBOTSD_SOCKET.
func TestMain(m *testing.M) {
	if os.Getenv("ROBOTSD") == "" {
		fmt.Fprintln(os.Stderr, "ROBOTSD must name the robotsd binary")
		os.Exit(2)
	}
	testOrigin = newOrigin()
	testOrigin.set("site.test", siteRobots, false)
	testOrigin.set("example.com", "User-agent: *\nDisallow: /a/\n", false)
	testOrigin.set("news.example", "User-agent: *\nDisallow: /drafts/\n"+
		"Content-Usage: train-ai=n\n\nUser-agent: Google-Extended\nDisallow: /\n", false)
	d, err := newDaemon(testOrigin, "--fetch-timeout", "3")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if d != nil {
			d.cleanup()
		}
		os.Exit(2)
	}
	testDaemon = d
	os.Setenv("ROBOTSD_SOCKET", d.socket)
	client = robotsd.New(&robotsd.Options{Socket: d.socket})
	code := m.Run()
	client.Close()
	testOrigin.releaseAll()
	if err := d.stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	d.cleanup()
	testOrigin.srv.Close()
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func requests(t *testing.T) int64 {
	t.Helper()
	s, err := client.Stats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return s["requests"]
}

func TestDisallowedNamesTheRule(t *testing.T) {
	r, err := client.Check(ctx(t), "http://site.test/private/x", agent)
	if err != nil {
		t.Fatal(err)
	}
	want := robotsd.Result{URL: "http://site.test/private/x", Allowed: false, Origin: "http://site.test",
		Source: "fetched", Reason: "rule", Rule: &robotsd.Rule{Directive: "disallow", Pattern: "/private/", Line: 3},
		CrawlDelay: 2 * time.Second, ExpiresIn: 86400 * time.Second, HTTPStatus: 200,
		Version: versionOf(siteRobots)}
	if r.Rule == nil || *r.Rule != *want.Rule {
		t.Fatalf("rule %+v, want %+v", r.Rule, want.Rule)
	}
	r.Rule = want.Rule
	if fmt.Sprintf("%+v", r) != fmt.Sprintf("%+v", want) {
		t.Fatalf("got  %+v\nwant %+v", r, want)
	}
	again, err := client.Check(ctx(t), "http://site.test/private/y", agent)
	if err != nil || again.Source != "cache" || again.Allowed {
		t.Fatalf("second check: %+v %v", again, err)
	}
	if n := testOrigin.hitsOf("site.test"); n != 1 {
		t.Fatalf("site.test fetched %d times, want 1", n)
	}
}

func TestAllowedByRuleOrNoRule(t *testing.T) {
	r, err := client.Check(ctx(t), "http://site.test/private/ok", agent)
	if err != nil || !r.Allowed || r.Reason != "rule" ||
		r.Rule == nil || *r.Rule != (robotsd.Rule{Directive: "allow", Pattern: "/private/ok", Line: 4}) {
		t.Fatalf("allow rule: %+v %+v %v", r, r.Rule, err)
	}
	r, err = client.Check(ctx(t), "http://site.test/public", agent)
	if err != nil || !r.Allowed || r.Reason != "no_rule" || r.Rule != nil {
		t.Fatalf("no rule: %+v %v", r, err)
	}
	r, err = client.Check(ctx(t), "http://site.test/private/x", "OtherBot")
	if err != nil || !r.Allowed || r.CrawlDelay != 0 {
		t.Fatalf("other agent: %+v %v", r, err)
	}
}

func TestCheckManySplitsAtTheBatchLimit(t *testing.T) {
	testOrigin.set("batch.test", "User-agent: *\nDisallow: /odd/\n", false)
	urls := make([]string, 2500)
	for i := range urls {
		kind := "even"
		if i%2 == 1 {
			kind = "odd"
		}
		urls[i] = fmt.Sprintf("http://batch.test/%s/%d", kind, i)
	}
	before := requests(t)
	res, err := client.CheckMany(ctx(t), urls, agent)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests(t) - before; n != 4 {
		t.Fatalf("%d requests, want 3 batches and one stats", n)
	}
	if len(res) != len(urls) {
		t.Fatalf("%d results for %d URLs", len(res), len(urls))
	}
	for i, r := range res {
		if r.URL != urls[i] || r.Allowed != (i%2 == 0) || r.Err != nil {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
}

func TestCheckManySplitsAtMaxLine(t *testing.T) {
	small := robotsd.New(&robotsd.Options{Socket: testDaemon.socket, MaxLine: 4096})
	defer small.Close()
	testOrigin.set("batch.test", "User-agent: *\nDisallow: /odd/\n", false)
	urls := make([]string, 1000)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://batch.test/x/%d", i)
	}
	urls = append(urls, "http://batch.test/"+strings.Repeat("c", 5000))
	before := requests(t)
	res, err := small.CheckMany(ctx(t), urls, agent)
	if err != nil {
		t.Fatal(err)
	}
	n := requests(t) - before - 1
	if n < 6 || n > 8 { // about 25 KB of URLs in lines of at most 4 KiB
		t.Fatalf("%d requests", n)
	}
	for i, r := range res[:1000] {
		if r.Err != nil || !r.Allowed || r.URL != urls[i] {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if last := res[1000]; !errors.Is(last.Err, robotsd.ErrLineTooLong) || last.URL != urls[1000] {
		t.Fatalf("too long URL: %+v", last)
	}
}

// Every URL of a batch of uncached origins waits on a fetch, and robotsd
// lets at most 1024 checks of a connection wait at once: 1,100 such URLs
// are answered only if the second batch is sent after the first is.
func TestCheckManyOfUncachedOrigins(t *testing.T) {
	const hosts = 550
	urls := make([]string, 0, 2*hosts)
	for h := 0; h < hosts; h++ {
		host := fmt.Sprintf("uncached%d.test", h)
		testOrigin.set(host, "User-agent: *\nDisallow: /odd/\n", false)
		urls = append(urls, "http://"+host+"/even/1", "http://"+host+"/odd/2")
	}
	res, err := client.CheckMany(ctx(t), urls, agent)
	if err != nil {
		t.Fatal(err)
	}
	overloaded := 0
	for i, r := range res {
		if errors.Is(r.Err, robotsd.ErrOverloaded) {
			overloaded++
			continue
		}
		if r.Err != nil || r.URL != urls[i] || r.Allowed != (i%2 == 0) || r.Source != "fetched" {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if overloaded > 0 {
		t.Fatalf("%d of %d URLs overloaded", overloaded, len(urls))
	}
	for h := 0; h < hosts; h++ {
		if n := testOrigin.hitsOf(fmt.Sprintf("uncached%d.test", h)); n != 1 {
			t.Fatalf("uncached%d.test: %d requests, want 1", h, n)
		}
	}
}

func TestBatchCarriesPerURLErrors(t *testing.T) {
	res, err := client.CheckMany(ctx(t), []string{"http://site.test/a", "gopher://x/"}, agent)
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Allowed || res[0].Err != nil {
		t.Fatalf("first: %+v", res[0])
	}
	var e *robotsd.Error
	if !errors.As(res[1].Err, &e) || e.Code != robotsd.CodeUnsupportedScheme || e.URL != "gopher://x/" {
		t.Fatalf("second: %+v", res[1])
	}
}

func TestWarmDoesNotWait(t *testing.T) {
	testOrigin.set("warm.test", "User-agent: *\nDisallow: /\n", true)
	res, err := client.Warm(ctx(t), []string{"http://warm.test/a", "http://warm.test/b"}, agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Pending || r.Origin != "http://warm.test" || r.Err != nil {
			t.Fatalf("warm: %+v", r)
		}
	}
	e, err := client.Inspect(ctx(t), "http://warm.test")
	if err != nil || e.State != "pending" {
		t.Fatalf("inspect: %+v %v", e, err)
	}
	testOrigin.releaseAll()
	r, err := client.Check(ctx(t), "http://warm.test/c", agent)
	if err != nil || r.Allowed || r.Pending {
		t.Fatalf("after warm: %+v %v", r, err)
	}
	if n := testOrigin.hitsOf("warm.test"); n != 1 {
		t.Fatalf("warm.test fetched %d times", n)
	}
}

func TestInspectPurgeStatsPing(t *testing.T) {
	c := ctx(t)
	if _, err := client.Check(c, "http://site.test/", agent); err != nil {
		t.Fatal(err)
	}
	e, err := client.Inspect(c, "http://site.test")
	if err != nil {
		t.Fatal(err)
	}
	if e.Origin != "http://site.test" || e.State != "rules" || e.HTTPStatus != 200 ||
		e.BodyBytes != int64(len(siteRobots)) || e.FinalURL != "http://site.test/robots.txt" ||
		len(e.Groups) != 1 || e.Groups[0].Agents[0] != "gobot" || e.Groups[0].Rules != 2 ||
		e.Groups[0].CrawlDelay != 2*time.Second || e.Retry.FailStreak != 0 ||
		time.Until(e.ExpiresAt) < 23*time.Hour || time.Since(e.FetchedAt) > time.Hour {
		t.Fatalf("inspect: %+v", e)
	}
	if n, err := client.Purge(c, "http://site.test"); n != 1 || err != nil {
		t.Fatalf("purge: %d %v", n, err)
	}
	if n, err := client.Purge(c, "http://site.test"); n != 0 || err != nil {
		t.Fatalf("purge again: %d %v", n, err)
	}
	if _, err := client.Inspect(c, "http://site.test"); !errors.Is(err, robotsd.ErrNotCached) {
		t.Fatalf("inspect after purge: %v", err)
	}
	if _, err := client.Check(c, "http://site.test/", agent); err != nil {
		t.Fatal(err)
	}
	if n, err := client.PurgeAll(c); n < 1 || err != nil {
		t.Fatalf("purge all: %d %v", n, err)
	}
	s, err := client.Stats(c)
	if err != nil || s["cache_entries"] != 0 || s["requests"] == 0 {
		t.Fatalf("stats: %v %v", s, err)
	}
	if v, err := client.Ping(c); err != nil || !strings.Contains(v, ".") {
		t.Fatalf("ping: %q %v", v, err)
	}
}

// Every error code robotsd can be made to answer, provoked for real.
func TestErrorCodes(t *testing.T) {
	loose := robotsd.New(&robotsd.Options{Socket: testDaemon.socket, MaxLine: 1 << 20})
	defer loose.Close()
	c := ctx(t)
	cases := []struct {
		code string
		call func() error
	}{
		{robotsd.CodeBadRequest, func() error {
			_, err := client.Do(c, map[string]interface{}{"op": "check", "url": "http://site.test/"})
			return err
		}},
		{robotsd.CodeUnknownOp, func() error {
			_, err := client.Do(c, map[string]interface{}{"op": "frobnicate"})
			return err
		}},
		{robotsd.CodeBadURL, func() error { _, err := client.Check(c, "http://", agent); return err }},
		{robotsd.CodeUnsupportedScheme, func() error { _, err := client.Check(c, "mailto:x@site.test", agent); return err }},
		{robotsd.CodeNotCached, func() error { _, err := client.Inspect(c, "http://nowhere.test"); return err }},
		{robotsd.CodeBadJSON, func() error { _, err := client.SendRaw(c, []byte("{not json")); return err }},
		// over robotsd's 64 KiB, from a client told robotsd takes more
		{robotsd.CodeLineTooLong, func() error {
			_, err := loose.Check(c, "http://site.test/"+strings.Repeat("a", 70000), agent)
			return err
		}},
	}
	for _, tc := range cases {
		err := tc.call()
		var e *robotsd.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Message == "" ||
			!errors.Is(err, &robotsd.Error{Code: tc.code}) {
			t.Errorf("%s: got %v", tc.code, err)
		}
	}
	for _, cl := range []*robotsd.Client{client, loose} {
		if r, err := cl.Check(c, "http://site.test/private/x", agent); err != nil || r.Allowed {
			t.Fatalf("the connection is still usable: %+v %v", r, err)
		}
	}
}

func TestSentinelsMatchTheirCodes(t *testing.T) {
	sentinels := map[string]error{
		"bad_json": robotsd.ErrBadJSON, "bad_request": robotsd.ErrBadRequest,
		"unknown_op": robotsd.ErrUnknownOp, "bad_url": robotsd.ErrBadURL,
		"unsupported_scheme": robotsd.ErrUnsupportedScheme, "line_too_long": robotsd.ErrLineTooLong,
		"overloaded": robotsd.ErrOverloaded, "timeout": robotsd.ErrTimeout,
		"not_cached": robotsd.ErrNotCached, "internal": robotsd.ErrInternal,
		"connection": robotsd.ErrConnection, "protocol": robotsd.ErrProtocol,
		"forbidden": robotsd.ErrForbidden, "config": robotsd.ErrConfig,
	}
	for code := range sentinels {
		err := fmt.Errorf("wrapped: %w", &robotsd.Error{Code: code, Message: "m"})
		for other, o := range sentinels {
			if errors.Is(err, o) != (other == code) {
				t.Errorf("errors.Is(%s, Err %s) = %v", code, other, !(other == code))
			}
		}
	}
}

func TestLineOverMaxLineIsNotSent(t *testing.T) {
	small := robotsd.New(&robotsd.Options{Socket: testDaemon.socket, MaxLine: 100})
	defer small.Close()
	before := requests(t)
	_, err := small.Check(ctx(t), "http://site.test/"+strings.Repeat("b", 200), agent)
	if !errors.Is(err, robotsd.ErrLineTooLong) {
		t.Fatalf("got %v", err)
	}
	if n := requests(t) - before; n != 1 {
		t.Fatalf("%d requests reached robotsd, want only the stats one", n)
	}
}

func TestTooManyConnections(t *testing.T) {
	d := startDaemon(t, "--max-connections", "1")
	a := robotsd.New(&robotsd.Options{Socket: d.socket})
	defer a.Close()
	b := robotsd.New(&robotsd.Options{Socket: d.socket, ConnectTimeout: 200 * time.Millisecond})
	defer b.Close()
	// robotsd may not have seen its start probe's connection close yet
	for i := 0; ; i++ {
		_, err := a.Ping(ctx(t))
		if err == nil {
			break
		}
		if !errors.Is(err, robotsd.ErrOverloaded) || i >= 100 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// robotsd writes one line and closes: a request crossing that close
	// may meet EPIPE before the line is read, so try until it is seen
	var seen error
	for i := 0; i < 20 && seen == nil; i++ {
		_, err := b.Ping(ctx(t))
		switch {
		case errors.Is(err, robotsd.ErrOverloaded):
			seen = err
		case !errors.Is(err, robotsd.ErrConnection):
			t.Fatalf("second connection: %v", err)
		}
	}
	var e *robotsd.Error
	if !errors.As(seen, &e) || e.Message != "too many connections" {
		t.Fatalf("no overloaded answer in 20 tries: %v", seen)
	}
}

// robotsd's own timeout, provoked as the daemon's tests do: one fetch at a
// time, qa.test's held until its 2 s fetch timeout, qb.test's queued behind
// it; on SIGTERM the check of qb.test cannot end before the drain's deadline
// (--stop-timeout 3).
func TestDaemonTimeoutCode(t *testing.T) {
	testOrigin.set("qa.test", "User-agent: *\nDisallow: /\n", true)
	testOrigin.set("qb.test", "User-agent: *\nDisallow: /\n", true)
	defer testOrigin.releaseAll()
	d := startDaemon(t, "--fetch-timeout", "2", "--max-fetches", "1", "--stop-timeout", "3")
	c := robotsd.New(&robotsd.Options{Socket: d.socket, ConnectTimeout: 200 * time.Millisecond})
	defer c.Close()
	type out struct {
		r   robotsd.Result
		err error
	}
	a, b := make(chan out, 1), make(chan out, 1)
	go func() { r, err := c.Check(ctx(t), "http://qa.test/", agent); a <- out{r, err} }()
	for i := 0; i < 500 && testOrigin.hitsOf("qa.test") == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if testOrigin.hitsOf("qa.test") != 1 {
		t.Fatal("qa.test was not fetched")
	}
	go func() { r, err := c.Check(ctx(t), "http://qb.test/", agent); b <- out{r, err} }()
	for i := 0; ; i++ { // until qb.test's fetch is queued
		s, err := c.Stats(ctx(t))
		if err != nil || i >= 500 {
			t.Fatalf("qb.test's fetch not queued: %v %v", s, err)
		}
		if s["fetches_queued"] == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if ra := <-a; ra.err != nil || ra.r.Reason != "unreachable" {
		t.Fatalf("qa.test: %+v %v", ra.r, ra.err)
	}
	rb := <-b
	var e *robotsd.Error
	if !errors.As(rb.err, &e) || e.Code != robotsd.CodeTimeout || errors.Is(rb.err, context.DeadlineExceeded) {
		t.Fatalf("qb.test: want robotsd's timeout, got %+v %v\n%s", rb.r, rb.err, d.logTail())
	}
}

func TestCallDeadlineAndCancel(t *testing.T) {
	testOrigin.set("slow.test", "User-agent: *\nDisallow: /\n", true)
	c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := client.Check(c, "http://slow.test/x", agent)
	if !errors.Is(err, robotsd.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(t0); el < 290*time.Millisecond || el > 5*time.Second {
		t.Fatalf("deadline of 300ms after %v", el)
	}
	c2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel2() }()
	if _, err := client.Check(c2, "http://slow.test/y", agent); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	short := robotsd.New(&robotsd.Options{Socket: testDaemon.socket, Timeout: 200 * time.Millisecond})
	defer short.Close()
	if _, err := short.Check(context.Background(), "http://slow.test/z", agent); !errors.Is(err, robotsd.ErrTimeout) {
		t.Fatalf("Options.Timeout: %v", err)
	}
	testOrigin.releaseAll()
	if r, err := client.Check(ctx(t), "http://slow.test/w", agent); err != nil || r.Allowed {
		t.Fatalf("after release: %+v %v", r, err)
	}
}

func TestNoDaemon(t *testing.T) {
	c := robotsd.New(&robotsd.Options{Socket: testDaemon.dir + "/absent.sock", ConnectTimeout: 200 * time.Millisecond})
	if _, err := c.Ping(ctx(t)); !errors.Is(err, robotsd.ErrConnection) {
		t.Fatalf("got %v", err)
	}
	c.Close()
	if _, err := c.Ping(ctx(t)); !errors.Is(err, robotsd.ErrConnection) {
		t.Fatalf("closed client: %v", err)
	}
}

// Nothing listening (no socket file, or a socket file nobody listens on):
// ErrConnection and ErrNotRunning naming the socket, after ConnectTimeout.
func TestNotRunning(t *testing.T) {
	dir := t.TempDir()
	dead := dir + "/dead.sock"
	l, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	for _, path := range []string{dir + "/absent.sock", dead} {
		c := robotsd.New(&robotsd.Options{Socket: path, Timeout: time.Minute, ConnectTimeout: 600 * time.Millisecond})
		t0 := time.Now()
		_, err := c.Ping(context.Background())
		took := time.Since(t0)
		c.Close()
		var nr *robotsd.NotRunningError
		if !errors.Is(err, robotsd.ErrConnection) || !errors.Is(err, robotsd.ErrNotRunning) ||
			!errors.As(err, &nr) || nr.Socket != path || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: got %v", path, err)
		}
		if took < 300*time.Millisecond || took > 5*time.Second {
			t.Fatalf("%s: gave up after %v", path, took)
		}
	}
	if robotsd.DefaultConnectTimeout != 5*time.Second {
		t.Fatalf("default connect timeout %v", robotsd.DefaultConnectTimeout)
	}
}

func TestUnreachableCause(t *testing.T) {
	testOrigin.setStatus("down.test", 503)
	want := robotsd.Cause{Code: robotsd.CauseHTTP503, Message: "HTTP status 503"}
	r, err := client.Check(ctx(t), "http://down.test/x", agent)
	if err != nil || r.Reason != "unreachable" || r.Cause == nil || *r.Cause != want {
		t.Fatalf("got %+v %v", r, err)
	}
	rs, err := client.CheckMany(ctx(t), []string{"http://down.test/y"}, agent)
	if err != nil || rs[0].Cause == nil || *rs[0].Cause != want {
		t.Fatalf("batch: %+v %v", rs, err)
	}
}

func TestSocketResolution(t *testing.T) {
	saved := os.Getenv("ROBOTSD_SOCKET")
	defer os.Setenv("ROBOTSD_SOCKET", saved)
	os.Setenv("ROBOTSD_SOCKET", "/tmp/env.sock")
	if s := robotsd.New(&robotsd.Options{Socket: "/tmp/opt.sock"}).Socket(); s != "/tmp/opt.sock" {
		t.Errorf("option: %s", s)
	}
	if s := robotsd.New(nil).Socket(); s != "/tmp/env.sock" {
		t.Errorf("env: %s", s)
	}
	os.Unsetenv("ROBOTSD_SOCKET")
	if s := robotsd.New(nil).Socket(); s != "/run/robotsd/robotsd.sock" {
		t.Errorf("default: %s", s)
	}
}

// Half the calls have a context only their deadline ends (they read the
// socket themselves while no one else does), half a cancellable one.
func TestThousandGoroutinesOneClient(t *testing.T) {
	const hosts = 20
	for h := 0; h < hosts; h++ {
		testOrigin.set(fmt.Sprintf("c%d.test", h), fmt.Sprintf("User-agent: *\nDisallow: /no-%d/\n", h), false)
	}
	c := ctx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h, blocked := i%hosts, i%3 == 0
			kind := "yes"
			if blocked {
				kind = "no"
			}
			url := fmt.Sprintf("http://c%d.test/%s-%d/%d", h, kind, h, i)
			cc := c
			if i%2 == 1 {
				cc = context.Background()
			}
			r, err := client.Check(cc, url, agent)
			if err != nil || r.URL != url || r.Origin != fmt.Sprintf("http://c%d.test", h) || r.Allowed == blocked ||
				(blocked && r.Rule.Pattern != fmt.Sprintf("/no-%d/", h)) {
				errs <- fmt.Errorf("%s: %+v %v", url, r, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for h := 0; h < hosts; h++ {
		if n := testOrigin.hitsOf(fmt.Sprintf("c%d.test", h)); n != 1 {
			t.Errorf("c%d.test fetched %d times", h, n)
		}
	}
}

func TestRestartIsSurvived(t *testing.T) {
	d := startDaemon(t)
	c := robotsd.New(&robotsd.Options{Socket: d.socket})
	defer c.Close()
	testOrigin.set("restart.test", "User-agent: *\nDisallow: /x\n", false)
	if r, err := c.Check(ctx(t), "http://restart.test/x", agent); err != nil || r.Allowed {
		t.Fatalf("before: %+v %v", r, err)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	// asked while robotsd is down: answered once it is back
	during := make(chan error, 1)
	go func() {
		r, err := c.Check(ctx(t), "http://restart.test/y", agent)
		if err == nil && !r.Allowed {
			err = fmt.Errorf("disallowed: %+v", r)
		}
		during <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	if err := <-during; err != nil {
		t.Fatalf("during the restart: %v", err)
	}
	r, err := c.Check(ctx(t), "http://restart.test/x", agent)
	if err != nil || r.Allowed || r.Source != "cache" {
		t.Fatalf("after: %+v %v", r, err)
	}
}
