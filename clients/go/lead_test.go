package robotsd_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	robotsd "robotsd.dev/client"
)

// A call whose context only its deadline ends reads the answers itself
// while it waits; these tests hold the read side in one call while others
// are in flight.

// verdict is an answer to request line: allowed when its URL ends in /yes.
func verdict(t *testing.T, line []byte) string {
	allowed := strings.Contains(string(line), `/yes"`)
	return fmt.Sprintf(`{"id":%d,"ok":true,"allowed":%v,"origin":"http://a.test","source":"cache","reason":"no_rule"}`+"\n",
		requestID(t, line), allowed)
}

// Two calls in flight, answered in the other order: the caller reading
// the socket hands the first answer to the other call, which has it at
// once, whether it waits or takes the read side after.
func TestAnAnswerReadByAnotherCaller(t *testing.T) {
	path := listen(t, func(_ int, c net.Conn, r *bufio.Reader) {
		var lines [][]byte
		for len(lines) < 2 {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			lines = append(lines, line)
		}
		c.Write([]byte(verdict(t, lines[1]) + verdict(t, lines[0])))
		r.ReadBytes('\n') // held open
	})
	for _, cancellable := range []bool{false, true} {
		cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 10 * time.Second})
		outs := make(chan error, 2)
		for _, u := range []string{"http://a.test/yes", "http://a.test/no"} {
			c, cancel := context.Background(), context.CancelFunc(func() {})
			if cancellable && u == "http://a.test/no" {
				c, cancel = context.WithTimeout(c, 10*time.Second)
			}
			go func(c context.Context, cancel context.CancelFunc, u string) {
				defer cancel()
				t0 := time.Now()
				r, err := cl.Check(c, u, "A")
				switch {
				case err != nil:
				case r.Allowed != strings.HasSuffix(u, "/yes"):
					err = fmt.Errorf("allowed %v", r.Allowed)
				case time.Since(t0) > 5*time.Second:
					err = fmt.Errorf("answered after %v", time.Since(t0))
				}
				if err != nil {
					err = fmt.Errorf("%s (cancellable %v): %w", u, c.Done() != nil, err)
				}
				outs <- err
			}(c, cancel, u)
		}
		for i := 0; i < 2; i++ {
			if err := <-outs; err != nil {
				t.Error(err)
			}
		}
		cl.Close()
	}
}

// A reader whose deadline passes leaves the read side to the others in
// flight, with the line it had begun to read: the rest of it, sent after,
// completes the other call's answer.
func TestALeaderTimingOutHandsOnItsHalfLine(t *testing.T) {
	timedOut := make(chan struct{})
	slowSent := make(chan struct{})
	path := listen(t, func(_ int, c net.Conn, r *bufio.Reader) {
		if _, err := r.ReadBytes('\n'); err != nil { // the slow call's: never answered
			return
		}
		close(slowSent)
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		ans := verdict(t, line)
		c.Write([]byte(ans[:len(ans)/2]))
		<-timedOut
		c.Write([]byte(ans[len(ans)/2:]))
		r.ReadBytes('\n')
	})
	cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 300 * time.Millisecond})
	defer cl.Close()
	slow := make(chan error, 1)
	go func() {
		_, err := cl.Check(context.Background(), "http://a.test/slow", "A")
		slow <- err
		close(timedOut)
	}()
	<-slowSent
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cl.Check(c, "http://a.test/yes", "A")
	if err != nil || !r.Allowed {
		t.Fatalf("the call in flight: %+v %v", r, err)
	}
	if err := <-slow; !errors.Is(err, robotsd.ErrTimeout) {
		t.Fatalf("the slow call: %v, want a timeout", err)
	}
}

// A connection robotsd closed while no call was in flight (nobody reads
// it then) is found dead by the next write, before any byte goes out: a
// raw line too is sent again, on a new connection.
func TestALineToAConnectionClosedWhileIdleIsSentAgain(t *testing.T) {
	closed := make(chan struct{})
	path := listen(t, func(n int, c net.Conn, r *bufio.Reader) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			if !strings.HasPrefix(string(line), "{") {
				c.Write([]byte(`{"id":null,"ok":false,"error":{"code":"bad_json","message":"not JSON"}}` + "\n"))
				continue
			}
			c.Write([]byte(verdict(t, line)))
			if n == 0 {
				c.Close()
				close(closed)
				return
			}
		}
	})
	cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 10 * time.Second})
	defer cl.Close()
	if _, err := cl.Check(context.Background(), "http://a.test/yes", "A"); err != nil {
		t.Fatal(err)
	}
	<-closed
	_, err := cl.SendRaw(context.Background(), []byte("not json"))
	var e *robotsd.Error
	if !errors.As(err, &e) || e.Code != robotsd.CodeBadJSON {
		t.Fatalf("raw line after the close: %v, want robotsd's bad_json", err)
	}
	if r, err := cl.Check(context.Background(), "http://a.test/no", "A"); err != nil || r.Allowed {
		t.Fatalf("then: %+v %v", r, err)
	}
}
