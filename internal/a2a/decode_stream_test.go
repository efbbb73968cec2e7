package a2a

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// delta is a text-delta frame (upstream.md §3.4.1) whose text member
// holds the raw JSON string body quoted.
func delta(quotedText string) string {
	return rpcResult(`{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"T-message","contextId":"C","taskId":"T","role":"ROLE_AGENT","parts":[{"text":` +
		quotedText + `}]}},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}}`)
}

// checkStreamDecode decodes frames in order through one stream scanner
// (intern table, id slots, metadata memo and text template all live) and
// holds every answer to encoding/json's and to a fresh scanner's.
func checkStreamDecode(t *testing.T, frames ...string) []*Event {
	t.Helper()
	return checkStreamDecodeVs(t, true, frames...)
}

// checkStreamDecodeVs is checkStreamDecode, comparing with encoding/json
// only when vsJSON is set.
func checkStreamDecodeVs(t *testing.T, vsJSON bool, frames ...string) []*Event {
	t.Helper()
	s := &scanner{intern: map[string]string{}}
	var out []*Event
	for i, f := range frames {
		got, gerr := decodeFrameWith(s, []byte(f), false)
		want, werr := refDecode([]byte(f))
		fresh, ferr := decodeFrame([]byte(f), false)
		if vsJSON && (!reflect.DeepEqual(got, want) || !sameErr(gerr, werr)) {
			t.Errorf("frame %d %q:\n got %s %v\nwant %s %v", i, f, mustJSON(t, got), gerr, mustJSON(t, want), werr)
		}
		if !reflect.DeepEqual(got, fresh) || (gerr == nil) != (ferr == nil) {
			t.Errorf("frame %d: stream scanner %s %v, fresh scanner %s %v", i, mustJSON(t, got), gerr, mustJSON(t, fresh), ferr)
		}
		out = append(out, got)
	}
	return out
}

func TestStreamDecodeTextDeltas(t *testing.T) {
	evs := checkStreamDecode(t,
		frameTask,
		delta(`"tok "`),
		delta(`"d1 "`),
		delta(`""`),
		delta(`"quote \" and brace \"}]}},\"metadata\":{} "`),
		delta(`"\ud83d\ude00 \ud800 x 中文 `+"\xff\xfe"+`"`),
		delta(`null`),
		delta(`"control `+"\x01"+`"`), // ErrProtocol, as in encoding/json
		delta(`"unterminated`),
		delta(`"after errors"`),
		strings.Replace(delta(`"other session"`), `"S"`, `"S2"`, 1),
		delta(`"back to S"`),
		frameIR,
		delta(`"last"`),
	)
	if evs[1] == nil || evs[2] == nil || evs[1].Status == evs[2].Status || evs[1].Status.Message == evs[2].Status.Message ||
		&evs[1].Status.Message.Parts[0] == &evs[2].Status.Message.Parts[0] {
		t.Fatal("consecutive text deltas share their status, message or part")
	}
	// An event is the caller's: changing it must not leak into later ones.
	evs[2].Status.State = "changed"
	evs[2].Status.Message.Parts[0].Text = "changed"
	evs[2].Status.Message.MessageID = "changed"
	if evs[3].Status.State != "TASK_STATE_WORKING" || evs[3].Status.Message.MessageID != "T-message" {
		t.Fatalf("event 3 = %s", mustJSON(t, evs[3]))
	}
	s := &scanner{intern: map[string]string{}}
	for _, text := range []string{"a", "b"} {
		ev, err := decodeFrameWith(s, []byte(delta(`"`+text+`"`)), false)
		if err != nil {
			t.Fatal(err)
		}
		ev.Status.Message.Parts[0].Text = "changed"
	}
	if ev, err := decodeFrameWith(s, []byte(delta(`"c"`)), false); err != nil || ev.Status.Message.Text() != "c" {
		t.Fatalf("after changing earlier events: %v, %v", ev, err)
	}
}

