package robotsd_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	robotsd "robotsd.dev/client"
)

// usageRobots: the expected answers below follow docs/usage-preferences.md:
// per directive the longest match decides, file-scope Content-Signal lines
// apply to every agent, the directives combine per purpose most
// restrictively.
const usageRobots = "Content-Signal: ai-train=no, search=yes\n" + // 1: file scope
	"User-agent: *\n" + // 2
	"Disallow: /private/\n" + // 3
	"Content-Usage: train-ai=y, search=n\n" + // 4
	"Content-Usage: /pub/ search=y\n" + // 5
	"\n" +
	"User-agent: Google-Extended\n" + // 7
	"Disallow: /\n" // 8

func usageSetup(t *testing.T) {
	t.Helper()
	testOrigin.set("usage.test", usageRobots, false)
}

// sameStatements compares ignoring an absent scope on content-usage lines.
func sameStatements(got, want []robotsd.UsageStatement) bool {
	norm := func(l []robotsd.UsageStatement) []robotsd.UsageStatement {
		out := make([]robotsd.UsageStatement, len(l))
		for i, s := range l {
			if s.Scope == "" && s.Directive == "content-usage" {
				s.Scope = "group"
			}
			out[i] = s
		}
		return out
	}
	return reflect.DeepEqual(norm(got), norm(want))
}

var signalLine = robotsd.UsageStatement{Directive: "content-signal", Pattern: "/", Line: 1,
	Value: "ai-train=no, search=yes", Scope: "file"}

func TestCheckWithUsage(t *testing.T) {
	usageSetup(t)
	cases := []struct {
		url   string
		usage robotsd.Usage
		from  []robotsd.UsageStatement
	}{
		// train-ai: Content-Usage allowed, Content-Signal disallowed;
		// search: n against yes
		{"http://usage.test/a", robotsd.Usage{robotsd.PurposeTrainAI: robotsd.PreferenceDisallowed,
			robotsd.PurposeSearch: robotsd.PreferenceDisallowed, robotsd.PurposeAIInput: robotsd.PreferenceUnknown,
			robotsd.PurposeAIUse: robotsd.PreferenceUnknown},
			[]robotsd.UsageStatement{signalLine, {Directive: "content-usage", Pattern: "/", Line: 4,
				Value: "train-ai=y, search=n"}}},
		// /pub/ is the longest match: train-ai unknown there, search y
		{"http://usage.test/pub/x", robotsd.Usage{robotsd.PurposeTrainAI: robotsd.PreferenceDisallowed,
			robotsd.PurposeSearch: robotsd.PreferenceAllowed, robotsd.PurposeAIInput: robotsd.PreferenceUnknown,
			robotsd.PurposeAIUse: robotsd.PreferenceUnknown},
			[]robotsd.UsageStatement{signalLine, {Directive: "content-usage", Pattern: "/pub/", Line: 5,
				Value: "search=y"}}},
	}
	for _, c := range cases {
		r, err := client.CheckWith(ctx(t), c.url, agent, &robotsd.CheckOptions{Usage: true})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Allowed || !reflect.DeepEqual(r.Usage, c.usage) || !sameStatements(r.UsageFrom, c.from) {
			t.Errorf("%s: allowed %v usage %v from %+v; want %v %+v", c.url, r.Allowed, r.Usage, r.UsageFrom, c.usage, c.from)
		}
		if r.Tokens != nil {
			t.Errorf("%s: tokens %v not asked for", c.url, r.Tokens)
		}
	}
	r, err := client.CheckWith(ctx(t), "http://usage.test/private/x", agent, &robotsd.CheckOptions{Usage: true})
	if err != nil || r.Allowed || r.Usage != nil || r.UsageFrom == nil || len(r.UsageFrom) != 0 {
		t.Errorf("disallowed: %+v %v; want usage nil, usage_from empty", r, err)
	}
	r, err = client.Check(ctx(t), "http://usage.test/a", agent)
	if err != nil || r.Usage != nil || r.UsageFrom != nil {
		t.Errorf("plain check: %+v %v", r, err)
	}
}

