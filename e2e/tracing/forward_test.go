package tracing

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// TestForwardedTrace: two replicas on one Redis store. The thread's
// interrupt waits in replica a's agent, so a's lease holds it; the
// resume sent to replica b is forwarded to a and stays in the client's
// trace: b's server span, its forwarding client span, a's server span
// under it, and a's run, A2A call and agent under that.
func TestForwardedTrace(t *testing.T) {
	j := e2etest.StartJaeger(t)
	url := redistest.URL(t)
	prefix := fmt.Sprintf("trace-%d:", time.Now().UnixNano())
	root, backup := t.TempDir(), t.TempDir()
	ports := []int{e2etest.FreePort(t), e2etest.FreePort(t)}
	urls := []string{"http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/", "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/"}
	var reps []*gateway
	for i, port := range ports {
		env := append(traced(j, "http/protobuf"), "IAC_CODE_AGUI_STATE_STORE="+url, "IAC_CODE_AGUI_REDIS_KEY_PREFIX="+prefix,
			"IAC_CODE_AGUI_REPLICA_TOKEN=trace-replicas", "IAC_CODE_CONFIG_BACKUP_DIR="+backup)
		reps = append(reps, startGatewayOn(t, port, root, env,
			"--demo", "--advertise-url", urls[i], "--replica-urls", strings.Join(urls, ","), "--lease-ttl", "15"))
	}
	a, b := reps[0], reps[1]
	_, evs := post(t, a.url, input(root, "th-forward", "run-1", "permission please", nil))
	if last(evs) != "RUN_FINISHED/interrupt" {
		t.Fatalf("first run: %s", last(evs))
	}
	its := evs[len(evs)-1]["outcome"].(map[string]any)["interrupts"].([]any)
	id := its[0].(map[string]any)["id"].(string)

	traceID, clientSpan, tp := newIDs()
	resume := []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	_, evs = post(t, b.url, input(root, "th-forward", "run-2", "", resume), "traceparent", tp)
	if last(evs) != "RUN_FINISHED/success" {
		t.Fatalf("forwarded resume: %s", last(evs))
	}
	spans := j.WaitTrace(t, traceID, func(s []e2etest.Span) bool {
		return len(find(s, gatewayService, "POST /")) == 2 && has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", "success") && hasAgent(s)
	})
	var entry, owner e2etest.Span
	for _, s := range find(spans, gatewayService, "POST /") {
		if s.Parent == clientSpan {
			entry = s
		} else {
			owner = s
		}
	}
	if entry.SpanID == "" || owner.SpanID == "" {
		dump(t, spans)
		t.Fatal("no server span of the entry replica under the client's span")
	}
	fwd := one(t, spans, gatewayService, "forward POST")
	parentOf(t, spans, fwd, entry)
	if fwd.Tags["span.kind"] != "client" {
		t.Errorf("forward span tags %v", fwd.Tags)
	}
	parentOf(t, spans, owner, fwd)
	run := one(t, spans, gatewayService, "agui.run")
	parentOf(t, spans, run, owner)
	if run.Tags["iac_code_agui.run.kind"] != "resume" {
		t.Errorf("run tags %v", run.Tags)
	}
	if len(find(spans, gatewayService, "agui.admission")) != 1 {
		dump(t, spans)
		t.Fatal("the entry replica admitted the forwarded request too")
	}
}
