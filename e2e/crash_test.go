package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
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
	// Each round kills the server once its clients have seen so many
	// events of one kind: early and late in the runs, for each kind of
	// event that promises a write.
	rounds := []struct {
		kind string
		n    int64
	}{{"RUN_STARTED", 1}, {"RUN_STARTED", clients / 2}, {"session", 1}, {"session", clients / 2}, {"interrupt", 1}, {"interrupt", clients / 4}}
	for round, kill := range rounds {
		a := startServer(t, t.TempDir(), env...)
		cwd := filepath.Join(a.Root, "ws")
		seen := make([][]map[string]any, clients)
		var counts sync.Map // kind → *atomic.Int64
		count := func(kind string) *atomic.Int64 {
			c, _ := counts.LoadOrStore(kind, new(atomic.Int64))
			return c.(*atomic.Int64)
		}
		var wg sync.WaitGroup
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for i := range clients {
			text := "Create a VPC template"
			if i%2 == 0 {
				text = "Deploy it (permission)"
			}
			body := runInput(fmt.Sprintf("crash-%d-%d", round, i), fmt.Sprintf("run-%d-%d", round, i), text, cwd, nil)
			wg.Go(func() { seen[i] = streamEvents(ctx, a.URL, body, func(kind string) { count(kind).Add(1) }) })
		}
		for deadline := time.Now().Add(30 * time.Second); count(kill.kind).Load() < kill.n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: only %d %s events within 30 s", round, count(kill.kind).Load(), kill.kind)
			}
		}
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
// ends or breaks (the server was killed). saw is called with each
// event's kind as it arrives: its type, "session" for the session event,
// "interrupt" for an interrupt outcome.
func streamEvents(ctx context.Context, url string, body map[string]any, saw func(kind string)) []map[string]any {
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
	var evs []map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() { // up to the end or the break
		ev := e2etest.Events(sc.Bytes())
		if len(ev) == 0 {
			continue
		}
		evs = append(evs, ev[0])
		switch o, _ := ev[0]["outcome"].(map[string]any); {
		case ev[0]["name"] == "iac-code.session.v1":
			saw("session")
		case ev[0]["type"] == "RUN_FINISHED" && o["type"] == "interrupt":
			saw("interrupt")
		default:
			saw(fmt.Sprint(ev[0]["type"]))
		}
	}
	return evs
}

func optionalString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
