package robotsd

import (
	"encoding/json"
	"testing"
)

// appendJSONString writes a string as json.Marshal does: as it is when
// plain, escaped by json.Marshal otherwise (HTML characters, controls,
// DEL, bytes outside ASCII, invalid UTF-8, U+2028).
func TestAppendJSONStringIsMarshal(t *testing.T) {
	for _, s := range []string{"", "http://a.test/x?y=1#z", "GoBot/1.0 (+https://bot.example)",
		`a"b`, `a\b`, "<script>", "a&b", "a>b", "tab\there", "nl\n", "\x00", "\x1f", "\x7f",
		"~", " ", "é", "\xff", "a\u2028b", "http://a.test/%E2%80%A8"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	}
}
