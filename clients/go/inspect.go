package robotsd

import (
	"context"
	"time"
)

// Group is one user-agent group of a robots.txt file.
type Group struct {
	Agents     []string      // the agents the group names ("*" included)
	Rules      int           // its rule count
	CrawlDelay time.Duration // its Crawl-delay; 0 when none
}

// Retry is the failure state of an origin.
type Retry struct {
	FailStreak   int       // consecutive failed fetches
	FailingSince time.Time // when the failures began; zero when not failing
	NextRetry    time.Time // the next attempt; zero when none is planned
	LastError    string    // the last failure's text
}

// Entry is what robotsd's cache holds for one origin.
type Entry struct {
	Origin string
	// State: "rules", "allow_all", "disallow_all" or "pending".
	State      string
	HTTPStatus int       // of the last fetch; 0 when none
	FetchedAt  time.Time // zero when unset
	ExpiresAt  time.Time // zero when unset
	ExpiresIn  time.Duration
	BodyBytes  int64
	Truncated  bool   // the body was cut at 500 KiB
	FinalURL   string // after redirects
	Groups     []Group
	Sitemaps   []string
	Retry      Retry
	Fetching   bool // a fetch is under way
	Stale      bool // checks are answered from an older good copy

	// ValidatedAt: the last fetch or 304 that confirmed this version;
	// LastFetchAt: the last fetch's end, whatever it brought. Zero when
	// unset.
	ValidatedAt time.Time
	LastFetchAt time.Time
	Version     string // the entry's robots.txt version; "" when unknown
}

type wireEntry struct {
	Origin     string   `json:"origin"`
	State      string   `json:"state"`
	HTTPStatus *int     `json:"http_status"`
	FetchedAt  *float64 `json:"fetched_at"`
	Validated  *float64 `json:"validated_at"`
	LastFetch  *float64 `json:"last_fetch_at"`
	Version    *string  `json:"version"`
	ExpiresAt  *float64 `json:"expires_at"`
	ExpiresIn  *float64 `json:"expires_in"`
	BodyBytes  int64    `json:"body_bytes"`
	Truncated  bool     `json:"truncated"`
	FinalURL   *string  `json:"final_url"`
	Groups     []struct {
		Agents     []string `json:"agents"`
		Rules      int      `json:"rules"`
		CrawlDelay *float64 `json:"crawl_delay"`
	} `json:"groups"`
	Sitemaps []string `json:"sitemaps"`
	Retry    struct {
		FailStreak   int      `json:"fail_streak"`
		FailingSince *float64 `json:"failing_since"`
		NextRetry    *float64 `json:"next_retry"`
		LastError    *string  `json:"last_error"`
	} `json:"retry"`
	Fetching bool `json:"fetching"`
	Stale    bool `json:"stale"`
}

func unixTime(f *float64) time.Time {
	if f == nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(*f * 1000))
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Inspect returns what the cache holds for origin (an origin or URL as a
// person writes it; a bare host means https). An origin not in the cache
// gives ErrNotCached.
func (c *Client) Inspect(ctx context.Context, origin string) (*Entry, error) {
	var w wireEntry
	if err := c.doInto(ctx, map[string]interface{}{"op": "inspect", "origin": origin}, &w); err != nil {
		return nil, err
	}
	e := &Entry{Origin: w.Origin, State: w.State, FetchedAt: unixTime(w.FetchedAt),
		ValidatedAt: unixTime(w.Validated), LastFetchAt: unixTime(w.LastFetch), Version: str(w.Version),
		ExpiresAt: unixTime(w.ExpiresAt), ExpiresIn: seconds(w.ExpiresIn),
		BodyBytes: w.BodyBytes, Truncated: w.Truncated, FinalURL: str(w.FinalURL),
		Sitemaps: w.Sitemaps, Fetching: w.Fetching, Stale: w.Stale}
	if w.HTTPStatus != nil {
		e.HTTPStatus = *w.HTTPStatus
	}
	for _, g := range w.Groups {
		e.Groups = append(e.Groups, Group{Agents: g.Agents, Rules: g.Rules, CrawlDelay: seconds(g.CrawlDelay)})
	}
	e.Retry = Retry{FailStreak: w.Retry.FailStreak, FailingSince: unixTime(w.Retry.FailingSince),
		NextRetry: unixTime(w.Retry.NextRetry), LastError: str(w.Retry.LastError)}
	return e, nil
}

// HistoryEntry is one distinct robots.txt version of a cached origin.
type HistoryEntry struct {
	Version   string
	FirstSeen time.Time // when this robotsd first got it
	LastSeen  time.Time // when a fetch or 304 last confirmed it
	// HTTPStatus: the status it came with; 0 without an HTTP answer.
	HTTPStatus int
	// State: "rules", "allow_all" or "disallow_all", as in Entry.
	State string
}

// History returns the last distinct robots.txt versions of a cached
// origin, newest (the current one) first. An origin not in the cache
// gives ErrNotCached.
func (c *Client) History(ctx context.Context, origin string) ([]HistoryEntry, error) {
	var w struct {
		Versions []struct {
			Version    string `json:"version"`
			FirstSeen  int64  `json:"first_seen"`
			LastSeen   int64  `json:"last_seen"`
			HTTPStatus *int   `json:"http_status"`
			State      string `json:"state"`
		} `json:"versions"`
	}
	if err := c.doInto(ctx, map[string]interface{}{"op": "history", "origin": origin}, &w); err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, len(w.Versions))
	for i, v := range w.Versions {
		out[i] = HistoryEntry{Version: v.Version, FirstSeen: time.Unix(v.FirstSeen, 0),
			LastSeen: time.Unix(v.LastSeen, 0), State: v.State}
		if v.HTTPStatus != nil {
			out[i].HTTPStatus = *v.HTTPStatus
		}
	}
	return out, nil
}
