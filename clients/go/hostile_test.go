package robotsd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	robotsd "robotsd.dev/client"
)

// peer is a scripted Unix socket in robotsd's place: each request line is
// answered by answer(conn, line).
func peer(t *testing.T, answer func(net.Conn, []byte)) string {
	return listen(t, func(_ int, c net.Conn, r *bufio.Reader) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			answer(c, line)
		}
	})
}

// listen is a scripted Unix socket in robotsd's place: serve runs on each
// connection accepted, with its number (0 first), which it closes after.
func listen(t *testing.T, serve func(int, net.Conn, *bufio.Reader)) string {
	path := filepath.Join(t.TempDir(), "robotsd.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for n := 0; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(n int) {
				defer c.Close()
				serve(n, c, bufio.NewReader(c))
			}(n)
		}
	}()
	return path
}

// An answer line without end is cut at MaxAnswer: the call fails with
// ErrConnection at once, memory bounded, the peer cut off.
func TestAnswerLineOverTheBoundIsRefused(t *testing.T) {
	var sent int64
	path := peer(t, func(c net.Conn, _ []byte) {
		c.Write([]byte(`{"id":1,"ok":true,"pad":"`))
		chunk := []byte(strings.Repeat("x", 1<<20))
		for i := 0; i < 4*(robotsd.MaxAnswer>>20); i++ {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			atomic.AddInt64(&sent, int64(len(chunk)))
		}
	})
	cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 20 * time.Second})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := cl.Check(ctx, "http://a.test/", "A")
	var e *robotsd.Error
	if !errors.As(err, &e) || !errors.Is(err, robotsd.ErrConnection) ||
		!strings.Contains(e.Message, "longer than 67108864 bytes") {
		t.Fatalf("want a too long answer line, got %v", err)
	}
	if n := atomic.LoadInt64(&sent); n >= 2*robotsd.MaxAnswer {
		t.Fatalf("the client read %d bytes", n)
	}
}

// allowed:"false" (a string) is refused, never read as a verdict.
func TestNonBooleanAllowedIsRefused(t *testing.T) {
	path := peer(t, func(c net.Conn, line []byte) {
		c.Write([]byte(`{"id":1,"ok":true,"allowed":"false","origin":"http://a.test"}` + "\n"))
	})
	cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 20 * time.Second})
	defer cl.Close()
	r, err := cl.Check(context.Background(), "http://a.test/", "A")
	if err == nil {
		t.Fatalf("want an error, got %+v", r)
	}
}

// A version that is neither a string nor null is refused.
func TestNonStringVersionIsRefused(t *testing.T) {
	for _, v := range []string{"7", "false", `["ab"]`} {
		path := peer(t, func(c net.Conn, line []byte) {
			c.Write([]byte(`{"id":1,"ok":true,"allowed":true,"origin":"http://a.test","version":` + v + "}\n"))
		})
		cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 20 * time.Second})
		r, err := cl.Check(context.Background(), "http://a.test/", "A")
		cl.Close()
		if err == nil {
			t.Fatalf("version %s: want an error, got %+v", v, r)
		}
	}
}

// requestID is the id of a request line the client sent.
func requestID(t *testing.T, line []byte) uint64 {
	var req struct {
		ID uint64 `json:"id"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		t.Errorf("request %q: %v", line, err)
	}
	return req.ID
}

// Answers for no request the client sent are never handed to the call,
// which fails with CodeProtocol at once (not at its deadline).
func TestAnAnswerNotAskedForIsRefused(t *testing.T) {
	const verdict = `"ok":true,"allowed":true,"origin":"http://a.test","source":"cache","reason":"no_rule"`
	cases := []struct {
		name, id, why string
	}{
		{"null", "null", "ok answer of id null"},
		{"float", "%d.0", "id 1.0,"},
		{"string", `"%d"`, `id "1",`},
		{"bool", "true", "id true,"},
		{"never sent", "1%d", "id 11,"},
		{"none", "", "without an id"},
	}
	for _, tc := range cases {
		path := peer(t, func(c net.Conn, line []byte) {
			id := tc.id
			if strings.Contains(id, "%d") {
				id = fmt.Sprintf(id, requestID(t, line))
			}
			if id == "" {
				c.Write([]byte("{" + verdict + "}\n"))
				return
			}
			c.Write([]byte(`{"id":` + id + "," + verdict + "}\n"))
		})
		cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 20 * time.Second})
		r, err := cl.Check(context.Background(), "http://a.test/", "A")
		cl.Close()
		var e *robotsd.Error
		if !errors.As(err, &e) || e.Code != robotsd.CodeProtocol || !strings.Contains(e.Message, tc.why) {
			t.Errorf("%s: want a protocol error naming %q, got %+v, %v", tc.name, tc.why, r, err)
		}
	}
}

// A verdict's allowed, origin, source and reason, a pending answer's
// origin: missing is an error, never a zero value (allowed false).
func TestAnAnswerWithoutARequiredFieldIsRefused(t *testing.T) {
	fields := map[string]string{"allowed": "true", "origin": `"http://a.test"`,
		"source": `"cache"`, "reason": `"no_rule"`}
	for drop := range fields {
		var parts []string
		for k, v := range fields {
			if k != drop {
				parts = append(parts, `"`+k+`":`+v)
			}
		}
		rest := strings.Join(parts, ",")
		path := peer(t, func(c net.Conn, line []byte) {
			fmt.Fprintf(c, `{"id":%d,"ok":true,%s}`+"\n", requestID(t, line), rest)
		})
		cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 20 * time.Second})
		r, err := cl.Check(context.Background(), "http://a.test/", "A")
		cl.Close()
		var e *robotsd.Error
		if !errors.As(err, &e) || e.Code != robotsd.CodeProtocol || !strings.Contains(e.Message, "no "+drop) {
			t.Errorf("without %s: want a protocol error, got %+v, %v", drop, r, err)
		}
	}
	path := peer(t, func(c net.Conn, line []byte) {
		fmt.Fprintf(c, `{"id":%d,"ok":true,"results":[{"url":"http://a.test/","ok":true,"pending":true}]}`+"\n",
			requestID(t, line))
	})
	cl := robotsd.New(&robotsd.Options{Socket: path, Timeout: 20 * time.Second})
	defer cl.Close()
	rs, err := cl.Warm(context.Background(), []string{"http://a.test/"}, "A")
	var e *robotsd.Error
	if !errors.As(err, &e) || e.Code != robotsd.CodeProtocol || !strings.Contains(e.Message, "no origin") {
		t.Errorf("pending without origin: want a protocol error, got %+v, %v", rs, err)
	}
}

// A peer that never reads: a line the socket cannot take whole (the
// caller writes on, not the writer goroutine) still ends at the call's
// deadline, as a timeout.
func TestLineToAPeerThatDoesNotReadTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robotsd.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never read
		}
	}()
	c := robotsd.New(&robotsd.Options{Socket: path, MaxLine: 16 << 20})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = c.Do(ctx, map[string]interface{}{"op": "ping", "pad": strings.Repeat("x", 8<<20)})
	var e *robotsd.Error
	if !errors.As(err, &e) || e.Code != robotsd.CodeTimeout {
		t.Fatalf("Do to a peer that does not read: %v, want a timeout", err)
	}
	if d := time.Since(t0); d < 250*time.Millisecond || d > 5*time.Second {
		t.Fatalf("timed out after %v, want about 300ms", d)
	}
}
