package robotsd

import (
	"encoding/json"
	"errors"
	"testing"
)

// An answer's usage fields are checked against what the request asked
// for: missing or of the wrong type is a CodeProtocol error.
func TestAnswerUsageFieldsAreChecked(t *testing.T) {
	usage := `"usage":{"train-ai":"allowed","search":"unknown","ai-input":"disallowed","ai-use":"unknown"}`
	from := `"usage_from":[{"directive":"content-usage","pattern":"/","line":1,"value":"train-ai=y"}]`
	both := &CheckOptions{Usage: true, Tokens: []string{"G"}}
	cases := []struct {
		answer string
		opts   *CheckOptions
		ok     bool
	}{
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,` + usage + `,` + from + `}`, &CheckOptions{Usage: true}, true},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":false,"usage":null,"usage_from":[],"tokens":{"g":{"allowed":false,"rule":null}}}`, both, true},
		{`{"ok":true,"pending":true,"origin":"http://x.test"}`, both, true},
		{`{"ok":false,"error":{"code":"bad_url","message":"m"}}`, both, true},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true}`, nil, true},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true}`, &CheckOptions{Usage: true}, false}, // an older robotsd
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,` + usage + `}`, &CheckOptions{Usage: true}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,"usage":["train-ai"],` + from + `}`, &CheckOptions{Usage: true}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,"usage":{"train-ai":"allowed"},` + from + `}`, &CheckOptions{Usage: true}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,"usage":{"train-ai":"yes","search":"unknown","ai-input":"unknown","ai-use":"unknown"},` + from + `}`,
			&CheckOptions{Usage: true}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,` + usage + `,"usage_from":{}}`, &CheckOptions{Usage: true}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,` + usage + `,"usage_from":null}`, &CheckOptions{Usage: true}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true}`, &CheckOptions{Tokens: []string{"G"}}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,"tokens":["g"]}`, &CheckOptions{Tokens: []string{"G"}}, false},
		{`{"ok":true,"origin":"http://x.test","source":"cache","reason":"rule","allowed":true,"tokens":{"g":{"allowed":1}}}`, &CheckOptions{Tokens: []string{"G"}}, false},
	}
	for _, c := range cases {
		var w wireCheck
		if err := json.Unmarshal([]byte(c.answer), &w); err != nil {
			t.Fatalf("%s: %v", c.answer, err)
		}
		r, err := w.result("http://x.test/", c.opts)
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.answer, err)
		}
		if !c.ok && !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: got %+v, %v; want a protocol error", c.answer, r, err)
		}
	}
}
