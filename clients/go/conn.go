package robotsd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// errLost: the connection broke before the call's answer came; the call
// may be sent again on a new connection.
var errLost = errors.New("robotsd closed the connection")

// errUnsent: the connection broke before any byte of the line went out;
// the line may be sent on a new connection, even one without an id.
var errUnsent = errors.New("robotsd closed the connection before the line went out")

// reply is what a call gets: the whole answer line, or an error; check is
// the line decoded as a check's answer when quickCheck took it as read.
type reply struct {
	raw   json.RawMessage
	err   error
	check *wireCheck
}

// call is one request in flight on a conn. id 0 marks a raw line, which
// robotsd answers with "id":null.
type call struct {
	id    uint64
	bytes int
	res   chan reply // buffered: the reader never blocks on a caller
}

// conn is one connection to robotsd: a writer goroutine sends queued
// lines. The read side is held by one goroutine at a time: a caller that
// reads its own answer (one whose context only its deadline ends), which
// hands every other answer it reads to its call, or the reader goroutine
// while calls are in flight that no caller reads for.
type conn struct {
	nc   net.Conn
	rc   syscall.RawConn // nc's descriptor, for a caller's own write; nil: none
	out  chan []byte
	done chan struct{} // closed when the connection is dead
	wmu  sync.Mutex    // held while a line is being written
	wake chan struct{} // hands the read side to the reader goroutine

	// a caller's own write, under wmu (wfn: writeFD, made once, not a
	// closure per write)
	wfn   func(fd uintptr) bool
	wline []byte
	wn    int
	werr  error

	// owned by the holder of the read side
	r       *bufio.Reader
	partial []byte    // the start of a line a reader left at its deadline
	rdl     time.Time // nc's read deadline; zero: none

	mu          sync.Mutex
	pending     map[uint64]*call
	raw         []*call // raw lines, answered in order with "id":null
	dead        bool
	reading     bool   // the read side is held
	answered    bool   // an answer came on this connection
	maxAccepted int    // longest line answered by id
	maxID       uint64 // the highest id sent on this connection
}

func newConn(nc net.Conn) *conn {
	cn := &conn{
		nc:      nc,
		out:     make(chan []byte, 256),
		done:    make(chan struct{}),
		wake:    make(chan struct{}, 1),
		r:       bufio.NewReaderSize(nc, 64<<10),
		pending: make(map[uint64]*call),
	}
	if sc, ok := nc.(syscall.Conn); ok {
		cn.rc, _ = sc.SyscallConn()
	}
	cn.wfn = cn.writeFD
	go cn.writeLoop()
	go cn.readLoop()
	return cn
}

// register adds cl to the calls in flight; false if the conn is dead.
func (cn *conn) register(cl *call) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.dead {
		return false
	}
	if cl.id == 0 {
		cn.raw = append(cn.raw, cl)
	} else {
		cn.pending[cl.id] = cl
		if cl.id > cn.maxID {
			cn.maxID = cl.id
		}
	}
	return true
}

// forget drops a call whose caller gave up; its answer, if it comes, is
// dropped.
func (cn *conn) forget(cl *call) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cl.id != 0 {
		delete(cn.pending, cl.id)
		return
	}
	for i, r := range cn.raw {
		if r == cl {
			cn.raw = append(cn.raw[:i], cn.raw[i+1:]...)
			return
		}
	}
}

func (cn *conn) isDead() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.dead
}

func (cn *conn) hadAnswer() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.answered
}

// kill closes the connection and fails every call in flight with err.
func (cn *conn) kill(err error) {
	cn.mu.Lock()
	if cn.dead {
		cn.mu.Unlock()
		return
	}
	cn.dead = true
	calls := cn.takeAll()
	cn.mu.Unlock()
	close(cn.done)
	cn.nc.Close()
	for _, cl := range calls {
		cl.res <- reply{err: err}
	}
}

// takeAll empties the calls in flight; cn.mu must be held.
func (cn *conn) takeAll() []*call {
	calls := append([]*call(nil), cn.raw...)
	for _, cl := range cn.pending {
		calls = append(calls, cl)
	}
	cn.pending = make(map[uint64]*call)
	cn.raw = nil
	return calls
}

// writeLoop writes the queued lines, flushing when the queue runs dry.
func (cn *conn) writeLoop() {
	w := bufio.NewWriterSize(cn.nc, 64<<10)
	for {
		select {
		case line := <-cn.out:
			cn.wmu.Lock()
			err := writeQueued(w, line, cn.out)
			cn.wmu.Unlock()
			if err != nil {
				cn.kill(errLost)
				return
			}
		case <-cn.done:
			return
		}
	}
}

