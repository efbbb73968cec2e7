package demoagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// scenario is the behaviour chosen from the user's text (see doc.go).
type scenario struct {
	name     string
	pipeline bool
	run      script
	// refuse, when set, answers the message with a JSON-RPC error instead
	// of running (kinds_more.go); called with Agent.mu held.
	refuse func(c *ctxRec) *rpcError
}

// floodCap bounds "flood <N>".
const floodCap = 1_000_000

func pickScenario(lower, runMode string) scenario {
	has := func(s string) bool { return strings.Contains(lower, s) }
	if sc, ok := morePickScenario(has, has("pipeline") || strings.EqualFold(runMode, "pipeline")); ok {
		return sc
	}
	switch {
	case has("flood"):
		return scenario{name: "flood", run: func(_ context.Context, e *emitter) error { return e.flood(floodCount(lower)) }}
	case has("cancel me"):
		return scenario{name: "cancel me", run: func(_ context.Context, e *emitter) error { return e.longRun() }}
	case has("stall"):
		return scenario{name: "stall", run: func(ctx context.Context, e *emitter) error { return e.stall(ctx) }}
	case has("slow"):
		return scenario{name: "slow", run: func(_ context.Context, e *emitter) error { return e.slow() }}
	case has("retryable"):
		return scenario{name: "retryable", run: func(_ context.Context, e *emitter) error { return e.fail(true) }}
	case has("stream error"):
		return scenario{name: "stream error", run: func(_ context.Context, e *emitter) error { return e.streamError() }}
	case has("fail"):
		return scenario{name: "fail", run: func(_ context.Context, e *emitter) error { return e.fail(false) }}
	case has("sideband") || has("candidate permission"):
		return scenario{name: "sideband", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.pipelineSideband() }}
	case has("pipeline permission"):
		return scenario{name: "pipeline permission", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.pipelineParentPermission() }}
	case has("question"):
		return scenario{name: "question", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.question() }}
	case has("resource") || has("select a vswitch"):
		return scenario{name: "resource", run: func(_ context.Context, e *emitter) error { return e.resourceSelection() }}
	case has("select") || has("candidate"):
		return scenario{name: "select", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.selection() }}
	case has("deploy") && !has("permission"):
		// "Deploy it (permission)" stays the permission turn.
		return scenario{name: "deploy", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.deployment() }}
	case has("guided"):
		return scenario{name: "guided", pipeline: true, run: func(ctx context.Context, e *emitter) error { return e.guidedPipeline(ctx) }}
	case has("pipeline") || strings.EqualFold(runMode, "pipeline"):
		return scenario{name: "pipeline", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.pipelineFull() }}
	case has("permission"):
		return scenario{name: "permission", run: func(_ context.Context, e *emitter) error { return e.permissionTurn() }}
	}
	return scenario{name: "default", run: func(_ context.Context, e *emitter) error { return e.normalTurn() }}
}

func floodCount(lower string) int {
	f := strings.Fields(lower[strings.Index(lower, "flood")+len("flood"):])
	n := 1000
	if len(f) > 0 {
		if v, err := strconv.Atoi(f[0]); err == nil && v > 0 {
			n = v
		}
	}
	return min(n, floodCap)
}

// begin publishes the SUBMITTED and WORKING updates of a normal turn.
func (e *emitter) begin() error {
	if err := e.status(stateSubmitted, nil, e.sess(nil), true); err != nil {
		return err
	}
	return e.status(stateWorking, nil, e.sess(nil), true)
}

// finish publishes assistantFinal and the end-of-turn INPUT_REQUIRED.
func (e *emitter) finish(full string) error {
	fin := agentText(e.tid, e.cid, e.tid+"-2", full)
	if err := e.status(stateWorking, fin, e.sess(map[string]any{"assistantFinal": map[string]any{"complete": true}}), true); err != nil {
		return err
	}
	return e.status(stateInputRequired, nil, e.sess(nil), true)
}

func (e *emitter) tool(kv map[string]any) error {
	return e.status(stateWorking, nil, e.sess(map[string]any{"tool": kv}), false)
}

func (e *emitter) usage(in, out float64) error {
	return e.status(stateWorking, nil, e.sess(map[string]any{"usage": map[string]any{
		"inputTokens": num(in), "outputTokens": num(out), "totalTokens": num(in + out)}}), false)
}

// normalTurn is upstream.md §3.3 with a template written by a tool.
func (e *emitter) normalTurn() error {
	if err := e.begin(); err != nil {
		return err
	}
	file, body, syntax := iacFile(e.lower)
	think := map[string]any{"type": "raw_thinking", "text": "The user wants " + file + "; I will write it into the workspace."}
	if err := e.status(stateWorking, nil, e.sess(map[string]any{"thinking": think}), false); err != nil {
		return err
	}
	chunks := replyChunks(e.lang, file, body, syntax, e.cwd)
	for _, c := range chunks {
		if err := e.text(c); err != nil {
			return err
		}
	}
	if err := e.writeFileTool(file, body); err != nil {
		return err
	}
	if err := e.usage(1200, 350); err != nil {
		return err
	}
	return e.finish(strings.Join(chunks, ""))
}

