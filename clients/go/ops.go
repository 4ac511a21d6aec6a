package robotsd

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// Rule is the rule of robots.txt that decided a verdict.
type Rule struct {
	Directive string `json:"directive"` // "allow" or "disallow"
	Pattern   string `json:"pattern"`   // as written in the file
	Line      int    `json:"line"`      // 1-based line in the file
}

// Result is one URL's verdict.
type Result struct {
	URL string
	// Pending: the check did not wait ("wait":false) and the origin's
	// robots.txt is being fetched; Allowed means nothing then.
	Pending bool
	Allowed bool
	Origin  string // the normalized origin
	Source  string // "cache", "fetched" or "stale"
	// Reason: "rule", "no_rule", "robots_txt", "unavailable" or "unreachable".
	Reason     string
	Rule       *Rule         // the deciding rule, or nil
	CrawlDelay time.Duration // the Crawl-delay that applies; 0 when none
	ExpiresIn  time.Duration // until the entry is refreshed
	HTTPStatus int           // of the last fetch; 0 when there was no HTTP answer
	// Cause says why, when Reason is "unreachable"; nil otherwise.
	Cause *Cause
	// Version is the robots.txt version the verdict came from: 16
	// lowercase hex digits, a SHA-256 prefix of the body used. Empty when
	// robotsd gives none (the URL /robots.txt itself, an entry restored
	// from an old state file, a pending answer, an error).
	Version string
	// Err is set only in a batch, for a URL robotsd could not check.
	Err error
	// Usage (with CheckOptions.Usage): every purpose's preference for an
	// allowed URL; nil for a disallowed one and when not asked.
	Usage Usage
	// UsageFrom (with CheckOptions.Usage): the lines that decided, in file
	// order; empty when the URL is disallowed, nil when not asked.
	UsageFrom []UsageStatement
	// Tokens (with CheckOptions.Tokens): each token, in lowercase, to its
	// own verdict; nil when not asked.
	Tokens map[string]TokenVerdict
	// RobotsTag (with CheckOptions.Page): the page's robots rules for the
	// agent; nil for a disallowed URL and when no page was sent.
	RobotsTag *RobotsTag
	// Evidence (with CheckOptions.Page): the inputs the answer came from;
	// nil when no page was sent.
	Evidence *Evidence
	// TDM (with CheckOptions.TDM): the TDMRep answer; nil for a
	// disallowed URL, and from a robotsd that does not answer it.
	TDM *TDM
}

// Cause is why an origin is unreachable: a stable code (the Cause*
// constants; treat an unknown one as CauseOther) and the failure's text.
type Cause struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The cause codes of docs/protocol.md.
const (
	CauseDNS            = "dns"
	CauseConnect        = "connect"
	CauseTLS            = "tls"
	CauseTimeout        = "timeout"
	CausePrivateAddress = "private_address"
	CauseHTTP5xx        = "http_5xx"
	CauseHTTP503        = "http_503"
	CauseHTTP429        = "http_429"
	CauseBadResponse    = "bad_response"
	CauseOther          = "other"
)

// wireCheck is a check's answer, or one result of a batch.
type wireCheck struct {
	URL        string      `json:"url"`
	OK         bool        `json:"ok"`
	Pending    bool        `json:"pending"`
	Allowed    *bool       `json:"allowed"`
	Origin     *string     `json:"origin"`
	Source     *string     `json:"source"`
	Reason     *string     `json:"reason"`
	HTTPStatus *int        `json:"http_status"`
	Rule       *Rule       `json:"rule"`
	CrawlDelay *float64    `json:"crawl_delay"`
	ExpiresIn  *float64    `json:"expires_in"`
	Error      *wireError  `json:"error"`
	Results    []wireCheck `json:"results"`
	Cause      *Cause      `json:"cause"`
	Version    *string     `json:"version"`
	wireUsage
}

func seconds(f *float64) time.Duration {
	if f == nil {
		return 0
	}
	return time.Duration(*f * float64(time.Second))
}

func (w *wireCheck) result(url string, o *CheckOptions) (Result, error) {
	r := Result{URL: url, Pending: w.Pending, Allowed: w.Allowed != nil && *w.Allowed,
		Origin: str(w.Origin), Source: str(w.Source), Reason: str(w.Reason), Rule: w.Rule,
		CrawlDelay: seconds(w.CrawlDelay), ExpiresIn: seconds(w.ExpiresIn),
		Cause: w.Cause, Version: str(w.Version)}
	if w.URL != "" {
		r.URL = w.URL
	}
	if w.HTTPStatus != nil {
		r.HTTPStatus = *w.HTTPStatus
	}
	if !w.OK {
		r.Err = w.Error.toError(r.URL)
		return r, nil
	}
	if err := w.required(); err != nil {
		err.URL = r.URL
		return Result{URL: r.URL}, err
	}
	if w.Pending || o == nil {
		return r, nil
	}
	return w.withUsage(o, r)
}

