package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// TestNothingSeenIsLostOnSIGKILL kills the adapter with SIGKILL while many
// runs are in flight, at a different moment each round, and checks every
// event a client saw against what the state directory holds afterwards
// (docs/benchmarks.md, which writes must be durable): RUN_STARTED means the
// run id is stored, the session event means its task and session ids are,
// an interrupt outcome means every announced interrupt is pending. Each
// save is durable (file and directory fsynced) before the event that
// depends on it is written, and a task id held back to be saved with the
// session id (adapter/deferidentity.go) lets no event out before that save.
func TestNothingSeenIsLostOnSIGKILL(t *testing.T) {
	agent := startDemoAgent(t)
	env := []string{"IAC_CODE_AGUI_A2A_URL=" + agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token"}
	const clients = 24
	checked := map[string]int{}
	for round, delay := range []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond} {
		a := startServer(t, t.TempDir(), env...)
		cwd := filepath.Join(a.Root, "ws")
		seen := make([][]map[string]any, clients)
		var wg sync.WaitGroup
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for i := range clients {
			text := "Create a VPC template"
			if i%2 == 0 {
				text = "Deploy it (permission)"
			}
			body := runInput(fmt.Sprintf("crash-%d-%d", round, i), fmt.Sprintf("run-%d-%d", round, i), text, cwd, nil)
			wg.Go(func() { seen[i] = streamEvents(ctx, a.URL, body) })
		}
		time.Sleep(delay)
		a.Kill()
		wg.Wait()
		cancel()

		st := filestore.New(a.StateDir)
		for i, evs := range seen {
			thread, run := fmt.Sprintf("crash-%d-%d", round, i), fmt.Sprintf("run-%d-%d", round, i)
			if len(evs) == 0 {
				continue
			}
			doc, _, err := st.Load(context.Background(), thread)
			if err != nil {
				t.Fatalf("round %d: %s saw %s but its thread does not load: %v", round, thread, evs[0]["type"], err)
			}
			for _, ev := range evs {
				switch ev["type"] {
				case "RUN_STARTED":
					if _, ok := doc.RunDigests[run]; !ok {
						t.Errorf("round %d: %s saw RUN_STARTED but run %s is not stored", round, thread, run)
					}
					checked["RUN_STARTED"]++
				case "CUSTOM":
					if ev["name"] != "iac-code.session.v1" {
						continue
					}
					v, _ := ev["value"].(map[string]any)
					task := optionalString(doc.Execution.TaskID)
					if task == "" {
						task = optionalString(doc.Execution.LastTaskID)
					}
					if v["taskId"] != task || v["sessionId"] != optionalString(doc.IacCodeSessionID) {
						t.Errorf("round %d: %s saw session %v, stored task %q session %q", round, thread, v, task, optionalString(doc.IacCodeSessionID))
					}
					checked["session"]++
				case "RUN_FINISHED":
					o, _ := ev["outcome"].(map[string]any)
					if o["type"] != "interrupt" {
						continue
					}
					its, _ := o["interrupts"].([]any)
					for _, it := range its {
						id, _ := it.(map[string]any)["id"].(string)
						if _, ok := doc.Execution.Pending[id]; !ok {
							t.Errorf("round %d: %s saw interrupt %s, which is not pending", round, thread, id)
						}
					}
					checked["interrupt"]++
				}
			}
		}
	}
	t.Logf("events checked after SIGKILL: %v", checked)
	for _, kind := range []string{"RUN_STARTED", "session", "interrupt"} {
		if checked[kind] == 0 {
			t.Errorf("no %s was seen before a kill: the rounds do not cover it", kind)
		}
	}
}

// streamEvents posts body and returns the events read until the stream
// ends or breaks (the server was killed).
func streamEvents(ctx context.Context, url string, body map[string]any) []map[string]any {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body) // up to the end or the break
	return e2etest.Events(b)
}

func optionalString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
