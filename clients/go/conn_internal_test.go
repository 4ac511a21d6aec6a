package robotsd

import (
	"encoding/json"
	"reflect"
	"testing"
)

// quickHead reads the head of robotsd's usual ok answer without decoding
// it, and leaves every other line to json.Unmarshal, so that each line
// gets the head json.Unmarshal would give it.
func TestQuickHeadOnlyTakesPlainAnswers(t *testing.T) {
	const rest = `"allowed":true,"origin":"http://a.test","source":"cache","reason":"no_rule"}` + "\n"
	cases := []struct {
		line string
		id   string // "" when quickHead leaves the line to json.Unmarshal
	}{
		{`{"id":7,"ok":true,` + rest, "7"},
		{`{"id":18446744073709551615,"ok":true,` + rest, "18446744073709551615"},
		{`{"id":07,"ok":true,` + rest, ""},                    // not JSON
		{`{"id":123456789012345678901,"ok":true,` + rest, ""}, // too many digits
		{`{"id":,"ok":true,` + rest, ""},
		{`{"id":7.0,"ok":true,` + rest, ""},
		{`{"id":"7","ok":true,` + rest, ""},
		{`{"id":7,"ok":false,"error":{"code":"bad_url","message":"x"}}` + "\n", ""},
		{`{"ok":true,"id":7,` + rest, ""},
		{`{"id":7,"ok":true,"id":8,` + rest, ""},
		{`{"id":7,"ok":true,"ID":8,` + rest, ""},
		{`{"id":7,"ok":true,"Ok":false,` + rest, ""},
		{`{"id":7,"ok":true,"\u0069d":8,` + rest, ""},
		{`{"id":7,"ok":true,"o\u212a":false,` + rest, ""}, // the Kelvin sign folds to k
		{`{"id":7,"ok":true,"pad":"é",` + rest, ""},
		{`{"id":7,"ok":true,"allowed":tru}` + "\n", ""}, // not JSON
	}
	for _, c := range cases {
		var h head
		got := quickHead([]byte(c.line), &h)
		if got != (c.id != "") || (got && (string(h.ID) != c.id || !h.OK || h.Error != nil)) {
			t.Errorf("quickHead(%s) = %v, id %s; want id %q", c.line, got, h.ID, c.id)
		}
	}
}

// quickAnswer takes a check's answer as robotsd writes it, with the head
// and the decoded answer json.Unmarshal gives, and nothing that is not
// JSON or that json.Unmarshal would read another head from.
func TestQuickAnswerAgreesWithUnmarshal(t *testing.T) {
	const rest = `"allowed":true,"origin":"http://a.test","source":"cache","reason":"no_rule"}` + "\n"
	cases := []struct {
		line string
		id   string // "" when quickAnswer leaves the line
	}{
		{`{"id":7,"ok":true,` + rest, "7"},
		{`{"id":7,"ok":true,"reason":"ok","origin":"id","allowed":false,"source":"x"}`, "7"},
		{`{"id":18446744073709551615,"ok":true,` + rest, "18446744073709551615"},
		{`{"id":7,"ok":true,"version":"0.1.0"}` + "\n", "7"}, // a ping's: no harm
		{`{"id":07,"ok":true,` + rest, ""},
		{`{"id":7,"ok":true,"id":8,` + rest, ""},
		{`{"id":7,"ok":true,"ID":8,` + rest, ""},
		{`{"id":7,"ok":true,"Ok":false,` + rest, ""},
		{`{"id":7,"ok":true,"\u0069d":8,` + rest, ""},
		{`{"id":7,"ok":true,"o\u212a":false,` + rest, ""},
		{`{"id":7,"ok":true,"allowed":tru}` + "\n", ""},
		{`{"id":7,"ok":true,"allowed":true}` + "\n\n", ""},
		{`{"id":7,"ok":true,"results":[]}` + "\n", ""},
		{`{"id":7,"ok":false,"error":{"code":"bad_url","message":"x"}}` + "\n", ""},
		{`{"ok":true,"id":7,` + rest, ""},
	}
	for _, c := range cases {
		var h head
		w := quickAnswer([]byte(c.line), &h)
		if (w != nil) != (c.id != "") {
			t.Errorf("quickAnswer(%s) = %+v, want id %q", c.line, w, c.id)
			continue
		}
		if w == nil {
			if !reflect.DeepEqual(h, head{}) {
				t.Errorf("quickAnswer(%s) declined and wrote %+v", c.line, h)
			}
			continue
		}
		var slowHead head
		var slow wireCheck
		if json.Unmarshal([]byte(c.line), &slowHead) != nil || json.Unmarshal([]byte(c.line), &slow) != nil {
			t.Fatalf("quickAnswer(%s) took a line json.Unmarshal refuses", c.line)
		}
		if string(h.ID) != c.id || !reflect.DeepEqual(h, slowHead) || !reflect.DeepEqual(*w, slow) {
			t.Errorf("quickAnswer(%s) = %s %+v; json.Unmarshal %s %+v", c.line, h.ID, *w, slowHead.ID, slow)
		}
	}
}
