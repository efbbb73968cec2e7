package adapter

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Cancel statuses of the cancellation extension (adapter.md §7.1).
const (
	CancelStatusCancelled       = "cancelled"
	CancelStatusAlreadyTerminal = "already_terminal"
)

// Cancel runs the cancellation extension's logic (adapter.md §7.1) for an
// already validated request body. It returns the status to report or an
// *Error carrying its HTTP status.
func (a *Adapter) Cancel(ctx context.Context, executionID, threadID, rosInvocationID string) (string, error) {
	t, err := a.entry(ctx, threadID)
	if err != nil {
		// The original does not catch this (§12.9); a thread whose file
		// cannot be read answers like admission does (docs/decisions.md).
		return "", errStateUnavailable
	}
	status, taskID, err := cancelTarget(t, executionID, rosInvocationID)
	t.mu.Unlock()
	if err != nil || status != "" {
		return status, err
	}
	// The thread lock is not held while A2A cancels: the run of this
	// execution must keep reading its stream, or A2A could wait on it.
	refused := false
	if taskID != "" {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_, err := a.client.CancelTask(cctx, taskID)
		cancel()
		var rpc *a2a.RPCError
		if err != nil && !errors.As(err, &rpc) {
			// Transport failure: nothing changed, the caller may retry.
			a.reqLog(ctx).Warn("A2A CancelTask failed", "threadId", threadID, "executionId", executionID, "taskId", taskID, "error", err)
			return "", newErr(http.StatusServiceUnavailable, CodeA2AUnavailable, i18n.MsgA2AUnavailable)
		}
		refused = err != nil // not cancelable: the task had already stopped
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	doc := t.doc
	if doc.Execution.ExecutionID != executionID || containsString(doc.TerminalExecutionIDs, executionID) {
		// The run ended meanwhile: it saw our cancellation, or it had
		// finished on its own and A2A refused to cancel.
		if refused {
			return CancelStatusAlreadyTerminal, nil
		}
		return CancelStatusCancelled, nil
	}
	before := doc.Clone()
	clear(doc.Execution.Pending)
	doc.MarkTerminal()
	if err := a.save(ctx, t); err != nil {
		t.doc = before
		a.reqLog(ctx).Warn("Failed to persist AG-UI thread state", "threadId", threadID, "executionId", executionID, "error", err)
		return "", newErr(http.StatusServiceUnavailable, CodeStatePersistenceFailed, i18n.MsgCancelNotCommitted)
	}
	a.touch()
	return CancelStatusCancelled, nil
}

// cancelTarget resolves the execution to cancel (§7.1 steps 1–3); the
// caller holds t.mu. A non-empty status answers at once.
func cancelTarget(t *thread, executionID, rosInvocationID string) (status, taskID string, err error) {
	doc := t.doc
	if doc == nil {
		return "", "", errExecutionNotFound
	}
	ex := &doc.Execution
	if containsString(doc.TerminalExecutionIDs, executionID) {
		return CancelStatusAlreadyTerminal, "", nil
	}
	if ex.ExecutionID != executionID || ex.RosInvocationID != rosInvocationID {
		return "", "", errExecutionNotFound
	}
	if ex.TaskID != nil {
		taskID = *ex.TaskID
	}
	return "", taskID, nil
}