// writeFileTool traces a write_file call and its artifact.
func (e *emitter) writeFileTool(file, body string) error {
	const tu = "toolu_demo_write"
	path := strings.TrimSuffix(e.cwd, "/") + "/" + file
	steps := []map[string]any{
		{"status": "started", "toolUseId": tu, "name": "write_file"},
		{"status": "input_delta", "toolUseId": tu, "partialJsonLength": num(57)},
		{"status": "input_complete", "toolUseId": tu, "name": "write_file", "inputSummary": map[string]any{
			"tool_name": "write_file", "fields": map[string]any{"file_path": "string", "content": "string"}}},
	}
	for _, s := range steps {
		if err := e.tool(s); err != nil {
			return err
		}
	}
	art := e.artifactFor(file, body, path)
	if err := e.send(streamResult{ArtifactUpdate: &artifactUpdate{TaskID: e.tid, ContextID: e.cid, Artifact: art, LastChunk: true}}); err != nil {
		return err
	}
	meta := art.Metadata
	return e.tool(map[string]any{"status": "completed", "toolUseId": tu, "name": "write_file",
		"result": writeWorkspaceFile(e.cwd, file, body),
		"artifact": map[string]any{"artifactId": art.ArtifactID, "filename": file, "mediaType": meta["mediaType"],
			"byteSize": meta["byteSize"], "sha256": meta["sha256"], "uri": meta["uri"], "sourcePath": path}})
}

func (e *emitter) artifactFor(file, body, path string) artifact {
	id := uuid.NewString()
	uri := "iac-code-artifact://" + id + "/" + url.PathEscape(file)
	sum := sha256.Sum256([]byte(body))
	mt := "text/yaml"
	if strings.HasSuffix(file, ".tf") {
		mt = "text/plain"
	}
	meta := map[string]any{"uri": uri, "mediaType": mt, "byteSize": num(len(body)), "sha256": hex.EncodeToString(sum[:]), "sourcePath": path}
	return artifact{ArtifactID: id, Name: file, Metadata: meta,
		Parts: []part{{URL: uri, Filename: file, MediaType: mt, Metadata: meta}}}
}

// fail ends the turn with a model error: retryable → INPUT_REQUIRED with
// the retry text, else FAILED with a sanitised provider message.
func (e *emitter) fail(retryable bool) error {
	if err := e.begin(); err != nil {
		return err
	}
	if err := e.text(replyIntro(e.lang, "vpc.yaml", e.cwd)); err != nil {
		return err
	}
	if retryable {
		return e.status(stateInputRequired, e.stateMsg(stateInputRequired, retryMsg),
			e.sess(map[string]any{"error": map[string]any{"retryable": true, "errorId": "err-demo-retryable"}}), true)
	}
	return e.status(stateFailed, e.stateMsg(stateFailed, "Model request failed: the provider rejected the request (HTTP 400)."),
		e.sess(map[string]any{"error": map[string]any{"retryable": false, "errorId": "err-demo-fatal"}}), true)
}

// streamError reports an internal failure as an SSE "event: error" frame.
func (e *emitter) streamError() error {
	if err := e.begin(); err != nil {
		return err
	}
	return e.a.publishError(e.ctx, e.t, newRPCError(codeInternal, "Internal error"))
}

// slow spaces eight deltas 500 ms apart, whatever StepDelay is, so a test
// can cancel or disconnect mid-turn.
func (e *emitter) slow() error {
	if err := e.begin(); err != nil {
		return err
	}
	var full strings.Builder
	for i := 1; i <= 8; i++ {
		s := "Step " + strconv.Itoa(i) + " of 8. "
		full.WriteString(s)
		if err := e.text(s); err != nil {
			return err
		}
		if err := e.sleep(500 * time.Millisecond); err != nil {
			return err
		}
	}
	return e.finish(full.String())
}

func (e *emitter) stall(ctx context.Context) error {
	if err := e.begin(); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// longRun streams a delta every 200 ms until cancelled (at most 10 min).
func (e *emitter) longRun() error {
	if err := e.begin(); err != nil {
		return err
	}
	for i := 0; i < 3000; i++ {
		if err := e.text("Still working. "); err != nil {
			return err
		}
		if err := e.sleep(200 * time.Millisecond); err != nil {
			return err
		}
	}
	return e.finish("Done.")
}

func (e *emitter) flood(n int) error {
	if err := e.begin(); err != nil {
		return err
	}
	d := e.delay
	e.delay = 0 // as fast as possible
	for i := 0; i < n; i++ {
		if err := e.text("x"); err != nil {
			return err
		}
	}
	e.delay = d
	return e.finish(strings.Repeat("x", n))
}