// withUsage is r with what o asked for more: a function of its own, so
// that result's r stays off the heap for a plain verdict.
func (w *wireCheck) withUsage(o *CheckOptions, r Result) (Result, error) {
	if err := w.wireUsage.decode(o, &r); err != nil {
		err.URL = r.URL
		return Result{URL: r.URL}, err
	}
	return r, nil
}

// required is the CodeProtocol error of an ok answer missing a field it
// must have: a verdict's allowed, origin, source and reason, a pending
// answer's origin. Missing is an error, never a zero value.
func (w *wireCheck) required() *Error {
	fields := []struct {
		name    string
		missing bool
	}{{"origin", w.Origin == nil}, {"allowed", w.Allowed == nil},
		{"source", w.Source == nil}, {"reason", w.Reason == nil}}
	for i, f := range fields {
		if f.missing && (i == 0 || !w.Pending) {
			return protocolError("malformed answer: no %s", f.name)
		}
	}
	return nil
}

// Check asks whether agent may fetch url, waiting for the origin's
// robots.txt to be fetched if robotsd has not cached it.
func (c *Client) Check(ctx context.Context, url, agent string) (Result, error) {
	return c.CheckWith(ctx, url, agent, nil)
}

// CheckWith is Check asking for more: the site's usage preferences, the
// verdicts of control tokens, the page's own signals, TDMRep (see
// CheckOptions; nil asks for nothing more). An answer lacking what was asked for, or with a field of the
// wrong type, is an error with CodeProtocol.
func (c *Client) CheckWith(ctx context.Context, url, agent string, o *CheckOptions) (Result, error) {
	var r reply
	if o == nil || (!o.Usage && o.Tokens == nil && o.Page == nil && !o.TDM) {
		r = c.plainCheck(ctx, url, agent)
	} else {
		req := map[string]interface{}{"op": "check", "url": url, "agent": agent}
		o.addTo(req)
		r.raw, r.err = c.Do(ctx, req)
	}
	if r.err != nil {
		return Result{URL: url}, r.err
	}
	var w wireCheck
	switch {
	case r.check != nil: // decoded as it was read
		w = *r.check
	case quickCheck(r.raw, &w):
	default:
		if err := unmarshalCheck(r.raw, &w); err != nil {
			return Result{URL: url}, fmt.Errorf("robotsd: decoding the answer: %w", err)
		}
	}
	return w.result(url, o)
}

// unmarshalCheck is json.Unmarshal of a check's answer into *w, through a
// copy of its own so that the caller's w stays off the heap.
func unmarshalCheck(raw []byte, w *wireCheck) error {
	var v wireCheck
	err := json.Unmarshal(raw, &v)
	*w = v
	return err
}

// plainCheck sends a check of nothing more than url and agent: the line
// Do would write (keys in json.Marshal's order, strings as it quotes
// them), built without a map or reflection over one.
func (c *Client) plainCheck(ctx context.Context, url, agent string) reply {
	id := atomic.AddUint64(&c.nextID, 1)
	line := make([]byte, 0, len(url)+len(agent)+56)
	line = appendJSONString(append(line, `{"agent":`...), agent)
	line = strconv.AppendUint(append(line, `,"id":`...), id, 10)
	line = appendJSONString(append(line, `,"op":"check","url":`...), url)
	line = append(line, '}')
	if len(line) > c.opts.MaxLine {
		return reply{err: &Error{Code: CodeLineTooLong,
			Message: fmt.Sprintf("request of %d bytes is over MaxLine (%d)", len(line), c.opts.MaxLine)}}
	}
	return c.roundTrip(ctx, id, append(line, '\n'))
}

// appendJSONString appends s as json.Marshal writes it: quoted as it is
// when it is printable ASCII that json.Marshal leaves alone (no '"', '\\',
// '<', '>' or '&'), else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// CheckMany checks many URLs for one agent with robotsd's batch check, in
// requests of at most BatchLimit URLs and MaxLine bytes. The requests go
// one after another: a batch of origins robotsd has not cached may hold
// up to 1000 of the 1024 checks it lets a connection wait on fetches, and
// once answered its origins are cached for the next. The results come in
// the order of urls; a URL robotsd could not check has its Err set. On an
// error the batches not yet sent are not sent. The whole call has one
// deadline: ctx's, else Options.Timeout.
func (c *Client) CheckMany(ctx context.Context, urls []string, agent string) ([]Result, error) {
	return c.batch(ctx, urls, agent, true, nil)
}

