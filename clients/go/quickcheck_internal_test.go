package robotsd

import (
	"encoding/json"
	"reflect"
	"testing"
)

// quickCheck decodes robotsd's usual check answers exactly as
// json.Unmarshal does, and leaves every other line to json.Unmarshal.
func TestQuickCheckAgreesWithUnmarshal(t *testing.T) {
	const verdict = `"allowed":false,"origin":"http://a.test","source":"cache","reason":"rule",` +
		`"http_status":200,"rule":{"directive":"disallow","pattern":"/p/","line":37},` +
		`"crawl_delay":null,"expires_in":86334,"version":"12df764273663c12"}`
	cases := []struct {
		line  string
		quick bool // whether quickCheck takes it
	}{
		{`{"id":1,"ok":true,` + verdict + "\n", true},
		{`{"id":1,"ok":true,` + verdict, true},
		{`{"id":2,"ok":true,"allowed":true,"origin":"http://a.test","source":"fetched","reason":"no_rule","http_status":404,"rule":null,"crawl_delay":2.5,"expires_in":1e3,"version":null}`, true},
		{`{"id":3,"ok":true,"pending":true,"origin":"http://a.test","allowed":null,"source":null,"reason":null}`, true},
		{`{"ok":true,"url":"http://a.test/x","allowed":true,"origin":"http://a.test","source":"cache","reason":"no_rule","rule":{}}`, true},
		{`{"id":4,"ok":true,"allowed":true,"crawl_delay":-0.5E-2,"http_status":-0}`, true},
		{`{"id":5,"ok":true,"rule":{"line":3,"pattern":"/a","directive":"allow"}}`, true},
		{`{"id":1,"ok":false,"error":{"code":"bad_url","message":"x"}}`, false},
		{`{"id":1,"ok":true,"allowed":true,"allowed":false}`, false},     // twice
		{`{"id":1,"ok":true,"Allowed":false}`, false},                    // folded name
		{`{"id":1,"ok":true,"allowed":true,"usage":null}`, false},        // not known here
		{`{"id":1,"ok":true,"origin":"http://\u0061.test"}`, false},      // escape
		{`{"id":1,"ok":true,"origin":"http://é.test"}`, false},           // not ASCII
		{`{"id":1,"ok":true,"http_status":200.0}`, false},                // not an int
		{`{"id":1,"ok":true,"http_status":99999999999999999999}`, false}, // over int
		{`{"id":1,"ok":true,"rule":{"line":1,"line":2}}`, false},         // twice
		{`{"id":1,"ok":true,"rule":{"line":1,"extra":2}}`, false},        // not a rule's
		{`{"id":1,"ok":true,"rule":[]}`, false},                          // not an object
		{`{"id":1, "ok":true}`, false},                                   // whitespace
		{`{"id":1,"ok":null,"allowed":true}`, false},                     // ok not true
		{`{"id":"1","ok":true}`, false},                                  // id a string
		{`{"id":1,"ok":true,"expires_in":01}`, false},                    // not JSON
		{`{"id":1,"ok":true,"allowed":true}x`, false},                    // trailing
		{`{"id":1,"ok":true,"allowed":tru}`, false},                      // not JSON
		{`{"id":1,"ok":true,"origin":"a` + "\t" + `b"}`, false},          // control byte
		{`{"id":1,"ok":true,"pending":false,"url":"u","source":"cache","reason":"x"}`, true},
	}
	for _, c := range cases {
		var quick, slow wireCheck
		got := quickCheck([]byte(c.line), &quick)
		if got != c.quick {
			t.Errorf("quickCheck(%s) = %v, want %v", c.line, got, c.quick)
			continue
		}
		if !got {
			if !reflect.DeepEqual(quick, wireCheck{}) {
				t.Errorf("quickCheck(%s) declined and wrote %+v", c.line, quick)
			}
			continue
		}
		if err := json.Unmarshal([]byte(c.line), &slow); err != nil {
			t.Fatalf("json.Unmarshal(%s): %v", c.line, err)
		}
		if !reflect.DeepEqual(quick, slow) {
			t.Errorf("quickCheck(%s) = %+v, json.Unmarshal %+v", c.line, quick, slow)
		}
	}
}
