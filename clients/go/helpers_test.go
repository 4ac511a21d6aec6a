package robotsd_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// origin is a real local HTTP server: per-host robots.txt scenarios (a
// hold answers only on release) and a log of the requests it received.
type origin struct {
	srv     *httptest.Server
	mu      sync.Mutex
	robots  map[string]scenario
	hits    map[string]int
	release chan struct{}
}

type scenario struct {
	status int
	body   string
	hold   bool
}

func newOrigin() *origin {
	o := &origin{robots: map[string]scenario{}, hits: map[string]int{}, release: make(chan struct{})}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	return o
}

func (o *origin) port() string {
	_, p, _ := net.SplitHostPort(o.srv.Listener.Addr().String())
	return p
}

func (o *origin) set(host, body string, hold bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.robots[host] = scenario{status: 200, body: body, hold: hold}
}

// setStatus: host's /robots.txt answers status (an empty body).
func (o *origin) setStatus(host string, status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.robots[host] = scenario{status: status}
}

func (o *origin) hitsOf(host string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[host]
}

// releaseAll answers every held request; later ones are held again.
func (o *origin) releaseAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.release)
	o.release = make(chan struct{})
}

func (o *origin) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	o.mu.Lock()
	o.hits[host]++
	sc, ok := o.robots[host]
	release := o.release
	o.mu.Unlock()
	if !ok || r.URL.Path != "/robots.txt" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if sc.hold {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(sc.status)
	fmt.Fprint(w, sc.body)
}

// daemon is the real robotsd ($ROBOTSD) on a private socket, every origin
// sent to the origin server with --connect-to.
type daemon struct {
	dir, socket, log string
	args             []string
	cmd              *exec.Cmd
	exited           chan error // its Wait's result (kept there once read)
}

func newDaemon(o *origin, extra ...string) (*daemon, error) {
	dir, err := os.MkdirTemp("", "robotsd-go-")
	if err != nil {
		return nil, err
	}
	d := &daemon{dir: dir, socket: filepath.Join(dir, "robotsd.sock"), log: filepath.Join(dir, "stderr.log")}
	conf := filepath.Join(dir, "empty.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		return nil, err
	}
	d.args = append([]string{"-f", "-c", conf, "-s", d.socket, "--log-level", "debug",
		"--connect-to", "::127.0.0.1:" + o.port()}, extra...)
	return d, d.start()
}

// start runs robotsd and waits (bounded) until its socket accepts.
func (d *daemon) start() error {
	logf, err := os.OpenFile(d.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	d.cmd = exec.Command(os.Getenv("ROBOTSD"), d.args...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	d.exited = exited
	go func() { exited <- d.cmd.Wait() }()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		if c, err := net.Dial("unix", d.socket); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("robotsd exited at start (%v):\n%s", err, d.logTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
	d.cmd.Process.Kill()
	return fmt.Errorf("robotsd did not start on %s:\n%s", d.socket, d.logTail())
}

// stop sends SIGTERM and waits; an error unless robotsd exited 0.
func (d *daemon) stop() error {
	if d.exited == nil {
		return nil
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case err := <-d.exited:
		d.exited <- err
		if err != nil {
			return fmt.Errorf("robotsd: %v\n%s", err, d.logTail())
		}
		return nil
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		return fmt.Errorf("robotsd did not exit within 20 s of SIGTERM")
	}
}

func (d *daemon) logTail() string {
	b, err := os.ReadFile(d.log)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

func (d *daemon) cleanup() {
	if d.exited != nil {
		select {
		case err := <-d.exited:
			d.exited <- err
		default:
			d.cmd.Process.Kill()
			<-d.exited
		}
	}
	os.RemoveAll(d.dir)
}

// startDaemon starts a robotsd for one test, stopped (and checked) after it.
func startDaemon(t *testing.T, extra ...string) *daemon {
	t.Helper()
	d, err := newDaemon(testOrigin, extra...)
	if d != nil {
		t.Cleanup(func() {
			if err := d.stop(); err != nil {
				t.Error(err)
			}
			d.cleanup()
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}
