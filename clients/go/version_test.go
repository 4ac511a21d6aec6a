package robotsd_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	robotsd "robotsd.dev/client"
)

// versionOf is robotsd's version of a robots.txt body: the first 16 hex
// digits of its SHA-256 (docs/protocol.md, "Versions").
func versionOf(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])[:16]
}

func versions(rs []robotsd.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Version
	}
	return out
}

// A check names the version of the body it used, single and batch, none
// for /robots.txt; after a refresh on the test clock brings a new body,
// History lists both, newest first.
func TestVersionsAndHistory(t *testing.T) {
	const one = "User-agent: *\nDisallow: /private/\n"
	const two = "User-agent: *\nDisallow: /secret/\n"
	testOrigin.set("v.test", one, false)
	d := startDaemon(t, "--test-clock")
	cl := robotsd.New(&robotsd.Options{Socket: d.socket})
	defer cl.Close()
	c := ctx(t)
	v1, v2 := versionOf(one), versionOf(two)

	if r, err := cl.Check(c, "http://v.test/x", "A"); err != nil || r.Version != v1 {
		t.Fatalf("check: %+v %v, want version %s", r, err, v1)
	}
	if r, err := cl.Check(c, "http://v.test/robots.txt", "A"); err != nil || r.Version != "" {
		t.Fatalf("check of /robots.txt: %+v %v, want no version", r, err)
	}
	rs, err := cl.CheckMany(c, []string{"http://v.test/y", "http://v.test/robots.txt", "gopher://v.test/"}, "A")
	if got, want := fmt.Sprint(versions(rs)), fmt.Sprint([]string{v1, "", ""}); err != nil || got != want ||
		rs[2].Err == nil {
		t.Fatalf("batch: %+v %v, want versions %s", rs, err, want)
	}

	testOrigin.set("v.test", two, false)
	if _, err := cl.Do(c, map[string]interface{}{"op": "clock", "advance": 86400 + 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Check(c, "http://v.test/x", "A"); err != nil { // refreshes in the background
		t.Fatal(err)
	}
	var e *robotsd.Entry
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if e, err = cl.Inspect(c, "http://v.test"); err != nil {
			t.Fatal(err)
		}
		if !e.Fetching && e.Version == v2 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no refresh to %s: %+v", v2, e)
		}
	}
	if r, err := cl.Check(c, "http://v.test/x", "A"); err != nil || r.Version != v2 {
		t.Fatalf("check after the refresh: %+v %v, want version %s", r, err, v2)
	}
	if rs, err := cl.CheckMany(c, []string{"http://v.test/z"}, "A"); err != nil || versions(rs)[0] != v2 {
		t.Fatalf("batch after the refresh: %+v %v", rs, err)
	}
	h, err := cl.History(c, "HTTP://v.test:80")
	if err != nil || len(h) != 2 {
		t.Fatalf("history: %+v %v", h, err)
	}
	for i, v := range []string{v2, v1} {
		if h[i].Version != v || h[i].HTTPStatus != 200 || h[i].State != "rules" || h[i].LastSeen.Before(h[i].FirstSeen) {
			t.Fatalf("history[%d]: %+v, want version %s", i, h[i], v)
		}
	}
	if !h[0].FirstSeen.Equal(time.Unix(e.FetchedAt.Unix(), 0)) || !h[1].LastSeen.Before(h[0].FirstSeen) {
		t.Fatalf("history times: %+v, fetched at %v", h, e.FetchedAt)
	}
	if _, err := cl.History(c, "http://nothere.test"); !errors.Is(err, robotsd.ErrNotCached) {
		t.Fatalf("history of an origin not cached: %v", err)
	}
}
