package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
)

func TestZZDebug(t *testing.T) {
	ctx := context.Background()
	srv, _ := demoagent.Start(ctx, "127.0.0.1:0", demoagent.Options{})
	defer srv.Close()
	c := a2a.New(srv.URL, "")
	dump := func(s *a2a.Stream, err error) string {
		if err != nil {
			fmt.Println("ERR", err)
			return ""
		}
		tid := ""
		for {
			ev, err := s.Next()
			if err != nil {
				fmt.Println("END", err)
				return tid
			}
			tid = ev.TaskID
			b, _ := json.Marshal(ev)
			fmt.Println(ev.Kind, ev.State(), string(b)[:min(400, len(b))])
		}
	}
	md := map[string]any{"cwd": t.TempDir(), "run_mode": "pipeline"}
	tid := dump(c.SendStreamingMessage(ctx, &a2a.SendParams{MessageID: "m1", ContextID: "ctx-1", Parts: []*a2asdk.Part{a2asdk.NewTextPart("ask me a question")}, Metadata: md}))
	fmt.Println("---- answer")
	dump(c.SendStreamingMessage(ctx, &a2a.SendParams{MessageID: "m2", ContextID: "ctx-1", TaskID: tid, Parts: []*a2asdk.Part{a2asdk.NewTextPart("1")}, Metadata: md}))
	fmt.Println("---- subscribe")
	dump(c.SubscribeToTask(ctx, tid))
	ev, err := c.GetTask(ctx, tid, 5)
	fmt.Println("GET", ev.State(), err)
}
