package robotsd

import "fmt"

// Error codes robotsd answers (see the protocol's error table), and
// CodeConnection, which the client uses when robotsd cannot be reached,
// and CodeProtocol, for an answer with a field of the wrong type.
const (
	CodeBadJSON           = "bad_json"
	CodeBadRequest        = "bad_request"
	CodeUnknownOp         = "unknown_op"
	CodeBadURL            = "bad_url"
	CodeUnsupportedScheme = "unsupported_scheme"
	CodeLineTooLong       = "line_too_long"
	CodeOverloaded        = "overloaded"
	CodeTimeout           = "timeout"
	CodeNotCached         = "not_cached"
	CodeInternal          = "internal"
	CodeForbidden         = "forbidden" // an admin op (purge) without the right
	CodeConfig            = "config"    // robotsd's config file does not load
	CodeConnection        = "connection"
	CodeProtocol          = "protocol"
)

// Error is an error robotsd answered, or one met on the way to it. Act on
// Code; errors.Is(err, ErrNotCached) and the like compare codes.
type Error struct {
	Code    string // one of the Code constants, or a code a newer robotsd added
	Message string // English for people
	URL     string // in a batch: the URL the error is about
	Err     error  // the cause, for connection errors and deadlines
}

// Error returns "robotsd: CODE: message", with the URL in a batch.
func (e *Error) Error() string {
	s := "robotsd: " + e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.URL != "" {
		s += " (" + e.URL + ")"
	}
	return s
}

// Unwrap returns the cause: a net error, or context.DeadlineExceeded when
// a call's deadline passed.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, ErrTimeout) holds for every timeout.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is, one per code.
var (
	ErrBadJSON           = &Error{Code: CodeBadJSON}
	ErrBadRequest        = &Error{Code: CodeBadRequest}
	ErrUnknownOp         = &Error{Code: CodeUnknownOp}
	ErrBadURL            = &Error{Code: CodeBadURL}
	ErrUnsupportedScheme = &Error{Code: CodeUnsupportedScheme}
	ErrLineTooLong       = &Error{Code: CodeLineTooLong}
	ErrOverloaded        = &Error{Code: CodeOverloaded}
	ErrTimeout           = &Error{Code: CodeTimeout}
	ErrNotCached         = &Error{Code: CodeNotCached}
	ErrInternal          = &Error{Code: CodeInternal}
	ErrForbidden         = &Error{Code: CodeForbidden}
	ErrConfig            = &Error{Code: CodeConfig}
	ErrConnection        = &Error{Code: CodeConnection}
	ErrProtocol          = &Error{Code: CodeProtocol}
)

// wireError is the "error" object of an ok:false answer.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (w *wireError) toError(url string) *Error {
	if w == nil || w.Code == "" {
		return &Error{Code: CodeInternal, Message: "ok:false answer without an error code", URL: url}
	}
	return &Error{Code: w.Code, Message: w.Message, URL: url}
}

// NotRunningError is the cause (Err) of the ErrConnection error a call
// fails with when robotsd is not running: no socket file at Socket, or
// nobody listening on it, for the whole ConnectTimeout.
// errors.Is(err, ErrNotRunning) and errors.As(err, &nr) find it.
type NotRunningError struct {
	Socket string
	Err    error // the last dial error
}

// ErrNotRunning matches every *NotRunningError under errors.Is.
var ErrNotRunning = &NotRunningError{}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("robotsd is not running: cannot connect to %s: %v", e.Socket, e.Err)
}

func (e *NotRunningError) Unwrap() error { return e.Err }

// Is reports whether target is ErrNotRunning.
func (e *NotRunningError) Is(target error) bool { return target == ErrNotRunning }

func connError(format string, cause error, args ...interface{}) *Error {
	return &Error{Code: CodeConnection, Message: fmt.Sprintf(format, args...), Err: cause}
}
