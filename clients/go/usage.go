package robotsd

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Preference is a site's preference for one purpose, from its
// Content-Usage and Content-Signal lines.
type Preference string

// The three preferences robotsd answers.
const (
	PreferenceAllowed    Preference = "allowed"
	PreferenceDisallowed Preference = "disallowed"
	PreferenceUnknown    Preference = "unknown"
)

// UnmarshalJSON accepts only the three preferences.
func (p *Preference) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil || !validPreference(Preference(s)) {
		return fmt.Errorf("not a preference: %s", b)
	}
	*p = Preference(s)
	return nil
}

func validPreference(p Preference) bool {
	return p == PreferenceAllowed || p == PreferenceDisallowed || p == PreferenceUnknown
}

// Purpose is what fetched content is used for.
type Purpose string

// The purposes robotsd answers.
const (
	PurposeTrainAI Purpose = "train-ai"
	PurposeSearch  Purpose = "search"
	PurposeAIInput Purpose = "ai-input"
	PurposeAIUse   Purpose = "ai-use" // Content-Usage ai-use (AIPREF vocab-08)
	// PurposeTDM is TDMRep's text and data mining, in Usage only when
	// CheckOptions.TDM asked for it too (not in Purposes).
	PurposeTDM Purpose = "tdm"
)

// Purposes lists the purposes robotsd answers in every usage answer.
var Purposes = []Purpose{PurposeTrainAI, PurposeSearch, PurposeAIInput, PurposeAIUse}

// Usage maps every purpose to the site's preference for the URL.
type Usage map[Purpose]Preference

// UsageStatement is a Content-Usage or Content-Signal line that decided a
// URL's usage preferences.
type UsageStatement struct {
	Directive string `json:"directive"` // "content-usage" or "content-signal"
	Pattern   string `json:"pattern"`   // the line's path pattern; "/" when it has none
	Line      int    `json:"line"`      // 1-based line in robots.txt
	Value     string `json:"value"`     // the preferences as written
	// Scope is "group", or "file" for a Content-Signal line before the
	// first group; "" when robotsd does not say.
	Scope string `json:"scope,omitempty"`
	// Source is "robots.txt", or "header" for a header of the page sent
	// with CheckOptions.Page (its Pattern "" and Line 0); "" when
	// robotsd does not say.
	Source string `json:"source,omitempty"`
}

// UnmarshalJSON requires every field but scope, each of its type.
func (s *UsageStatement) UnmarshalJSON(b []byte) error {
	var w struct {
		Directive *string `json:"directive"`
		Pattern   *string `json:"pattern"`
		Line      *int    `json:"line"`
		Value     *string `json:"value"`
		Scope     *string `json:"scope"`
		Source    *string `json:"source"`
	}
	if err := strictObject(b, &w); err != nil {
		return err
	}
	header := w.Source != nil && *w.Source == "header"
	if w.Directive == nil || w.Value == nil || (!header && (w.Pattern == nil || w.Line == nil)) {
		return fmt.Errorf("usage statement without directive, pattern, line or value: %s", b)
	}
	if *w.Directive != "content-usage" && *w.Directive != "content-signal" {
		return fmt.Errorf("usage statement of directive %q", *w.Directive)
	}
	*s = UsageStatement{Directive: *w.Directive, Pattern: str(w.Pattern), Value: *w.Value,
		Source: str(w.Source)}
	if w.Line != nil {
		s.Line = *w.Line
	}
	if w.Scope != nil {
		if *w.Scope != "group" && *w.Scope != "file" {
			return fmt.Errorf("usage statement of scope %q", *w.Scope)
		}
		s.Scope = *w.Scope
	}
	return nil
}

// TokenVerdict is the URL's verdict for one control token alone.
type TokenVerdict struct {
	Allowed bool  `json:"allowed"`
	Rule    *Rule `json:"rule"` // the deciding rule, or nil
}

