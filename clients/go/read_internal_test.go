package robotsd

import (
	"context"
	"net"
	"testing"
	"time"
)

// A call whose answer the holder of the read side before it read and
// handed over (before this call took the read side) returns it at once,
// not at its deadline, and leaves the read side free: nobody reads for
// nothing in flight. For a call that may read its own answer, and one
// with a cancellable context.
func TestAnAnswerHandedOverBeforeTheCallWaits(t *testing.T) {
	c := New(&Options{Socket: "unused", Timeout: 5 * time.Second})
	for _, cancellable := range []bool{false, true} {
		nc, peer := net.Pipe()
		cn := newConn(nc)
		cl := &call{id: 1, res: make(chan reply, 1)}
		if !cn.register(cl) {
			t.Fatal("a new connection refused a call")
		}
		line := `{"id":1,"ok":true,"allowed":true}` + "\n"
		cn.dispatch([]byte(line)) // as the holder before it
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if cancellable {
			ctx, cancel = context.WithCancel(ctx)
		}
		b := c.bound(ctx)
		t0 := time.Now()
		r := cn.await(&b, cl)
		if r.err != nil || string(r.raw) != line {
			t.Errorf("cancellable %v: got %q, %v", cancellable, r.raw, r.err)
		}
		if d := time.Since(t0); d > time.Second {
			t.Errorf("cancellable %v: the answer came after %v, at the deadline", cancellable, d)
		}
		if !cn.takeRead() {
			t.Errorf("cancellable %v: the read side is held with nothing in flight", cancellable)
		}
		b.release()
		cancel()
		cn.kill(errLost)
		peer.Close()
	}
}
