package robotsd_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	robotsd "robotsd.dev/client"
)

// watchers polls robotsd's count of change feed watchers until it is n.
func waitWatchers(t *testing.T, c *robotsd.Client, n int64) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if s, err := c.Stats(ctx(t)); err == nil && s["feed_watchers"] == n {
			return
		}
	}
	t.Fatalf("robotsd never had %d watchers", n)
}

// fetchAnew purges origin and checks it: a new entry, a change from none.
// It returns the new version.
func fetchAnew(t *testing.T, c *robotsd.Client, origin string) string {
	t.Helper()
	if _, err := c.Purge(ctx(t), origin); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Check(ctx(t), origin+"/a/x", "foobot"); err != nil || r.Allowed {
		t.Fatalf("check: %+v %v", r, err)
	}
	raw, err := c.Do(ctx(t), map[string]interface{}{"op": "inspect", "origin": origin})
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Version == "" {
		t.Fatalf("inspect: %s %v", raw, err)
	}
	return e.Version
}

func nextEvent(t *testing.T, ch <-chan robotsd.ChangeEvent) robotsd.ChangeEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the channel closed")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event in 20 s")
	}
	return robotsd.ChangeEvent{}
}

func TestWatchSurvivesARestart(t *testing.T) {
	d := startDaemon(t)
	c := robotsd.New(&robotsd.Options{Socket: d.socket})
	defer c.Close()
	const origin = "http://watch.test"
	testOrigin.set("watch.test", "User-agent: *\nDisallow: /a/\nAllow: /a/b\n", false)
	wctx, cancel := context.WithCancel(context.Background())
	ch, err := c.Watch(wctx, []string{origin}, []string{"FooBot/3"})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := map[string]*robotsd.AgentChange{"FooBot/3": {
		NewlyDisallowed: []string{"/a/"}, NewlyAllowed: []string{"/a/b"},
		UsageChanged: &no}}
	for round := 0; round < 2; round++ {
		waitWatchers(t, c, 1)
		v := fetchAnew(t, c, origin)
		ev := nextEvent(t, ch)
		if ev.Origin != origin || ev.Old != "" || ev.New != v || ev.State != "rules" ||
			!reflect.DeepEqual(ev.Agents, want) {
			t.Fatalf("round %d: %+v", round, ev)
		}
		if round == 0 {
			if err := d.stop(); err != nil {
				t.Fatal(err)
			}
			if err := d.start(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("an event after the context ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the channel stayed open after the context ended")
	}
}

func TestWatchRefused(t *testing.T) {
	_, err := client.Watch(ctx(t), nil, []string{""})
	if !errors.Is(err, robotsd.ErrBadRequest) {
		t.Fatalf("got %v", err)
	}
}