func TestCheckManyWithUsageAndTokens(t *testing.T) {
	usageSetup(t)
	urls := []string{"http://usage.test/a", "http://usage.test/private/b", "http://gone.test/c"}
	res, err := client.CheckManyWith(ctx(t), urls, agent,
		&robotsd.CheckOptions{Usage: true, Tokens: []string{"Google-Extended", "Applebot-Extended"}})
	if err != nil {
		t.Fatal(err)
	}
	ge := robotsd.TokenVerdict{Allowed: false, Rule: &robotsd.Rule{Directive: "disallow", Pattern: "/", Line: 8}}
	want := []map[string]robotsd.TokenVerdict{
		{"google-extended": ge, "applebot-extended": {Allowed: true}},
		{"google-extended": ge, "applebot-extended": {Allowed: false,
			Rule: &robotsd.Rule{Directive: "disallow", Pattern: "/private/", Line: 3}}},
		{"google-extended": {Allowed: true}, "applebot-extended": {Allowed: true}}, // 404: allow all
	}
	for i, r := range res {
		if !reflect.DeepEqual(r.Tokens, want[i]) {
			t.Errorf("%s: tokens %+v, want %+v", r.URL, r.Tokens, want[i])
		}
	}
	unknown := robotsd.Usage{robotsd.PurposeTrainAI: robotsd.PreferenceUnknown,
		robotsd.PurposeSearch: robotsd.PreferenceUnknown, robotsd.PurposeAIInput: robotsd.PreferenceUnknown,
		robotsd.PurposeAIUse: robotsd.PreferenceUnknown}
	if !reflect.DeepEqual(res[2].Usage, unknown) || len(res[2].UsageFrom) != 0 {
		t.Errorf("404 origin: usage %v from %v; want all unknown", res[2].Usage, res[2].UsageFrom)
	}
	if res[0].Usage[robotsd.PurposeTrainAI] != robotsd.PreferenceDisallowed || res[1].Usage != nil {
		t.Errorf("usage %v, %v", res[0].Usage, res[1].Usage)
	}
}

func TestUsageTypesRejectWrongJSON(t *testing.T) {
	var p robotsd.Preference
	for _, b := range []string{`"yes"`, `true`, `null`, `1`, `"Allowed"`} {
		if err := json.Unmarshal([]byte(b), &p); err == nil {
			t.Errorf("Preference %s accepted as %q", b, p)
		}
	}
	if err := json.Unmarshal([]byte(`"disallowed"`), &p); err != nil || p != robotsd.PreferenceDisallowed {
		t.Errorf("Preference \"disallowed\": %q %v", p, err)
	}
	var s robotsd.UsageStatement
	good := `{"directive":"content-signal","pattern":"/","line":2,"value":"ai-train=no","scope":"file"}`
	if err := json.Unmarshal([]byte(good), &s); err != nil || s != (robotsd.UsageStatement{
		Directive: "content-signal", Pattern: "/", Line: 2, Value: "ai-train=no", Scope: "file"}) {
		t.Errorf("statement: %+v %v", s, err)
	}
	for _, b := range []string{
		`{"directive":"content-usage","pattern":"/","line":"2","value":"x"}`,
		`{"directive":"content-usage","pattern":"/","line":2.5,"value":"x"}`,
		`{"directive":"content-usage","pattern":"/","line":2}`,
		`{"directive":"content-usage","pattern":null,"line":2,"value":"x"}`,
		`{"directive":"license","pattern":"/","line":2,"value":"x"}`,
		`{"directive":"content-usage","pattern":"/","line":2,"value":"x","scope":"site"}`,
		`null`, `[]`,
	} {
		if err := json.Unmarshal([]byte(b), &s); err == nil {
			t.Errorf("statement %s accepted", b)
		}
	}
	var v robotsd.TokenVerdict
	for _, b := range []string{`{"allowed":"false","rule":null}`, `{"rule":null}`, `{"allowed":true,"rule":"x"}`,
		`{"allowed":true,"rule":{"directive":"deny","pattern":"/","line":1}}`, `null`} {
		if err := json.Unmarshal([]byte(b), &v); err == nil {
			t.Errorf("token verdict %s accepted", b)
		}
	}
}

func TestProtocolErrorIsTyped(t *testing.T) {
	err := error(&robotsd.Error{Code: robotsd.CodeProtocol})
	if !errors.Is(err, robotsd.ErrProtocol) {
		t.Error("not ErrProtocol")
	}
}
