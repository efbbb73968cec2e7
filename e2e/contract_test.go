package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestContractOfEveryDemoScenario runs the demo agent's scenarios
// (docs/demo-agent.md) against the real binary, answers every interrupt
// the way a client following the published schemas would, and validates
// every CUSTOM value, pipeline activity, interrupt with its metadata, and
// every forwardedProps and resume sent against schemas/ (internal/contract).
// runAGUI validates the events of the other e2e tests the same way.
func TestContractOfEveryDemoScenario(t *testing.T) {
	s := startServer(t, "")
	seen := map[string]int{}
	scenarios := []struct {
		name, text string
		iac        map[string]any
	}{
		{"normal", "Create a VPC template", nil},
		{"permission", "Deploy it (permission)", nil},
		{"resource", "select a vswitch", nil},
		{"mcp", "mcp status please", nil},
		{"pipeline", "Run the pipeline", map[string]any{"runMode": "pipeline"}},
		{"question", "Plan a deployment and ask me a question", map[string]any{"runMode": "pipeline"}},
		{"deployment", "deploy the stack", map[string]any{"runMode": "pipeline"}},
		{"candidates", "select a candidate", map[string]any{"runMode": "pipeline"}},
		{"sideband", "candidate permission", map[string]any{"runMode": "pipeline"}},
		{"pause", "pause before deploy", map[string]any{"runMode": "pipeline"}},
		{"backup", "backup blocked", map[string]any{"runMode": "pipeline"}},
		{"mcpPipeline", "mcp", map[string]any{"runMode": "pipeline"}},
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			thread := fmt.Sprintf("contract-%d", i)
			kinds := map[string]string{}
			body := contractInput(thread, thread+"-r0", sc.text, s.Root, sc.iac, nil)
			for round := 0; ; round++ {
				e2etest.CheckRequest(t, body, kinds)
				status, evs, raw := runAGUI(t, s.URL, body)
				if status != 200 {
					t.Fatalf("round %d: %d %s", round, status, raw)
				}
				count(seen, evs)
				fin := lastEvent(evs)
				out, _ := fin["outcome"].(map[string]any)
				if fin["type"] != "RUN_FINISHED" || out["type"] != "interrupt" {
					if fin["type"] != "RUN_FINISHED" && fin["type"] != "RUN_ERROR" {
						t.Fatalf("round %d ended with %v", round, fin)
					}
					return
				}
				if round == 4 {
					t.Fatalf("still interrupted after %d answers", round)
				}
				var resume []any
				for _, it := range out["interrupts"].([]any) {
					im := it.(map[string]any)
					md, _ := im["metadata"].(map[string]any)
					kind, _ := md["kind"].(string)
					kinds[im["id"].(string)] = kind
					resume = append(resume, map[string]any{"interruptId": im["id"], "status": "resolved", "payload": contractAnswer(im)})
				}
				body = contractInput(thread, fmt.Sprintf("%s-r%d", thread, round+1), "", s.Root, sc.iac, resume)
			}
		})
	}
	t.Logf("validated: %v", seen)
	// The suite must have met every part of the contract it claims to check.
	for _, want := range []string{"custom:iac-code.session.v1", "custom:iac-code.pipeline.v1", "custom:iac-code.artifact.v1",
		"activity", "interrupt:permission", "interrupt:cloud_resource_selection", "interrupt:deployment_confirmation",
		"interrupt:ask_user_question", "interrupt:candidate_selection"} {
		if seen[want] == 0 {
			keys := make([]string, 0, len(seen))
			for k := range seen {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Errorf("no %s was validated (seen: %s)", want, strings.Join(keys, ", "))
		}
	}
}

func count(seen map[string]int, evs []map[string]any) {
	for _, ev := range evs {
		switch ev["type"] {
		case "CUSTOM":
			seen["custom:"+fmt.Sprint(ev["name"])]++
		case "ACTIVITY_SNAPSHOT":
			seen["activity"]++
		case "RUN_FINISHED":
			out, _ := ev["outcome"].(map[string]any)
			its, _ := out["interrupts"].([]any)
			for _, it := range its {
				md, _ := it.(map[string]any)["metadata"].(map[string]any)
				seen["interrupt:"+fmt.Sprint(md["kind"])]++
			}
		}
	}
}

func contractInput(thread, run, text, cwd string, extra map[string]any, resume []any) map[string]any {
	b := runInput(thread, run, text, cwd, resume)
	ic := b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)
	for k, v := range extra {
		ic[k] = v
	}
	return b
}

// contractAnswer answers an interrupt from its published shape: a
// deployment confirmation with an override, a question in free text.
func contractAnswer(it map[string]any) map[string]any {
	md, _ := it["metadata"].(map[string]any)
	switch md["kind"] {
	case "deployment_confirmation":
		return map[string]any{"selectedId": "confirm", "parameter_overrides": map[string]any{"InstanceCount": 2}}
	case "ask_user_question":
		return map[string]any{"freeText": "Use the cheapest region"}
	}
	return answerFor(it)
}
