package adapter

import (
	"context"
	"encoding/json"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// compat is the client compatibility mode (--compat). The zero value is the
// protocol as written; copilotKit relaxes exactly two admission rules for
// CopilotKit's clients (docs/copilotkit.md):
//
//   - a resume may reuse the id of the run that announced the pending
//     interrupts (CopilotKit's useInterrupt sends it), when it answers
//     exactly those interrupts;
//   - client tools are ignored with a log line instead of refused.
type compat struct {
	copilotKit bool
}

// compatResumeKey is the runDigests key under which an accepted resume
// that reused its run id is recorded: the run id itself keeps the digest
// of the run that raised the interrupts, so that run's replay is still
// DUPLICATE_RUN_ID, and this key makes the resume's own replay one too.
func compatResumeKey(runID, digest string) string { return runID + "#resume:" + digest }

// runIDKey is admission's run-id check (protocol.md §3.6) on doc, with the
// one relaxation of --compat copilotkit. It returns the runDigests key to
// record the request under: the run id, or compatResumeKey for a resume
// that reuses the id of the run that raised exactly these interrupts.
// The caller holds t.mu.
func (a *Adapter) runIDKey(t *thread, doc *state.Thread, run *Run, digest string) (string, error) {
	in := run.in
	prev, used := doc.RunDigests[in.RunID]
	switch {
	case !used:
		return in.RunID, nil
	case prev == digest:
		return "", errDuplicateRunID
	case !run.resume:
		return "", errRunIDConflict.with(&Details{Field: "/runId", Reason: "was used by an earlier run of this thread"})
	case !a.compat.copilotKit:
		return "", runIDReused(i18n.MsgHintRunIDReused)
	}
	key := compatResumeKey(in.RunID, digest)
	if _, replay := doc.RunDigests[key]; replay {
		return "", errDuplicateRunID
	}
	if t.interruptRun != in.RunID || !answersExactly(doc, in.Resume) {
		return "", runIDReused(i18n.MsgHintRunIDReusedCompat)
	}
	return key, nil
}

// runIDReused is RUN_ID_CONFLICT for a resume that reuses a run id, with
// the hint that says what to do (issue 29): a CopilotKit client reuses
// the interrupted run's id, which only --compat copilotkit accepts.
func runIDReused(hint string) *Error {
	return errRunIDConflict.with(&Details{Field: "/runId", Reason: "was used by an earlier run of this thread; a resume needs a new runId", Hint: hint})
}

// answersExactly reports whether the resume entries name every pending
// interrupt and nothing else.
func answersExactly(doc *state.Thread, entries []agui.ResumeEntry) bool {
	pending := doc.Execution.Pending
	if len(entries) != len(pending) {
		return false
	}
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if _, ok := pending[e.InterruptID]; !ok || seen[e.InterruptID] {
			return false
		}
		seen[e.InterruptID] = true
	}
	return true
}

// noteInterruptRun remembers which run announced the pending interrupts
// (an interrupt outcome) and forgets it on any other end. The caller
// holds t.mu. In memory only: after a restart the id is unknown and the
// reused id gets RUN_ID_CONFLICT, the protocol's answer.
func (t *thread) noteInterruptRun(runID string, interrupted bool) {
	if interrupted {
		t.interruptRun = runID
		return
	}
	t.interruptRun = ""
}

// toolsRefusal handles non-empty client tools (protocol.md §3.1): refused
// with their own message by default, ignored with a log line under
// --compat copilotkit (the agent never calls them).
func (a *Adapter) toolsRefusal(ctx context.Context, in *agui.RunAgentInput) error {
	if len(in.Tools) == 0 {
		return nil
	}
	if !a.compat.copilotKit && !a.generic {
		a.reqLog(ctx).Debug("client tools refused", "threadId", in.ThreadID, "field", "/tools", "reason", "must be empty")
		return errToolsNotSupported.with(&Details{Field: "/tools", Reason: "must be empty"})
	}
	names := make([]string, 0, len(in.Tools))
	for _, raw := range in.Tools {
		var tool struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &tool)
		names = append(names, tool.Name)
	}
	why := "client tools ignored (--compat copilotkit); the agent never calls them"
	if a.generic {
		why = "client tools ignored (--a2a-profile generic): A2A has no client tools, the agent never calls them"
	}
	a.reqLog(ctx).Info(why, "threadId", in.ThreadID, "tools", names)
	return nil
}
