package frame

import (
	"encoding/json"
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

// checkStreamDecode decodes frames in order through one Decoder (intern
// table, id slots, metadata memo and text template all live) and holds
// every answer to the reference decoder's and to Decode's.
func checkStreamDecode(t *testing.T, frames ...string) []*Event {
	t.Helper()
	var d Decoder
	var out []*Event
	for _, f := range frames {
		got := answerOf(d.Decode([]byte(f)))
		checkSame(t, []byte(f), got, answerOf(refDecode([]byte(f))), "reference")
		checkSame(t, []byte(f), got, answerOf(Decode([]byte(f))), "fresh")
		out = append(out, got.Event)
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
	var d Decoder
	for _, text := range []string{"a", "b"} {
		ev, _, err := d.Decode([]byte(delta(`"` + text + `"`)))
		if err != nil {
			t.Fatal(err)
		}
		ev.Status.Message.Parts[0].Text = "changed"
	}
	if ev, _, err := d.Decode([]byte(delta(`"c"`))); err != nil || ev.Status.Message.Text() != "c" {
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
		t.Run(name, func(t *testing.T) { checkStreamDecode(t, frames...) })
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
			if got := checkFrame(t, []byte(frame)); !got.Invalid {
				t.Errorf("Decode(%s) = %s, want invalid", frame, mustJSON(t, got))
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

// FuzzDecodeStream decodes frame b after frame a through one Decoder: the
// state kept between frames (id slots, intern table, metadata memo, text
// template) must never change b's answer, which must be the reference's.
func FuzzDecodeStream(f *testing.F) {
	f.Add([]byte(delta(`"tok "`)), []byte(delta(`"tik\"\u00e9"`)))
	f.Add([]byte(frameText), []byte(strings.Replace(frameText, "Here is the ", "x", 1)))
	f.Add([]byte(benchFrame), []byte(strings.Replace(benchFrame, "VPC", "subnet", 1)))
	f.Add([]byte(delta(`"a"`)), []byte(strings.Replace(delta(`"b"`), `"iacCodeSessionId":"S"`, `"iacCodeSessionId":"S","n":1`, 1)))
	for _, c := range decodeCorpus {
		f.Add([]byte(frameText), []byte(c))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var d Decoder
		_, _, _ = d.Decode(a)
		got := answerOf(d.Decode(b))
		checkSame(t, b, got, answerOf(Decode(b)), "fresh")
		checkSame(t, b, got, answerOf(refDecode(b)), "reference")
	})
}
