// Package robotsd is a client for robotsd, the robots.txt policy daemon: it
// asks "may this agent fetch this URL?" over robotsd's Unix socket.
//
// A Client holds one connection, opened on the first call and reopened when
// robotsd restarts. It is safe for concurrent use: calls from any number of
// goroutines are pipelined on that connection and their answers matched by
// id. Every call takes a context (its deadline and cancellation apply to
// that call alone) and has a default timeout.
package robotsd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of Options, and robotsd's limits.
const (
	// DefaultSocket is where robotsd listens unless told otherwise.
	DefaultSocket = "/run/robotsd/robotsd.sock"
	// BatchLimit is the most URLs robotsd takes in one batch check.
	BatchLimit = 1000
	// DefaultTimeout bounds a call whose context has no deadline: a check
	// may wait up to 65 s on a robots.txt fetch.
	DefaultTimeout = 70 * time.Second
	// DefaultConnectTimeout is how long to keep trying to (re)connect.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultMaxLine is robotsd's default longest request line, in bytes.
	DefaultMaxLine = 65536
)

// A call whose connection broke is sent again on a new one, this often.
const maxSends = 3

// Options configure a Client. The zero value uses the defaults.
type Options struct {
	// Socket is robotsd's socket; "" means $ROBOTSD_SOCKET, else DefaultSocket.
	Socket string
	// Timeout bounds each call whose context has no deadline (DefaultTimeout).
	Timeout time.Duration
	// ConnectTimeout is how long to keep trying to (re)connect before calls
	// fail with ErrConnection (DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// MaxLine is robotsd's max-line: a longer request fails with
	// ErrLineTooLong without being sent (DefaultMaxLine).
	MaxLine int
}

// ResolveSocket returns path if set, else $ROBOTSD_SOCKET, else DefaultSocket.
func ResolveSocket(path string) string {
	if path != "" {
		return path
	}
	if env := os.Getenv("ROBOTSD_SOCKET"); env != "" {
		return env
	}
	return DefaultSocket
}

// Client is a robotsd client; create it with New. Its methods may be called
// from many goroutines at once.
type Client struct {
	opts   Options
	nextID uint64 // atomic

	mu      sync.Mutex
	cur     *conn
	dialing chan struct{} // closed when the dial under way ends
	closed  bool
}

// New returns a Client for opts (nil: the defaults). It connects on the
// first call.
func New(opts *Options) *Client {
	c := &Client{}
	if opts != nil {
		c.opts = *opts
	}
	c.opts.Socket = ResolveSocket(c.opts.Socket)
	if c.opts.Timeout <= 0 {
		c.opts.Timeout = DefaultTimeout
	}
	if c.opts.ConnectTimeout <= 0 {
		c.opts.ConnectTimeout = DefaultConnectTimeout
	}
	if c.opts.MaxLine <= 0 {
		c.opts.MaxLine = DefaultMaxLine
	}
	return c
}

// Socket returns the socket path the client uses.
func (c *Client) Socket() string { return c.opts.Socket }

// Close fails the calls in flight with ErrConnection and closes the
// connection; later calls fail the same way.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	cn := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cn != nil {
		cn.kill(connError("the client is closed", nil))
	}
	return nil
}

// Do sends any request object (its "id" is set here) and returns the whole
// answer line; an ok:false answer returns its *Error.
func (c *Client) Do(ctx context.Context, req map[string]interface{}) (json.RawMessage, error) {
	id := atomic.AddUint64(&c.nextID, 1)
	msg := make(map[string]interface{}, len(req)+1)
	for k, v := range req {
		msg[k] = v
	}
	msg["id"] = id
	line, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("robotsd: encoding the request: %w", err)
	}
	if len(line) > c.opts.MaxLine {
		return nil, &Error{Code: CodeLineTooLong,
			Message: fmt.Sprintf("request of %d bytes is over MaxLine (%d)", len(line), c.opts.MaxLine)}
	}
	r := c.roundTrip(ctx, id, append(line, '\n'))
	return r.raw, r.err
}

// SendRaw sends one line as it is (a newline is added if missing) and
// returns the next answer that has "id":null, as robotsd gives to lines it
// cannot parse (bad_json). For tests and debugging.
func (c *Client) SendRaw(ctx context.Context, line []byte) (json.RawMessage, error) {
	buf := append([]byte(nil), line...)
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n')
	}
	r := c.roundTrip(ctx, 0, buf)
	return r.raw, r.err
}

