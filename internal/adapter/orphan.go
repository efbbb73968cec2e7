package adapter

import (
	"context"
	"log/slog"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// A process killed mid-turn leaves its execution unfinished in the thread
// document (never marked terminal) while an external A2A server keeps the
// task working; every new turn on the context would then fail with "Task
// is already working.". The next new turn cancels that task first
// (protocol.md §8.10).

// unfinishedTask returns the task of an execution that was never marked
// terminal, or "".
func unfinishedTask(doc *state.Thread) string {
	ex := doc.Execution
	if ex.TaskID == nil || *ex.TaskID == "" || containsString(doc.TerminalExecutionIDs, ex.ExecutionID) {
		return ""
	}
	return *ex.TaskID
}

// cancelOrphan cancels the task the admission found unfinished, ignoring
// errors: a task that already ended cannot be cancelled and needs nothing.
func (rs *runState) cancelOrphan(ctx context.Context) {
	task := rs.r.orphanTask
	if task == "" {
		return
	}
	if err := rs.cancelA2ATask(ctx, task); err != nil {
		rs.r.log.LogAttrs(ctx, slog.LevelDebug, "A2A CancelTask of an unfinished execution failed", slog.String("taskId", task), errAttr(err))
		return
	}
	rs.r.log.Info("Cancelled the A2A task of an unfinished execution", "taskId", task)
}
