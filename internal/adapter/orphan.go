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

// A process killed after sending a new turn but before storing the task
// id of its first frame leaves an unfinished execution without a task:
// the task is then found by the thread's context, when the A2A server
// lists tasks (ListTasks). Every task of the context that is still open
// at a new turn belongs to an execution the thread has finished, since a
// thread with pending interrupts takes no new turn.

// unfinished reports whether the current execution was never marked
// terminal.
func unfinished(doc *state.Thread) bool {
	return !containsString(doc.TerminalExecutionIDs, doc.Execution.ExecutionID)
}

// unfinishedTask returns the task of an execution that was never marked
// terminal, or "".
func unfinishedTask(doc *state.Thread) string {
	ex := doc.Execution
	if ex.TaskID == nil || *ex.TaskID == "" || !unfinished(doc) {
		return ""
	}
	return *ex.TaskID
}

// openTasker is an Upstream that lists a context's open tasks
// (a2a.Client.OpenTasks).
type openTasker interface {
	OpenTasks(ctx context.Context, contextID string) ([]string, error)
}

// cancelOrphan cancels the task the admission found unfinished, ignoring
// errors: a task that already ended cannot be cancelled and needs nothing.
func (rs *runState) cancelOrphan(ctx context.Context) {
	tasks := []string{rs.r.orphanTask}
	if rs.r.orphanTask == "" {
		tasks = rs.openOrphans(ctx)
	}
	for _, task := range tasks {
		if task == "" {
			continue
		}
		if err := rs.cancelA2ATask(ctx, task); err != nil {
			rs.r.log.LogAttrs(ctx, slog.LevelDebug, "A2A CancelTask of an unfinished execution failed", slog.String("taskId", task), errAttr(err))
			continue
		}
		rs.r.log.Info("Cancelled the A2A task of an unfinished execution", "taskId", task)
	}
}

// openOrphans lists the open tasks of the context of an unfinished
// execution that stored no task id; none when the upstream cannot list.
func (rs *runState) openOrphans(ctx context.Context) []string {
	lister, ok := rs.r.a.client.(openTasker)
	if rs.r.orphanContext == "" || !ok {
		return nil
	}
	tasks, err := lister.OpenTasks(ctx, rs.r.orphanContext)
	if err != nil {
		rs.r.log.LogAttrs(ctx, slog.LevelDebug, "A2A ListTasks for an unfinished execution failed", errAttr(err))
		return nil
	}
	return tasks
}
