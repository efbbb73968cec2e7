package demoagent

import (
	"strings"
	"testing"
)

// TestNormalTurnFrames checks upstream.md §3.3 frame by frame.
func TestNormalTurnFrames(t *testing.T) {
	h := newHarness(t, Options{})
	ws := t.TempDir()
	s := h.stream("SendStreamingMessage", msgParams("Create a VPC template", "ctx-n", "", cwdMeta(ws)))
	evs := s.all()
	tid := taskIDOf(evs)
	type want struct{ kind, state, key string }
	seq := []want{
		{"task", stateSubmitted, ""}, {"statusUpdate", stateSubmitted, ""}, {"statusUpdate", stateWorking, ""},
		{"statusUpdate", stateWorking, "thinking"},
		{"statusUpdate", stateWorking, "text"}, {"statusUpdate", stateWorking, "text"}, {"statusUpdate", stateWorking, "text"},
		{"statusUpdate", stateWorking, "text"}, {"statusUpdate", stateWorking, "text"},
		{"statusUpdate", stateWorking, "tool"}, {"statusUpdate", stateWorking, "tool"}, {"statusUpdate", stateWorking, "tool"},
		{"artifactUpdate", "", ""}, {"statusUpdate", stateWorking, "tool"},
		{"statusUpdate", stateWorking, "usage"}, {"statusUpdate", stateWorking, "assistantFinal"},
		{"statusUpdate", stateInputRequired, ""},
	}
	if len(evs) != len(seq) {
		for _, e := range evs {
			t.Log(e.raw)
		}
		t.Fatalf("got %d frames, want %d", len(evs), len(seq))
	}
	var deltas strings.Builder
	sid := ""
	for i, w := range seq {
		ev := evs[i]
		k, r := result(ev)
		if k != w.kind || stateOf(ev) != w.state {
			t.Fatalf("frame %d: %s %s, want %s %s: %s", i, k, stateOf(ev), w.kind, w.state, ev.raw)
		}
		if ev.data["id"] != ev.data["id"] || ev.data["jsonrpc"] != "2.0" {
			t.Fatalf("envelope %s", ev.raw)
		}
		iac := iacOf(ev)
		if i > 0 && k == "statusUpdate" {
			if sid == "" {
				sid, _ = iac["iacCodeSessionId"].(string)
			}
			if iac["iacCodeSessionId"] != sid || sid == "" {
				t.Fatalf("frame %d session id %v", i, iac["iacCodeSessionId"])
			}
		}
		switch w.key {
		case "text":
			id, tx := textOf(ev)
			if id != tid+"-message" {
				t.Fatalf("delta id %q", id)
			}
			deltas.WriteString(tx)
		case "thinking":
			th := iac["thinking"].(map[string]any)
			if th["type"] != "raw_thinking" || th["text"] == "" {
				t.Fatalf("thinking %v", th)
			}
		case "assistantFinal":
			id, tx := textOf(ev)
			if id != tid+"-2" || tx != deltas.String() || iac["assistantFinal"].(map[string]any)["complete"] != true {
				t.Fatalf("final %q %q", id, tx)
			}
		case "":
			if k == "statusUpdate" && r["status"].(map[string]any)["timestamp"] == nil {
				t.Fatalf("frame %d without timestamp", i)
			}
		}
	}
	if _, task := result(evs[0]); task["history"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"] != "Create a VPC template" {
		t.Fatalf("history echo %s", evs[0].raw)
	}
	if !strings.HasPrefix(deltas.String(), "Writing vpc.yaml in "+ws+".\n\n```yaml\nROSTemplateFormatVersion: '2015-09-01'") {
		t.Fatalf("text %q", deltas.String())
	}
	if iac := iacOf(evs[16]); iac["input"] != nil {
		t.Fatalf("end of turn has input: %v", iac)
	}
	// Tool trace and numbers written as doubles.
	for i, frag := range map[int]string{
		9:  `"tool":{"name":"write_file","status":"started","toolUseId":"toolu_demo_write"}`,
		10: `"partialJsonLength":57.0`,
		11: `"inputSummary":{"fields":{"content":"string","file_path":"string"},"tool_name":"write_file"}`,
		12: `"byteSize":` + itoa(len(vpcTemplate)) + `.0`,
		13: `"result":"Wrote ` + itoa(len(vpcTemplate)) + ` bytes to ` + ws + `/vpc.yaml"`,
		14: `"usage":{"inputTokens":1200.0,"outputTokens":350.0,"totalTokens":1550.0}`,
	} {
		if !strings.Contains(evs[i].raw, frag) {
			t.Errorf("frame %d lacks %s: %s", i, frag, evs[i].raw)
		}
	}
	_, art := result(evs[12])
	url := art["artifact"].(map[string]any)["parts"].([]any)[0].(map[string]any)["url"].(string)
	if !strings.HasPrefix(url, "iac-code-artifact://") || !strings.HasSuffix(url, "/vpc.yaml") || art["lastChunk"] != true {
		t.Fatalf("artifact %v", art)
	}
}

