package robotsd

import (
	"encoding/json"
	"fmt"
)

// Page is what a worker received with the page it fetched for a URL, sent
// with a single check (CheckOptions.Page): the response header lines as
// name and value, and the name and content of the <meta> elements of the
// page's <head> (robotsd parses no HTML).
type Page struct {
	Headers [][2]string `json:"headers"`
	Meta    [][2]string `json:"meta"`
}

// pageJSON is p as the protocol wants it: absent lists as [].
func (p *Page) pageJSON() map[string][][2]string {
	h, m := p.Headers, p.Meta
	if h == nil {
		h = [][2]string{}
	}
	if m == nil {
		m = [][2]string{}
	}
	return map[string][][2]string{"headers": h, "meta": m}
}

// RobotsTagSource is one page field that gave robots rules.
type RobotsTagSource struct {
	Source string `json:"source"` // "header" or "meta"
	Field  string `json:"field"`  // the lowercased header or meta name
	Value  string `json:"value"`  // as received
}

// RobotsTag is the union of the page's robots rules (Robots-Tag,
// X-Robots-Tag, robots <meta>) that apply to the check's agent. They are
// reported, not mapped onto purposes (noai is not train-ai).
type RobotsTag struct {
	Rules  []string          // e.g. "noindex", "noai"
	Values map[string]string // the valued rules: "max-snippet" -> "0", ...
	From   []RobotsTagSource // the fields the rules came from
}

// UnmarshalJSON requires rules, values and from, each of its type.
func (t *RobotsTag) UnmarshalJSON(b []byte) error {
	var w struct {
		Rules  *[]string          `json:"rules"`
		Values *map[string]string `json:"values"`
		From   *[]RobotsTagSource `json:"from"`
	}
	if err := strictObject(b, &w); err != nil {
		return err
	}
	if w.Rules == nil || w.Values == nil || w.From == nil {
		return fmt.Errorf("robots_tag without rules, values or from: %s", b)
	}
	*t = RobotsTag{Rules: *w.Rules, Values: *w.Values, From: *w.From}
	return nil
}

// Evidence names the inputs of an answer to a check with a page: the
// robots.txt and tdmrep.json versions used ("" when none) and the first
// 16 hex digits of the SHA-256 of the page input robotsd read.
type Evidence struct {
	Robots string
	TDMRep string
	Page   string
}

// UnmarshalJSON requires page; robots and tdmrep may be null.
func (e *Evidence) UnmarshalJSON(b []byte) error {
	var w struct {
		Robots *string `json:"robots"`
		TDMRep *string `json:"tdmrep"`
		Page   *string `json:"page"`
	}
	if err := strictObject(b, &w); err != nil {
		return err
	}
	if w.Page == nil {
		return fmt.Errorf("evidence without page: %s", b)
	}
	*e = Evidence{Robots: str(w.Robots), TDMRep: str(w.TDMRep), Page: *w.Page}
	return nil
}

// TDM is the TDMRep answer for a URL (CheckOptions.TDM).
type TDM struct {
	State       string // "rules", "invalid", "none", "unreachable" or "pending"
	Reservation *int   // 0 or 1; nil when no member matches or no rules
	Policy      string // the tdm-policy URL; "" when none
	Location    string // the deciding tdmrep.json member's; "" when none
	Version     string // of tdmrep.json
	From        string // "tdmrep.json", "header" or "meta"; "" when none
}

// UnmarshalJSON requires state and a reservation of 0, 1 or null.
func (d *TDM) UnmarshalJSON(b []byte) error {
	var w struct {
		State       *string `json:"state"`
		Reservation *int    `json:"reservation"`
		Policy      *string `json:"policy"`
		Location    *string `json:"location"`
		Version     *string `json:"version"`
		From        *string `json:"from"`
	}
	if err := strictObject(b, &w); err != nil {
		return err
	}
	if w.State == nil {
		return fmt.Errorf("tdm without state: %s", b)
	}
	if w.Reservation != nil && *w.Reservation != 0 && *w.Reservation != 1 {
		return fmt.Errorf("tdm reservation %d", *w.Reservation)
	}
	*d = TDM{State: *w.State, Reservation: w.Reservation, Policy: str(w.Policy),
		Location: str(w.Location), Version: str(w.Version), From: str(w.From)}
	return nil
}

// wireSignals holds an answer's page and TDMRep fields as robotsd sent
// them.
type wireSignals struct {
	RobotsTag json.RawMessage `json:"robots_tag"`
	Evidence  json.RawMessage `json:"evidence"`
	TDM       json.RawMessage `json:"tdm"`
}

// decode fills r's robots_tag, evidence and tdm as o asked; a page's
// fields missing or of the wrong type are a CodeProtocol error, a tdm
// absent or null leaves r.TDM nil (a robotsd that does not answer it).
func (w *wireSignals) decode(o *CheckOptions, r *Result) *Error {
	if o.Page != nil {
		if len(w.RobotsTag) == 0 || len(w.Evidence) == 0 {
			return protocolError("page sent and not answered (a robotsd without the page's signals?)")
		}
		if !isNull(w.RobotsTag) {
			r.RobotsTag = &RobotsTag{}
			if err := json.Unmarshal(w.RobotsTag, r.RobotsTag); err != nil {
				return protocolError("robots_tag: %v", err)
			}
		}
		r.Evidence = &Evidence{}
		if err := json.Unmarshal(w.Evidence, r.Evidence); err != nil {
			return protocolError("evidence: %v", err)
		}
	}
	if o.TDM && len(w.TDM) != 0 && !isNull(w.TDM) {
		r.TDM = &TDM{}
		if err := json.Unmarshal(w.TDM, r.TDM); err != nil {
			return protocolError("tdm: %v", err)
		}
	}
	return nil
}
