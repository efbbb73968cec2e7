package adapter

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Cancel statuses of the cancellation extension (protocol.md §7.1).
const (
	CancelStatusCancelled       = "cancelled"
	CancelStatusAlreadyTerminal = "already_terminal"
)

// Cancel runs the cancellation extension's logic (protocol.md §7.1) for an
// already validated request body. It returns the status to report or an
// *Error carrying its HTTP status.
func (a *Adapter) Cancel(ctx context.Context, executionID, threadID, rosInvocationID string) (string, error) {
	t, err := a.acquire(ctx, threadID)
	if err != nil {
		// The original does not catch this (§12.9); a thread whose file
		// cannot be read answers like admission does (docs/decisions.md).
		return "", errStateUnavailable
	}
	// The pin keeps the entry in the cache while A2A cancels without the
	// thread lock, so the write below goes through the one entry of the
	// thread, on the revision it holds now.
	defer a.unpin(threadID, t)
	status, taskID, err := cancelTarget(a.view(t), executionID, rosInvocationID)
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
		// Not cancelable: the task had already reached a terminal state.
		refused = err != nil
	}
	_, err = a.update(ctx, t, func(doc *state.Thread) (*state.Thread, error) {
		if doc == nil || doc.Execution.ExecutionID != executionID || containsString(doc.TerminalExecutionIDs, executionID) {
			// The run ended meanwhile: it saw our cancellation, or it had
			// finished on its own and A2A refused to cancel.
			return nil, errNoChange
		}
		return endExecution(doc)
	})
	if err != nil {
		a.reqLog(ctx).Warn("Failed to persist AG-UI thread state", "threadId", threadID, "executionId", executionID, "error", err)
		return "", newErr(http.StatusServiceUnavailable, CodeStatePersistenceFailed, i18n.MsgCancelNotCommitted)
	}
	a.touch()
	if refused {
		return CancelStatusAlreadyTerminal, nil
	}
	return CancelStatusCancelled, nil
}

// cancelTarget resolves the execution to cancel (§7.1 steps 1–3). A
// non-empty status answers at once.
func cancelTarget(doc *state.Thread, executionID, rosInvocationID string) (status, taskID string, err error) {
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