// writeQueued writes line and the lines queued behind it to w, and
// flushes it.
func writeQueued(w *bufio.Writer, line []byte, out chan []byte) error {
	for {
		if _, err := w.Write(line); err != nil {
			return err
		}
		if len(out) == 0 {
			return w.Flush()
		}
		line = <-out
	}
}

// put sends line: the caller writes it itself when no other line is being
// written or waits to be (one write, as the bare socket would), else it
// goes to the writer's queue. A line the socket takes only in part is
// written on until the deadline; a write that fails kills the connection
// (errUnsent when no byte went out, else errLost).
func (cn *conn) put(b *bound, line []byte) error {
	if cn.rc == nil || !cn.wmu.TryLock() {
		return cn.queue(b, line)
	}
	if len(cn.out) > 0 {
		cn.wmu.Unlock()
		return cn.queue(b, line)
	}
	n, err := cn.writeOnce(line)
	unsent := err != nil // the first write took nothing
	if err == nil && n < len(line) {
		err = cn.writeRest(b.deadline, line[n:])
	}
	cn.wmu.Unlock()
	if err != nil {
		cn.kill(errLost)
		if unsent {
			return errUnsent
		}
		return errLost
	}
	return nil
}

// writeOnce makes one write(2) of line without waiting: the bytes taken
// (0 when the socket's buffer is full). cn.wmu is held.
func (cn *conn) writeOnce(line []byte) (int, error) {
	cn.wline = line
	err := cn.rc.Write(cn.wfn)
	cn.wline = nil
	if err == nil {
		err = cn.werr
	}
	return cn.wn, err
}

// writeFD is writeOnce's write(2) of cn.wline to fd, for rc.Write.
func (cn *conn) writeFD(fd uintptr) bool {
	for {
		cn.wn, cn.werr = syscall.Write(int(fd), cn.wline)
		if cn.werr != syscall.EINTR {
			break
		}
	}
	if cn.werr == syscall.EAGAIN {
		cn.wn, cn.werr = 0, nil
	}
	return true
}

