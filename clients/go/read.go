package robotsd

import (
	"bufio"
	"errors"
	"os"
	"time"
)

// MaxAnswer bounds one answer line; robotsd sending a longer one breaks
// the connection (its calls fail with ErrConnection, not sent again).
const MaxAnswer = 64 << 20

// What ended a reader's turn: its deadline, or the connection's death
// (every call in flight then has its reply).
var (
	errDeadline = errors.New("the reader's deadline passed")
	errKilled   = errors.New("the connection is dead")
)

// takeRead takes the read side if no one holds it and cn is alive.
func (cn *conn) takeRead() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.reading || cn.dead {
		return false
	}
	cn.reading = true
	return true
}

// keepRead: whether calls are in flight, for which the holder of the read
// side keeps it; if none, it is given up.
func (cn *conn) keepRead() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if len(cn.pending) == 0 && len(cn.raw) == 0 {
		cn.reading = false
		return false
	}
	return true
}

// releaseRead gives up the read side: to the reader goroutine while calls
// are in flight.
func (cn *conn) releaseRead() {
	if cn.keepRead() {
		cn.wake <- struct{}{} // never blocks: one holder, one hand-off
	}
}

// await waits for cl's reply: reading it itself when it may (lead: its
// context ends only at its deadline) and no one else reads, else from the
// holder of the read side, the reader goroutine if there was none (unless
// the reply came meanwhile: no reader then for nothing in flight).
func (cn *conn) await(b *bound, cl *call) reply {
	select {
	case r := <-cl.res:
		return r
	default:
	}
	if cn.takeRead() {
		if b.lead {
			return cn.lead(b, cl)
		}
		cn.wake <- struct{}{}
	}
	select {
	case r := <-cl.res:
		return r
	case <-b.context().Done():
		cn.forget(cl)
		return reply{err: b.err()}
	}
}

// lead reads answers, handing each to its call, until cl's comes (read
// by this caller, or by an earlier holder of the read side before this
// one took it), the deadline passes (cl is forgotten: a timeout) or the
// connection dies. The caller holds the read side, and gives it up here
// but on a death.
func (cn *conn) lead(b *bound, cl *call) reply {
	var err error
	for {
		select {
		case r := <-cl.res:
			if err != errKilled {
				cn.releaseRead()
			}
			return r
		default:
		}
		switch err {
		case errDeadline:
			cn.forget(cl)
			cn.releaseRead()
			return reply{err: b.err()}
		case errKilled:
			return <-cl.res // kill sends every call in flight its reply
		}
		err = cn.readOne(b.deadline)
	}
}

// readLoop is the reader goroutine: handed the read side, it reads while
// calls are in flight, until the connection dies.
func (cn *conn) readLoop() {
	for {
		select {
		case <-cn.wake:
		case <-cn.done:
			return
		}
		for cn.readOne(time.Time{}) == nil && cn.keepRead() {
		}
	}
}

// readOne reads one answer line (at most MaxAnswer bytes) and hands it to
// its call: nil, errDeadline once deadline (zero: none) has passed, or
// errKilled when the connection ended (a line too long: not sent again).
func (cn *conn) readOne(deadline time.Time) error {
	cn.setReadDeadline(deadline, false)
	for {
		line, err := cn.readLine()
		if err == nil {
			cn.dispatch(line)
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			var e *Error
			if !errors.As(err, &e) {
				err = errLost
			}
			cn.kill(err)
			return errKilled
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return errDeadline
		}
		cn.setReadDeadline(deadline, true) // an earlier reader's
	}
}

// setReadDeadline makes sure a read does not go past deadline (zero:
// none). Unless forced it only moves nc's read deadline earlier: one that
// is sooner, an earlier caller's, stays, and is moved when a read meets
// it, so that a run of calls one at a time sets it about once per Timeout.
func (cn *conn) setReadDeadline(deadline time.Time, force bool) {
	if !force && (deadline.IsZero() || (!cn.rdl.IsZero() && !cn.rdl.After(deadline))) {
		return
	}
	if cn.nc.SetReadDeadline(deadline) == nil {
		cn.rdl = deadline
	}
}

// readLine reads one line of at most MaxAnswer bytes (its newline
// included); a line begun when a read meets the deadline is kept for the
// next reader.
func (cn *conn) readLine() ([]byte, error) {
	line := cn.partial
	cn.partial = nil
	for {
		frag, err := cn.r.ReadSlice('\n')
		if len(line)+len(frag) > MaxAnswer {
			return nil, connError("robotsd sent an answer line longer than %d bytes", nil, MaxAnswer)
		}
		line = append(line, frag...)
		switch {
		case err == bufio.ErrBufferFull:
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			cn.partial = line
			return nil, err
		case err != nil:
			return nil, err
		default:
			return line, nil
		}
	}
}