func TestTemplateVariantsAndLanguages(t *testing.T) {
	h := newHarness(t, Options{})
	for i, tc := range []struct{ text, lang, prefix string }{
		{"Create an OSS bucket", "en", "Writing bucket.yaml in /w"},
		{"terraform please", "en", "Writing main.tf in /w"},
		{"Crea una VPC", "es-ES", "Escribiendo vpc.yaml en /w."},
		{"创建 VPC", "zh-CN", "正在 /w 中写入 vpc.yaml。"},
		{"Créer un VPC", "fr", "Écriture de vpc.yaml dans /w."},
		{"VPC erstellen", "de-DE", "vpc.yaml wird in /w geschrieben."},
		{"VPC を作成", "ja", "/w に vpc.yaml を書き込んでいます。"},
		{"Criar uma VPC", "pt-BR", "Escrevendo vpc.yaml em /w."},
		{"Create a VPC", "ko", "Writing vpc.yaml in /w."},
	} {
		iac := map[string]any{"cwd": "/w", "preferredLanguage": tc.lang}
		evs := h.stream("SendStreamingMessage", msgParams(tc.text, "ctx-lang-"+itoa(i), "", iac)).all()
		var text string
		for _, ev := range evs {
			if id, tx := textOf(ev); strings.HasSuffix(id, "-message") {
				text += tx
			}
		}
		if !strings.HasPrefix(text, tc.prefix) {
			t.Errorf("%s/%s: %q", tc.text, tc.lang, text)
		}
	}
}

func TestFailAndRetryable(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("this should fail", "ctx-f", "", cwdMeta("/w"))).all()
	last := evs[len(evs)-1]
	tid := taskIDOf(evs)
	id, tx := textOf(last)
	if stateOf(last) != stateFailed || id != tid+"-4" || !strings.Contains(tx, "Model request failed") {
		t.Fatalf("fail: %s", last.raw)
	}
	if e := iacOf(last)["error"].(map[string]any); e["retryable"] != false {
		t.Fatalf("error %v", e)
	}
	evs = h.stream("SendStreamingMessage", msgParams("retryable glitch", "ctx-r", "", cwdMeta("/w"))).all()
	last = evs[len(evs)-1]
	tid = taskIDOf(evs)
	id, tx = textOf(last)
	if stateOf(last) != stateInputRequired || id != tid+"-6" || tx != "A temporary error occurred. Please retry." ||
		iacOf(last)["error"].(map[string]any)["retryable"] != true {
		t.Fatalf("retryable: %s", last.raw)
	}
	// A parked retryable task can be cancelled (upstream.md §5.1).
	res := h.call("CancelTask", map[string]any{"id": tid})
	if st := res["result"].(map[string]any)["status"].(map[string]any); st["state"] != stateCanceled {
		t.Fatalf("cancel retryable: %v", res)
	}
}

func TestWorkspaceAndBusyContext(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("hi", "ctx-rel", "", cwdMeta("relative/dir"))).all()
	if _, tx := textOf(evs[len(evs)-1]); stateOf(evs[len(evs)-1]) != stateFailed || tx != "Invalid A2A workspace metadata." {
		t.Fatalf("relative cwd: %s", evs[len(evs)-1].raw)
	}
	h.stream("SendStreamingMessage", msgParams("hi", "ctx-ws", "", cwdMeta("/a"))).all()
	evs = h.stream("SendStreamingMessage", msgParams("hi", "ctx-ws", "", cwdMeta("/b"))).all()
	if _, tx := textOf(evs[len(evs)-1]); stateOf(evs[len(evs)-1]) != stateFailed || tx != "A2A context belongs to a different workspace" {
		t.Fatalf("cwd change: %s", evs[len(evs)-1].raw)
	}
	s := h.stream("SendStreamingMessage", msgParams("stall now", "ctx-busy", "", cwdMeta("/a")))
	first := s.until(stateWorking)
	evs = h.stream("SendStreamingMessage", msgParams("another turn", "ctx-busy", "", cwdMeta("/a"))).all()
	if len(evs) != 2 || stateOf(evs[0]) != stateSubmitted || stateOf(evs[1]) != stateFailed {
		t.Fatalf("busy: %d frames", len(evs))
	}
	if _, tx := textOf(evs[1]); tx != "Task is already working." || taskIDOf(evs) == taskIDOf(first) {
		t.Fatalf("busy text %q", tx)
	}
	h.call("CancelTask", map[string]any{"id": taskIDOf(first)})
	rest := s.all()
	if len(rest) != 1 || stateOf(rest[0]) != stateCanceled {
		t.Fatalf("after cancel: %d frames", len(rest))
	}
}

func TestEmptyInput(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("  ", "ctx-e", "", cwdMeta("/w"))).all()
	if _, tx := textOf(evs[len(evs)-1]); len(evs) != 2 || stateOf(evs[1]) != stateFailed || tx != "A2A server currently accepts text input only." {
		t.Fatalf("normal empty: %d frames", len(evs))
	}
	m := h.call("SendStreamingMessage", msgParams("", "ctx-e2", "", map[string]any{"cwd": "/w", "run_mode": "pipeline"}))
	if c, msg := errorOf(t, m); c != -32602 || msg != "A2A server received empty input." {
		t.Fatalf("pipeline empty: %v %q", c, msg)
	}
}