// roundTrip sends line as call id and waits for its answer, sending it
// again on a new connection when robotsd closed the old one.
func (c *Client) roundTrip(ctx context.Context, id uint64, line []byte) reply {
	b := c.bound(ctx)
	defer b.release()
	for sends := 1; ; sends++ {
		cn, err := c.conn(&b)
		if err != nil {
			return reply{err: err}
		}
		cl := &call{id: id, bytes: len(line) - 1, res: make(chan reply, 1)}
		r := c.send(&b, cn, cl, line)
		unsent := errors.Is(r.err, errUnsent)
		if !unsent && !errors.Is(r.err, errLost) {
			return r
		}
		c.drop(cn)
		if (id == 0 && !unsent) || sends >= maxSends {
			return reply{err: connError("robotsd closed the connection", nil)}
		}
		if !cn.hadAnswer() { // refused, or robotsd stopping: pause
			if err := sleep(b.context(), 100*time.Millisecond); err != nil {
				return reply{err: err}
			}
		}
	}
}

// send puts one call on cn and waits for its reply.
func (c *Client) send(b *bound, cn *conn, cl *call, line []byte) reply {
	if !cn.register(cl) {
		return reply{err: errUnsent}
	}
	if err := cn.put(b, line); err != nil {
		cn.forget(cl)
		return reply{err: err}
	}
	return cn.await(b, cl)
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// bound is when a call ends: its context, and its deadline (the
// context's, else Options.Timeout from the start). A context that nothing
// cancels (Done is nil: context.Background()) is kept as it is, its
// deadline apart, until a wait needs one that ends there (made then), and
// its call may read its own answer (lead), with the deadline as the
// socket's.
type bound struct {
	ctx      context.Context
	deadline time.Time
	lead     bool
	cancel   context.CancelFunc // nil while ctx is the caller's own
}

func (c *Client) bound(ctx context.Context) bound {
	if ctx.Done() != nil {
		ctx, cancel := c.withTimeout(ctx)
		deadline, _ := ctx.Deadline()
		return bound{ctx: ctx, deadline: deadline, cancel: cancel}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.opts.Timeout)
	}
	return bound{ctx: ctx, deadline: deadline, lead: true}
}

// context returns a context that ends at the call's end.
func (b *bound) context() context.Context {
	if b.cancel == nil {
		b.ctx, b.cancel = context.WithDeadline(b.ctx, b.deadline)
	}
	return b.ctx
}

func (b *bound) release() {
	if b.cancel != nil {
		b.cancel()
	}
}

// err is the error of a call that its bound ended.
func (b *bound) err() error {
	if b.ctx.Err() == nil {
		return errTimeout() // the socket's deadline, not the context's
	}
	return ctxError(b.ctx)
}

// ctxError: a passed deadline is an *Error with code timeout (wrapping
// context.DeadlineExceeded); a cancellation is context.Canceled.
func ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimeout()
	}
	return ctx.Err()
}

func errTimeout() error {
	return &Error{Code: CodeTimeout, Message: "no answer from robotsd before the deadline",
		Err: context.DeadlineExceeded}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

// drop forgets cn if it is still the current connection.
func (c *Client) drop(cn *conn) {
	c.mu.Lock()
	if c.cur == cn {
		c.cur = nil
	}
	c.mu.Unlock()
}

// conn returns the live connection, dialing one if there is none; one
// goroutine dials while the others wait for it.
func (c *Client) conn(b *bound) (*conn, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return nil, connError("the client is closed", nil)
		}
		if c.cur != nil && !c.cur.isDead() {
			cn := c.cur
			c.mu.Unlock()
			return cn, nil
		}
		if c.dialing == nil {
			break
		}
		wait := c.dialing
		c.mu.Unlock()
		select {
		case <-wait:
		case <-b.context().Done():
			return nil, b.err()
		}
		c.mu.Lock()
	}
	wait := make(chan struct{})
	c.dialing = wait
	c.mu.Unlock()
	nc, err := c.dial(b.context())
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dialing = nil
	close(wait)
	if err != nil {
		return nil, err
	}
	if c.closed {
		nc.Close()
		return nil, connError("the client is closed", nil)
	}
	c.cur = newConn(nc)
	return c.cur, nil
}

// dial connects, trying again with a growing pause (robotsd restarting:
// no socket file, or nobody accepting) for up to ConnectTimeout.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	start := time.Now()
	pause := 20 * time.Millisecond
	for {
		nc, err := d.DialContext(ctx, "unix", c.opts.Socket)
		if err == nil {
			return nc, nil
		}
		if ctx.Err() != nil {
			return nil, ctxError(ctx)
		}
		if time.Since(start)+pause > c.opts.ConnectTimeout {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
				nr := &NotRunningError{Socket: c.opts.Socket, Err: err}
				return nil, &Error{Code: CodeConnection, Message: nr.Error(), Err: nr}
			}
			return nil, connError("cannot connect to robotsd at %s: %v", err, c.opts.Socket, err)
		}
		if err := sleep(ctx, pause); err != nil {
			return nil, err
		}
		if pause *= 2; pause > 500*time.Millisecond {
			pause = 500 * time.Millisecond
		}
	}
}