// writeRest writes the rest of a line begun, waiting for the socket until
// the call's deadline; cn.wmu is held, so nothing comes between.
func (cn *conn) writeRest(deadline time.Time, rest []byte) error {
	if err := cn.nc.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err := cn.nc.Write(rest)
	if derr := cn.nc.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// queue hands line to the writer goroutine.
func (cn *conn) queue(b *bound, line []byte) error {
	select {
	case cn.out <- line:
		return nil
	case <-cn.done:
		return nil // the call's reply is errLost
	default:
	}
	select {
	case cn.out <- line:
		return nil
	case <-cn.done:
		return nil
	case <-b.context().Done():
		return b.err()
	}
}

// head is the part of an answer the dispatcher reads.
type head struct {
	ID    json.RawMessage `json:"id"`
	OK    bool            `json:"ok"`
	Error *wireError      `json:"error"`
}

// okPrefix is how robotsd begins an ok answer to a request with an id.
var okPrefix = []byte(`{"id":`)

// quickHead reads the head of an ok answer as robotsd writes it,
// {"id":DIGITS,"ok":true,... with no other "id" or "ok" in the line, valid
// JSON, without decoding it into a struct (its caller decodes it all);
// false for any other line, which json.Unmarshal then reads.
func quickHead(line []byte, h *head) bool {
	id, rest, ok := okHead(line)
	if !ok || mayHoldHead(rest) || !json.Valid(line) {
		return false
	}
	h.ID, h.OK, h.Error = id, true, nil
	return true
}

// okHead: the id's digits of a line that begins {"id":DIGITS,"ok":true,
// (DIGITS a uint64's, without a leading 0) and the rest of it from that
// last comma on.
func okHead(line []byte) (id, rest []byte, ok bool) {
	if !bytes.HasPrefix(line, okPrefix) {
		return nil, nil, false
	}
	n := len(okPrefix)
	for n < len(line) && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	if n == len(okPrefix) || n-len(okPrefix) > 20 || line[len(okPrefix)] == '0' ||
		!bytes.HasPrefix(line[n:], []byte(`,"ok":true,`)) {
		return nil, nil, false
	}
	return line[len(okPrefix):n], line[n+10:], true
}

// quickAnswer reads a check's ok answer as robotsd writes it: its head as
// quickHead does, and the line decoded by quickCheck, which takes only
// JSON whose members are a check's, each once (so no other "id" or "ok");
// nil, h untouched, for any other line.
func quickAnswer(line []byte, h *head) *wireCheck {
	id, _, ok := okHead(line)
	if !ok {
		return nil
	}
	var w wireCheck
	if !quickCheck(line, &w) {
		return nil
	}
	h.ID, h.OK, h.Error = id, true, nil
	out := new(wireCheck) // w stays on the stack for the lines declined
	*out = w
	return out
}

// mayHoldHead: whether b may hold a key json.Unmarshal would read into
// head: "id" or "ok" in any case, or anything it could fold to one (an
// escape, a byte outside ASCII).
func mayHoldHead(b []byte) bool {
	for i, c := range b {
		switch {
		case c >= 0x80 || (c == '\\' && i+1 < len(b) && b[i+1] == 'u'):
			return true
		case c == '"' && i+3 < len(b) && b[i+3] == '"':
			w := b[i+1 : i+3]
			if bytes.EqualFold(w, []byte("id")) || bytes.EqualFold(w, []byte("ok")) {
				return true
			}
		}
	}
	return false
}

func (cn *conn) dispatch(line []byte) {
	var h head
	check := quickAnswer(line, &h)
	if check == nil && !quickHead(line, &h) && !unmarshalHead(line, &h) {
		return // not an answer robotsd would send: nothing to match
	}
	var err error
	if !h.OK {
		err = h.Error.toError("")
	}
	if len(h.ID) == 0 {
		cn.kill(protocolError("robotsd sent an answer without an id"))
		return
	}
	if string(h.ID) == "null" {
		cn.anonymous(line, h.OK, err)
		return
	}
	// the id as sent: its digits (1.0, "1" or true is not 1)
	id, perr := strconv.ParseUint(string(h.ID), 10, 64)
	cn.mu.Lock()
	cn.answered = true
	cl := cn.pending[id]
	if perr != nil || id == 0 || id > cn.maxID {
		cn.mu.Unlock()
		cn.kill(protocolError("robotsd answered id %s, which was not sent", h.ID))
		return
	}
	if cl == nil {
		cn.mu.Unlock()
		return // its caller gave up: dropped
	}
	delete(cn.pending, id)
	if cl.bytes > cn.maxAccepted {
		cn.maxAccepted = cl.bytes
	}
	cn.mu.Unlock()
	cl.res <- reply{raw: line, err: err, check: check}
}

// unmarshalHead is json.Unmarshal of an answer's head into *h (through a
// copy, so that dispatch's stays off the heap): false if line is not JSON.
func unmarshalHead(line []byte, h *head) bool {
	var v head
	err := json.Unmarshal(line, &v)
	*h = v
	return err == nil
}

// anonymous handles an answer with "id":null: to a raw line, to a line
// over robotsd's limit, or the refusal of one connection too many. An ok
// one to no raw line answers nothing sent: the peer is not robotsd.
func (cn *conn) anonymous(line []byte, ok bool, err error) {
	var rerr *Error
	errors.As(err, &rerr)
	cn.mu.Lock()
	cn.answered = true
	var targets []*call
	switch {
	case len(cn.raw) == 0 && ok:
		cn.mu.Unlock()
		cn.kill(protocolError("robotsd sent an ok answer of id null, and no request went without an id"))
		return
	case len(cn.raw) > 0:
		targets, cn.raw = cn.raw[:1], cn.raw[1:]
	case rerr != nil && rerr.Code == CodeOverloaded:
		targets = cn.takeAll()
	case rerr != nil && rerr.Code == CodeLineTooLong:
		if cl := cn.tooLong(); cl != nil {
			delete(cn.pending, cl.id)
			targets = []*call{cl}
		}
	}
	cn.mu.Unlock()
	for _, cl := range targets {
		cl.res <- reply{raw: line, err: err}
	}
}

// tooLong picks the call a line_too_long answer is about: robotsd reads
// lines in order, so the first one sent (lowest id) that is longer than
// every line it answered by id, else the longest in flight. cn.mu is held.
func (cn *conn) tooLong() *call {
	var first, longest *call
	for _, cl := range cn.pending {
		if cl.bytes > cn.maxAccepted && (first == nil || cl.id < first.id) {
			first = cl
		}
		if longest == nil || cl.bytes > longest.bytes {
			longest = cl
		}
	}
	if first != nil {
		return first
	}
	return longest
}
