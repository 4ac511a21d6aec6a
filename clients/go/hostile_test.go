package robotsd_test

import (
	"bufio"
	"context"
	"errors"
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
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					answer(c, line)
				}
			}()
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