// The text template must not be used when the text bytes are not exactly
// the event's one part's text: repeated keys, a second part or text, a
// part with data, a message with metadata, history.
func TestStreamDecodeTemplateTraps(t *testing.T) {
	status := func(inner string) string {
		return rpcResult(`{"statusUpdate":{"taskId":"T","status":` + inner + `}}`)
	}
	// For a repeated object or array key encoding/json merges into the
	// earlier value while the decoder keeps the last one (as Python's
	// json does); there only the stream and fresh scanners are compared.
	repeated := map[string]bool{"parts repeated": true, "message repeated": true, "status repeated": true}
	for name, tmpl := range map[string]string{
		"parts repeated":         status(`{"state":"W","message":{"parts":[{"text":%s}],"parts":[{}]}}`),
		"parts repeated empty":   status(`{"state":"W","message":{"parts":[{"text":%s}],"parts":[]}}`),
		"text repeated":          status(`{"state":"W","message":{"parts":[{"text":%s,"text":"fixed"}]}}`),
		"message then null":      status(`{"state":"W","message":{"parts":[{"text":%s}]},"message":null}`),
		"message repeated":       status(`{"state":"W","message":{"parts":[{"text":%s}]},"message":{"parts":[{"url":"u"}]}}`),
		"status repeated":        status(`{"state":"W","message":{"parts":[{"text":%s}]}},"status":{"state":"X"}`),
		"two parts":              status(`{"state":"W","message":{"parts":[{"text":%s},{"text":"b"}]}}`),
		"part with data":         status(`{"state":"W","message":{"parts":[{"text":%s,"data":{"k":1}}]}}`),
		"part with metadata":     status(`{"state":"W","message":{"parts":[{"text":%s,"metadata":{"k":1}}]}}`),
		"message with metadata":  status(`{"state":"W","message":{"metadata":{"k":1},"parts":[{"text":%s}]}}`),
		"text in discarded wrap": rpcResult(`{"message":{"parts":[{"text":%s}]},"statusUpdate":{"taskId":"T","status":{"state":"W","message":{"parts":[{}]}}}}`),
		"bare shape":             rpcResult(`{"taskId":"T","status":{"state":"W","message":{"parts":[{"text":%s}]}}}`),
		"task with history":      rpcResult(`{"task":{"id":"T","status":{"state":"W","message":{"parts":[{"text":%s}]}},"history":[]}}`),
		"whitespace":             status(` { "state" : "W" , "message" : { "parts" : [ { "text" : %s } ] } } `),
	} {
		var frames []string
		for _, text := range []string{`""`, `"one"`, `"two"`, `null`, `"three"`, `"\"}],\"parts\":[{}]}}"`} {
			frames = append(frames, strings.Replace(tmpl, "%s", text, 1))
		}
		t.Run(name, func(t *testing.T) { checkStreamDecodeVs(t, !repeated[name], frames...) })
	}
}

// Every field of the template's types must be handled by
// frameBlock.copyWith; a new field needs a look there.
func TestTemplateCopyKnowsEveryField(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{{Event{}, 9}, {Status{}, 3}, {Message{}, 6}, {Part{}, 7}} {
		if n := reflect.TypeOf(c.v).NumField(); n != c.want {
			t.Errorf("%T has %d fields, copyWith was written for %d", c.v, n, c.want)
		}
	}
}

func TestDecodeNumbersAsEncodingJSON(t *testing.T) {
	for _, n := range []string{"01", "-01", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "1_0", "Infinity", "--1"} {
		for _, frame := range []string{
			rpcResult(`{"metadata":{"a":` + n + `}}`),
			rpcResult(`{"unknown":` + n + `}`),
			`{"jsonrpc":"2.0","id":` + n + `,"result":{}}`,
			`{"error":{"code":` + n + `,"message":"m"}}`,
		} {
			if json.Valid([]byte(frame)) {
				t.Fatalf("test bug: %s is valid JSON", frame)
			}
			if _, err := decodeFrame([]byte(frame), false); !errors.Is(err, ErrProtocol) {
				t.Errorf("decodeFrame(%s) = %v, want ErrProtocol", frame, err)
			}
		}
	}
	for _, n := range []string{"0", "-0", "0.5e-3", "1E+2", "-12.5e10", "123456789", "1e308"} {
		checkStreamDecode(t, rpcResult(`{"taskId":"T","metadata":{"a":`+n+`,"b":[`+n+`]},"x":`+n+`}`))
	}
}

func TestDecodeNullElements(t *testing.T) {
	checkStreamDecode(t,
		rpcResult(`{"task":{"id":"T","history":[null,{"messageId":"m","parts":[null]}],"artifacts":[null,{}]}}`),
		rpcResult(`{"id":"T","history":[null]}`),
	)
}

// FuzzDecodeFrameStream decodes frame b after frame a through one stream
// scanner: the state kept between frames (id slots, intern table,
// metadata memo, text template) must never change b's answer.
func FuzzDecodeFrameStream(f *testing.F) {
	f.Add([]byte(delta(`"tok "`)), []byte(delta(`"tik\"\u00e9"`)))
	f.Add([]byte(frameText), []byte(strings.Replace(frameText, "Here is the ", "x", 1)))
	f.Add([]byte(benchFrame), []byte(strings.Replace(benchFrame, "VPC", "subnet", 1)))
	f.Add([]byte(delta(`"a"`)), []byte(strings.Replace(delta(`"b"`), `"iacCodeSessionId":"S"`, `"iacCodeSessionId":"S","n":1`, 1)))
	for _, c := range decodeCorpus {
		f.Add([]byte(frameText), []byte(c))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		s := &scanner{intern: map[string]string{}}
		_, _ = decodeFrameWith(s, a, false)
		got, gerr := decodeFrameWith(s, b, false)
		fresh, ferr := decodeFrame(b, false)
		if (gerr == nil) != (ferr == nil) || !reflect.DeepEqual(got, fresh) {
			t.Fatalf("after %q, %q decodes to %s %v; fresh %s %v", a, b, mustJSON(t, got), gerr, mustJSON(t, fresh), ferr)
		}
		if caseFoldedKey(b) {
			return // encoding/json matches keys case-insensitively
		}
		if want, werr := refDecode(b); gerr == nil && werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("after %q, %q decodes to %s; encoding/json %s", a, b, mustJSON(t, got), mustJSON(t, want))
		}
	})
}
