package robotsd

import (
	"context"
	"net"
	"testing"
	"time"
)

// A caller whose answer the holder of the read side before it read and
// handed over (before this one took the read side) returns it at once,
// not at its deadline.
func TestALeaderTakesTheAnswerReadBeforeIt(t *testing.T) {
	nc, peer := net.Pipe()
	defer peer.Close()
	cn := newConn(nc)
	defer cn.kill(errLost)
	cl := &call{id: 1, res: make(chan reply, 1)}
	if !cn.register(cl) {
		t.Fatal("a new connection refused a call")
	}
	cn.dispatch([]byte(`{"id":1,"ok":true,"allowed":true}` + "\n")) // as the holder before it
	b := bound{ctx: context.Background(), deadline: time.Now().Add(5 * time.Second), lead: true}
	t0 := time.Now()
	r := cn.await(&b, cl)
	if r.err != nil || string(r.raw) != `{"id":1,"ok":true,"allowed":true}`+"\n" {
		t.Fatalf("got %q, %v", r.raw, r.err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("the answer came after %v, at the deadline", d)
	}
	if cn.takeRead() != true {
		t.Fatal("the read side was not given up")
	}
}
