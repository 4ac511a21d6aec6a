package robotsd

import (
	"bytes"
	"strconv"
)

// quickCheck decodes a plain check's ok answer as robotsd writes it
// (no whitespace, ASCII strings without escapes, the members of a verdict
// each at most once, by their exact names) into w, as json.Unmarshal
// would, without reflection; false, with w untouched, for any other line
// (an error, an escape, a member it does not know, a number where an int
// goes that is not one), which its caller gives to json.Unmarshal.
func quickCheck(line []byte, w *wireCheck) bool {
	var out wireCheck
	var seen uint32
	p := &scan{b: bytes.TrimSuffix(line, []byte("\n"))}
	ok := p.members(func(key []byte) bool {
		bit := checkKeys[string(key)]
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		return out.quickMember(bit, p)
	})
	if !ok || !p.end() || !out.OK {
		return false
	}
	*w = out
	return true
}

// checkKeys are the members quickCheck reads, each a bit of its own.
var checkKeys = map[string]uint32{"id": keyID, "ok": keyOK, "pending": keyPending,
	"url": keyURL, "allowed": keyAllowed, "origin": keyOrigin, "source": keySource,
	"reason": keyReason, "version": keyVersion, "http_status": keyHTTPStatus,
	"crawl_delay": keyCrawlDelay, "expires_in": keyExpiresIn, "rule": keyRule}

// ruleKeys are the members of a rule, each a bit of its own.
var ruleKeys = map[string]int{"directive": 1, "pattern": 2, "line": 4}

// The bits of checkKeys.
const (
	keyID = 1 << iota
	keyOK
	keyPending
	keyURL
	keyAllowed
	keyOrigin
	keySource
	keyReason
	keyVersion
	keyHTTPStatus
	keyCrawlDelay
	keyExpiresIn
	keyRule
)

// quickMember reads the value of member bit (of checkKeys) of a check's
// answer into w.
func (w *wireCheck) quickMember(bit uint32, p *scan) bool {
	switch bit {
	case keyID:
		_, ok := p.uint()
		return ok
	case keyOK:
		return p.boolean(&w.OK)
	case keyPending:
		return p.boolean(&w.Pending)
	case keyURL:
		return p.str(&w.URL)
	case keyAllowed:
		return p.null() || p.boolean(newBool(&w.Allowed))
	case keyOrigin:
		return p.null() || p.str(newStr(&w.Origin))
	case keySource:
		return p.null() || p.str(newStr(&w.Source))
	case keyReason:
		return p.null() || p.str(newStr(&w.Reason))
	case keyVersion:
		return p.null() || p.str(newStr(&w.Version))
	case keyHTTPStatus:
		return p.null() || p.int(&w.HTTPStatus)
	case keyCrawlDelay:
		return p.null() || p.float(&w.CrawlDelay)
	case keyExpiresIn:
		return p.null() || p.float(&w.ExpiresIn)
	case keyRule:
		return p.null() || p.rule(&w.Rule)
	}
	return false
}

func newBool(p **bool) *bool {
	*p = new(bool)
	return *p
}

func newStr(p **string) *string {
	*p = new(string)
	return *p
}

func (p *scan) end() bool  { return p.i == len(p.b) }
func (p *scan) null() bool { return p.take("null") }

// take consumes s if the scan is at it.
func (p *scan) take(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// scan reads a JSON text as robotsd writes it, from b[i] on.
type scan struct {
	b []byte
	i int
}

// members reads an object {"key":value,...}, calling member with each key
// when the scan is at its value; false on anything else.
func (p *scan) members(member func(key []byte) bool) bool {
	if !p.take("{") {
		return false
	}
	if p.take("}") {
		return true
	}
	for {
		key, ok := p.text()
		if !ok || !p.take(":") || !member(key) {
			return false
		}
		if p.take("}") {
			return true
		}
		if !p.take(",") {
			return false
		}
	}
}

// text reads a string of printable ASCII without escapes: its bytes.
func (p *scan) text() ([]byte, bool) {
	if !p.take(`"`) {
		return nil, false
	}
	for j := p.i; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			t := p.b[p.i:j]
			p.i = j + 1
			return t, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// str reads a string as text does, into s.
func (p *scan) str(s *string) bool {
	t, ok := p.text()
	if ok {
		*s = string(t)
	}
	return ok
}

func (p *scan) boolean(v *bool) bool {
	if p.take("true") {
		*v = true
		return true
	}
	*v = false
	return p.take("false")
}

// number reads the text of a JSON number (false if there is none).
func (p *scan) number() (string, bool) {
	j := p.i
	for j < len(p.b) && bytes.IndexByte([]byte("+-.0123456789eE"), p.b[j]) >= 0 {
		j++
	}
	s := string(p.b[p.i:j])
	p.i = j
	return s, s != "" && jsonNumber(s)
}

// jsonNumber: whether s is a number in JSON's grammar.
func jsonNumber(s string) bool {
	i := 0
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if i++; i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (p *scan) uint() (uint64, bool) {
	s, ok := p.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// int reads an integer into a new *v, as json.Unmarshal into an int.
func (p *scan) int(v **int) bool {
	s, ok := p.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*v = new(int)
	**v = int(n)
	return true
}

func (p *scan) float(v **float64) bool {
	s, ok := p.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	*v = &f
	return true
}

// rule reads a matched rule: {"directive":...,"pattern":...,"line":N},
// each member once.
func (p *scan) rule(v **Rule) bool {
	var r Rule
	var line *int
	seen := 0
	ok := p.members(func(key []byte) bool {
		bit := ruleKeys[string(key)]
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		switch bit {
		case 1:
			return p.str(&r.Directive)
		case 2:
			return p.str(&r.Pattern)
		}
		return p.int(&line)
	})
	if !ok {
		return false
	}
	if line != nil {
		r.Line = *line
	}
	*v = &r
	return true
}
