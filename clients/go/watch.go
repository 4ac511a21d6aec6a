package robotsd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"
)

// AgentChange is what a change means for one agent (see the protocol's
// "watch"): the patterns newly disallowed and newly allowed, and whether its
// usage preferences changed when robotsd reports that (nil: not reported).
type AgentChange struct {
	NewlyDisallowed []string `json:"newly_disallowed"`
	NewlyAllowed    []string `json:"newly_allowed"`
	UsageChanged    *bool    `json:"usage_changed,omitempty"`
}

// ChangeEvent is one version change of an origin's robots.txt. Old is ""
// for the first version robotsd knows of the origin. An agent maps to nil
// when robotsd could not tell (a change relayed from another instance too
// large to carry).
type ChangeEvent struct {
	Origin string                  `json:"origin"`
	Old    string                  `json:"old"`
	New    string                  `json:"new"`
	At     float64                 `json:"at"`
	State  string                  `json:"state"`
	Agents map[string]*AgentChange `json:"agents"`
}

// maxEventLine bounds one line of the feed (robotsd's --max-output).
const maxEventLine = 64 << 20

// Watch subscribes to robotsd's change feed for origins (none: all of them)
// and agents (none: "*") on a connection of its own. Events arrive on the
// channel, which is closed when ctx ends. When the connection breaks
// (robotsd restarted) or robotsd drops the watcher for reading too slowly,
// Watch connects and subscribes again by itself; changes made meanwhile are
// not replayed. The first subscription is made before Watch returns: a
// request robotsd refuses, or no robotsd within ConnectTimeout, is the
// error.
func (c *Client) Watch(ctx context.Context, origins, agents []string) (<-chan ChangeEvent, error) {
	req := map[string]interface{}{"op": "watch", "id": 1}
	if len(origins) > 0 {
		req["origins"] = origins
	} else {
		req["all"] = true
	}
	if len(agents) > 0 {
		req["agents"] = agents
	}
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	nc, r, err := c.subscribe(ctx, line)
	if err != nil {
		return nil, err
	}
	out := make(chan ChangeEvent)
	go c.watchLoop(ctx, line, nc, r, out)
	return out, nil
}

// subscribe dials, sends the watch line and checks its answer.
func (c *Client) subscribe(ctx context.Context, line []byte) (net.Conn, *bufio.Reader, error) {
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(c.opts.Timeout))
	}
	r := bufio.NewReaderSize(nc, 1<<16)
	var ans struct {
		OK    bool       `json:"ok"`
		Error *wireError `json:"error"`
	}
	_, err = nc.Write(line)
	var first []byte
	if err == nil {
		first, err = readEventLine(r)
	}
	if err == nil {
		err = json.Unmarshal(first, &ans)
	}
	if err != nil {
		nc.Close()
		return nil, nil, connError("watch: %v", err, err)
	}
	if !ans.OK {
		nc.Close()
		return nil, nil, ans.Error.toError("")
	}
	nc.SetDeadline(time.Time{})
	return nc, r, nil
}

// readEventLine reads one line of at most maxEventLine bytes (its newline
// dropped).
func readEventLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, more, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, part...)
		if len(line) > maxEventLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxEventLine)
		}
		if !more {
			return line, nil
		}
	}
}

// watchConn is the watch's current connection, closed by the loop after
// a break or by the goroutine that waits for ctx's end.
type watchConn struct {
	mu   sync.Mutex
	nc   net.Conn
	done bool
}

// set installs nc; false (nc closed) once ctx has ended.
func (w *watchConn) set(nc net.Conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		nc.Close()
		return false
	}
	w.nc = nc
	return true
}

// close closes the current connection; for good when final.
func (w *watchConn) close(final bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.nc != nil {
		w.nc.Close()
		w.nc = nil
	}
	w.done = w.done || final
}

// watchLoop reads events into out, subscribing again after a break.
func (c *Client) watchLoop(ctx context.Context, line []byte, nc net.Conn, r *bufio.Reader, out chan<- ChangeEvent) {
	defer close(out)
	w := &watchConn{nc: nc}
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-ctx.Done():
		case <-ended:
		}
		w.close(true)
	}()
	pause := 50 * time.Millisecond
	for readEvents(ctx, r, out) {
		w.close(false)
		for {
			if sleep(ctx, pause) != nil {
				return
			}
			if pause *= 2; pause > 2*time.Second {
				pause = 2 * time.Second
			}
			n, rd, err := c.subscribe(ctx, line)
			if err != nil {
				continue
			}
			if !w.set(n) {
				return
			}
			r, pause = rd, 50*time.Millisecond
			break
		}
	}
}

// readEvents sends the events read on r to out until the connection ends
// (true: subscribe again) or ctx does (false).
func readEvents(ctx context.Context, r *bufio.Reader, out chan<- ChangeEvent) bool {
	for {
		line, err := readEventLine(r)
		if err != nil {
			return ctx.Err() == nil
		}
		var head struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(line, &head) != nil {
			continue
		}
		if head.Event == "dropped" {
			return ctx.Err() == nil
		}
		var ev ChangeEvent
		if head.Event != "changed" || json.Unmarshal(line, &ev) != nil {
			continue
		}
		select {
		case out <- ev:
		case <-ctx.Done():
			return false
		}
	}
}