// UnmarshalJSON requires allowed and a well-formed rule or null.
func (t *TokenVerdict) UnmarshalJSON(b []byte) error {
	var w struct {
		Allowed *bool           `json:"allowed"`
		Rule    json.RawMessage `json:"rule"`
	}
	if err := strictObject(b, &w); err != nil {
		return err
	}
	if w.Allowed == nil {
		return fmt.Errorf("token verdict without allowed: %s", b)
	}
	*t = TokenVerdict{Allowed: *w.Allowed}
	if len(w.Rule) == 0 || isNull(w.Rule) {
		return nil
	}
	var r struct {
		Directive *string `json:"directive"`
		Pattern   *string `json:"pattern"`
		Line      *int    `json:"line"`
	}
	if err := strictObject(w.Rule, &r); err != nil {
		return err
	}
	if r.Directive == nil || r.Pattern == nil || r.Line == nil ||
		(*r.Directive != "allow" && *r.Directive != "disallow") {
		return fmt.Errorf("malformed rule: %s", w.Rule)
	}
	t.Rule = &Rule{Directive: *r.Directive, Pattern: *r.Pattern, Line: *r.Line}
	return nil
}

// CheckOptions ask a check for more than the verdict. The zero value (or
// nil) asks for nothing more.
type CheckOptions struct {
	// Usage asks for the site's usage preferences: Result.Usage and
	// Result.UsageFrom.
	Usage bool
	// Tokens asks for the verdicts of these control tokens (e.g.
	// "Google-Extended"; robotsd takes at most 16): Result.Tokens.
	Tokens []string
	// Page sends what came with the fetched page (CheckWith only; a
	// batch with a Page is an error with CodeBadRequest, not sent):
	// Result.RobotsTag and Result.Evidence.
	Page *Page
	// TDM asks for the TDMRep answer: Result.TDM.
	TDM bool
}

func (o *CheckOptions) addTo(req map[string]interface{}) {
	if o == nil {
		return
	}
	if o.Usage {
		req["usage"] = true
	}
	if o.Tokens != nil {
		req["tokens"] = o.Tokens
	}
	if o.TDM {
		req["tdm"] = true
	}
	if o.Page != nil {
		req["page"] = o.Page.pageJSON()
	}
}

func isNull(b json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// strictObject decodes the JSON object b into v; a value that is not an
// object (null included) is an error.
func strictObject(b []byte, v interface{}) error {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("not an object: %s", b)
	}
	return json.Unmarshal(t, v)
}

// wireUsage holds an answer's usage fields as robotsd sent them.
type wireUsage struct {
	Usage     json.RawMessage `json:"usage"`
	UsageFrom json.RawMessage `json:"usage_from"`
	Tokens    json.RawMessage `json:"tokens"`
	wireSignals
}

func protocolError(format string, args ...interface{}) *Error {
	return &Error{Code: CodeProtocol, Message: fmt.Sprintf(format, args...)}
}

// decode fills r's usage fields for an answer with a verdict; what was
// asked for and is missing or of the wrong type is a CodeProtocol error.
func (w *wireUsage) decode(o *CheckOptions, r *Result) *Error {
	if o == nil {
		return nil
	}
	if o.Usage {
		if len(w.Usage) == 0 || len(w.UsageFrom) == 0 {
			return protocolError("usage asked for and not answered (a robotsd without usage preferences?)")
		}
		if !isNull(w.Usage) {
			if err := strictObject(w.Usage, &r.Usage); err != nil {
				return protocolError("usage: %v", err)
			}
			for _, p := range Purposes {
				if _, ok := r.Usage[p]; !ok {
					return protocolError("usage without %s: %s", p, w.Usage)
				}
			}
		}
		if bytes.TrimSpace(w.UsageFrom)[0] != '[' {
			return protocolError("usage_from is not an array: %s", w.UsageFrom)
		}
		r.UsageFrom = []UsageStatement{}
		if err := json.Unmarshal(w.UsageFrom, &r.UsageFrom); err != nil {
			return protocolError("usage_from: %v", err)
		}
	}
	if o.Tokens != nil {
		if len(w.Tokens) == 0 {
			return protocolError("tokens asked for and not answered (a robotsd without control tokens?)")
		}
		if err := strictObject(w.Tokens, &r.Tokens); err != nil {
			return protocolError("tokens: %v", err)
		}
	}
	return w.wireSignals.decode(o, r)
}