// CheckManyWith is CheckMany asking for more, as CheckWith.
func (c *Client) CheckManyWith(ctx context.Context, urls []string, agent string, o *CheckOptions) ([]Result, error) {
	return c.batch(ctx, urls, agent, true, o)
}

// Warm starts robotsd fetching the robots.txt of the origins of urls
// without waiting ("wait":false): an origin not cached yet gives a Pending
// result, a cached one its verdict.
func (c *Client) Warm(ctx context.Context, urls []string, agent string) ([]Result, error) {
	return c.batch(ctx, urls, agent, false, nil)
}

type span struct {
	start, end int
	err        *Error // the URL at start cannot be sent even alone
}

// spans cuts urls into runs that each fit one request line.
func (c *Client) spans(urls []string, agent string, wait bool, o *CheckOptions) []span {
	probe := map[string]interface{}{"op": "check", "urls": []string{}, "agent": agent,
		"id": uint64(math.MaxUint64)}
	if !wait {
		probe["wait"] = false
	}
	o.addTo(probe)
	b, _ := json.Marshal(probe)
	base := len(b)
	var out []span
	start, size := 0, base
	for i, u := range urls {
		enc, _ := json.Marshal(u)
		add := len(enc) + 1 // and a comma
		if base+add > c.opts.MaxLine {
			if i > start {
				out = append(out, span{start: start, end: i})
			}
			msg := fmt.Sprintf("a URL of %d bytes does not fit in MaxLine (%d)", len(enc), c.opts.MaxLine)
			out = append(out, span{start: i, end: i + 1, err: &Error{Code: CodeLineTooLong, Message: msg, URL: u}})
			start, size = i+1, base
			continue
		}
		if i-start >= BatchLimit || size+add > c.opts.MaxLine {
			out = append(out, span{start: start, end: i})
			start, size = i, base
		}
		size += add
	}
	if start < len(urls) {
		out = append(out, span{start: start, end: len(urls)})
	}
	return out
}

func (c *Client) batch(ctx context.Context, urls []string, agent string, wait bool, o *CheckOptions) ([]Result, error) {
	if o != nil && o.Page != nil {
		return nil, &Error{Code: CodeBadRequest, Message: "a page goes with a check of one URL, not a batch"}
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	out := make([]Result, len(urls))
	for _, sp := range c.spans(urls, agent, wait, o) {
		if sp.err != nil {
			out[sp.start] = Result{URL: urls[sp.start], Err: sp.err}
			continue
		}
		if err := c.batchOne(ctx, urls[sp.start:sp.end], agent, wait, o, out[sp.start:sp.end]); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (c *Client) batchOne(ctx context.Context, urls []string, agent string, wait bool, o *CheckOptions,
	out []Result) error {
	req := map[string]interface{}{"op": "check", "urls": urls, "agent": agent}
	if !wait {
		req["wait"] = false
	}
	o.addTo(req)
	raw, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	var w wireCheck
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("robotsd: decoding the answer: %w", err)
	}
	if len(w.Results) != len(urls) {
		return &Error{Code: CodeInternal,
			Message: fmt.Sprintf("%d results for %d URLs", len(w.Results), len(urls))}
	}
	for i := range w.Results {
		r, err := w.Results[i].result(urls[i], o)
		if err != nil {
			return err
		}
		out[i] = r
	}
	return nil
}

// Ping returns robotsd's version.
func (c *Client) Ping(ctx context.Context) (string, error) {
	var a struct {
		Version string `json:"version"`
	}
	err := c.doInto(ctx, map[string]interface{}{"op": "ping"}, &a)
	return a.Version, err
}

// Stats returns robotsd's counters under the protocol's names
// ("cache_entries", "hits", ...).
func (c *Client) Stats(ctx context.Context) (map[string]int64, error) {
	var a struct {
		Stats map[string]int64 `json:"stats"`
	}
	err := c.doInto(ctx, map[string]interface{}{"op": "stats"}, &a)
	return a.Stats, err
}

// Purge drops one origin from the cache and returns the entries dropped.
func (c *Client) Purge(ctx context.Context, origin string) (int, error) {
	var a struct {
		Purged int `json:"purged"`
	}
	err := c.doInto(ctx, map[string]interface{}{"op": "purge", "origin": origin}, &a)
	return a.Purged, err
}

// PurgeAll drops every origin from the cache and returns the entries dropped.
func (c *Client) PurgeAll(ctx context.Context) (int, error) {
	var a struct {
		Purged int `json:"purged"`
	}
	err := c.doInto(ctx, map[string]interface{}{"op": "purge", "all": true}, &a)
	return a.Purged, err
}

func (c *Client) doInto(ctx context.Context, req map[string]interface{}, v interface{}) error {
	raw, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("robotsd: decoding the answer: %w", err)
	}
	return nil
}
