package robotsd_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	robotsd "robotsd.dev/client"
)

const signalsRobots = "User-agent: *\nDisallow: /private/\n"

// contractPage is the request example of the contract's section "Every
// signal, not only robots.txt".
var contractPage = &robotsd.Page{
	Headers: [][2]string{{"X-Robots-Tag", "noai"}, {"Content-Usage", "train-ai=n"}},
	Meta:    [][2]string{{"robots", "noindex"}},
}

// hash16 is the first 16 hex digits of the SHA-256 of s: a robots.txt
// version, an evidence's page.
func hash16(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:16]
}

func TestCheckWithPage(t *testing.T) {
	testOrigin.set("signals.test", signalsRobots, false)
	r, err := client.CheckWith(ctx(t), "http://signals.test/x", "FooBot",
		&robotsd.CheckOptions{Usage: true, TDM: true, Page: contractPage})
	if err != nil {
		t.Fatal(err)
	}
	tag := &robotsd.RobotsTag{Rules: []string{"noindex", "noai"}, Values: map[string]string{},
		From: []robotsd.RobotsTagSource{{Source: "header", Field: "x-robots-tag", Value: "noai"},
			{Source: "meta", Field: "robots", Value: "noindex"}}}
	if !r.Allowed || !reflect.DeepEqual(r.RobotsTag, tag) {
		t.Errorf("allowed %v robots_tag %+v; want %+v", r.Allowed, r.RobotsTag, tag)
	}
	// signals.test serves no tdmrep.json: a 404, the state none
	tv := hash16("status:404")
	ev := robotsd.Evidence{Robots: hash16(signalsRobots), TDMRep: tv, Page: "73f780eea2a13c87"}
	if r.Evidence == nil || *r.Evidence != ev ||
		ev.Page != hash16("x-robots-tag: noai\ncontent-usage: train-ai=n\nmeta robots: noindex\n") {
		t.Errorf("evidence %+v; want %+v", r.Evidence, ev)
	}
	from := []robotsd.UsageStatement{{Directive: "content-usage", Value: "train-ai=n", Source: "header"}}
	if r.Usage[robotsd.PurposeTrainAI] != robotsd.PreferenceDisallowed || !reflect.DeepEqual(r.UsageFrom, from) {
		t.Errorf("usage %v from %+v; want train-ai disallowed from %+v", r.Usage, r.UsageFrom, from)
	}
	tdm := robotsd.TDM{State: "none", Version: tv}
	if r.TDM == nil || !reflect.DeepEqual(*r.TDM, tdm) || r.Usage[robotsd.PurposeTDM] != robotsd.PreferenceUnknown {
		t.Errorf("tdm %+v usage %v; want %+v and tdm unknown", r.TDM, r.Usage, tdm)
	}
}

func TestCheckWithPageAgentScopedAndDisallowed(t *testing.T) {
	testOrigin.set("signals.test", signalsRobots, false)
	page := &robotsd.Page{Headers: [][2]string{{"X-Robots-Tag", "googlebot: noindex"}}}
	r, err := client.CheckWith(ctx(t), "http://signals.test/x", "Googlebot/2.1", &robotsd.CheckOptions{Page: page})
	if err != nil {
		t.Fatal(err)
	}
	if r.RobotsTag == nil || !reflect.DeepEqual(r.RobotsTag.Rules, []string{"noindex"}) ||
		r.Evidence == nil || r.Evidence.Page != "91ae3ba1092b72e2" || r.Usage != nil {
		t.Errorf("googlebot: %+v %+v usage %v", r.RobotsTag, r.Evidence, r.Usage)
	}
	r, err = client.CheckWith(ctx(t), "http://signals.test/x", "FooBot", &robotsd.CheckOptions{Page: page})
	if err != nil || r.RobotsTag == nil || len(r.RobotsTag.Rules) != 0 || len(r.RobotsTag.From) != 0 {
		t.Errorf("another agent: %+v %v", r.RobotsTag, err)
	}
	r, err = client.CheckWith(ctx(t), "http://signals.test/private/x", "FooBot",
		&robotsd.CheckOptions{Usage: true, Page: contractPage})
	if err != nil || r.Allowed || r.RobotsTag != nil || r.Usage != nil || r.Evidence == nil ||
		r.Evidence.Robots != hash16(signalsRobots) {
		t.Errorf("disallowed: allowed %v %+v %v %+v %v", r.Allowed, r.RobotsTag, r.Usage, r.Evidence, err)
	}
	if _, err := client.CheckManyWith(ctx(t), []string{"http://signals.test/x"}, "FooBot",
		&robotsd.CheckOptions{Page: page}); !errors.Is(err, robotsd.ErrBadRequest) {
		t.Errorf("a batch with a page: %v; want bad_request", err)
	}
	res, err := client.CheckManyWith(ctx(t), []string{"http://signals.test/x"}, "FooBot", &robotsd.CheckOptions{TDM: true})
	if err != nil || len(res) != 1 || !res[0].Allowed || res[0].TDM == nil ||
		!reflect.DeepEqual(*res[0].TDM, robotsd.TDM{State: "none", Version: hash16("status:404")}) || res[0].RobotsTag != nil {
		t.Errorf("a batch with tdm: %+v %v", res, err)
	}
}

func TestSignalTypesRejectWrongJSON(t *testing.T) {
	var d robotsd.TDM
	good := `{"state":"rules","reservation":1,"policy":"https://p/","location":"/a/*","version":"00000000000000aa","from":"header"}`
	one := 1
	if err := json.Unmarshal([]byte(good), &d); err != nil || !reflect.DeepEqual(d, robotsd.TDM{State: "rules",
		Reservation: &one, Policy: "https://p/", Location: "/a/*", Version: "00000000000000aa", From: "header"}) {
		t.Errorf("tdm: %+v %v", d, err)
	}
	for _, b := range []string{`{"reservation":1}`, `{"state":"rules","reservation":2}`,
		`{"state":"rules","reservation":true}`, `{"state":"rules","policy":3}`, `null`, `[]`} {
		if err := json.Unmarshal([]byte(b), &d); err == nil {
			t.Errorf("tdm %s accepted", b)
		}
	}
	var tag robotsd.RobotsTag
	for _, b := range []string{`{"rules":[],"values":{}}`, `{"rules":"noindex","values":{},"from":[]}`,
		`{"rules":[],"values":{"x":0},"from":[]}`, `{"rules":[],"values":{},"from":[1]}`, `null`} {
		if err := json.Unmarshal([]byte(b), &tag); err == nil {
			t.Errorf("robots_tag %s accepted", b)
		}
	}
	var ev robotsd.Evidence
	for _, b := range []string{`{"robots":"a","tdmrep":null}`, `{"robots":"a","page":1}`, `"x"`} {
		if err := json.Unmarshal([]byte(b), &ev); err == nil {
			t.Errorf("evidence %s accepted", b)
		}
	}
	var s robotsd.UsageStatement
	hdr := `{"directive":"content-usage","pattern":null,"line":null,"value":"train-ai=n","source":"header"}`
	if err := json.Unmarshal([]byte(hdr), &s); err != nil || s != (robotsd.UsageStatement{
		Directive: "content-usage", Value: "train-ai=n", Source: "header"}) {
		t.Errorf("header statement: %+v %v", s, err)
	}
}
