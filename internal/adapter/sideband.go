package adapter

import (
	"context"
	"log/slog"
)

// pendingCatchUp is the pipeline catch-up a sideband continuation owes
// (protocol.md §5.8): envelopes published between the answers and the
// subscription reach no stream, so they are read from the pipeline state,
// from the cursor the continuation started at.
type pendingCatchUp struct {
	taskID string
	after  int64
}

// startSideband marks the run as a sideband continuation: its catch-up is
// due, and it ends by §4.4 step 7 rather than §5.12 (see follow).
func (rs *runState) startSideband(taskID string) {
	rs.sideband = true
	rs.catchUpDue = &pendingCatchUp{taskID: taskID, after: rs.m.PipelineSequence()}
}

// runCatchUp runs a due catch-up once, before the next interrupt or at the
// end. It is best effort: the continuation already has the task's state,
// and a missing pipeline journal (404) means there is nothing to add.
func (rs *runState) runCatchUp(ctx context.Context) {
	c := rs.catchUpDue
	if c == nil {
		return
	}
	rs.catchUpDue = nil
	if err := rs.mapPipelineAfter(ctx, c.taskID, c.after); err != nil {
		rs.r.log.LogAttrs(ctx, slog.LevelWarn, "pipeline catch-up after a sideband answer failed", errAttr(err))
	}
}
