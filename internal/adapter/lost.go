package adapter

import "context"

// executionLost ends a resume whose task or session A2A no longer has
// (protocol.md §5.6 steps 2–3). Its pending interrupts can never be
// answered, so they are cleared and the execution is marked terminal
// (best effort): keeping them would answer every new turn of the thread
// RESUME_REQUIRED, and every resume EXECUTION_LOST, forever (found by the
// crash suite of e2e/reliability with the embedded agent, which loses its
// tasks with the process).
func (rs *runState) executionLost(ctx context.Context, msg string) error {
	rs.r.a.updateBestEffort(ctx, rs.r.t, rs.r.log, endExecution)
	return runErr(CodeExecutionLost, msg)
}
