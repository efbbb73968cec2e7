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
	defer t.mu.Unlock()
	doc := t.doc
	if doc == nil {
		return "", errExecutionNotFound
	}
	ex := &doc.Execution
	active := ex.ExecutionID == executionID && !containsString(doc.TerminalExecutionIDs, executionID)
	if !active {
		if containsString(doc.TerminalExecutionIDs, executionID) {
			return CancelStatusAlreadyTerminal, nil
		}
		return "", errExecutionNotFound
	}
	if ex.RosInvocationID != rosInvocationID {
		return "", errExecutionNotFound
	}
	if ex.TaskID != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_, err := a.client.CancelTask(cctx, *ex.TaskID)
		cancel()
		var rpc *a2a.RPCError
		if err != nil && !errors.As(err, &rpc) {
			// Transport failure: nothing changed, the caller may retry.
			a.log.Warn("A2A CancelTask failed", "taskId", *ex.TaskID, "error", err)
			return "", newErr(http.StatusServiceUnavailable, CodeA2AUnavailable, i18n.MsgA2AUnavailable)
		}
	}
	before := doc.Clone()
	clear(ex.Pending)
	doc.MarkTerminal()
	if err := a.save(ctx, t); err != nil {
		t.doc = before
		a.log.Warn("Failed to persist AG-UI thread state", "threadId", threadID, "error", err)
		return "", newErr(http.StatusServiceUnavailable, CodeStatePersistenceFailed, i18n.MsgCancelNotCommitted)
	}
	a.touch()
	return CancelStatusCancelled, nil
}
