package adapter

import (
	"context"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// Observer receives coarse facts about runs, admissions and state writes,
// for metrics. The adapter calls it at a few single points and never per
// event, so an implementation may take a lock or a map lookup per call.
// Arguments never carry thread ids, run ids or message text: every string
// is one of the constants below, an input kind of the iac-code projection,
// or a public error code.
//
// The interface keeps the adapter free of any metrics library; the
// metrics package implements it.
type Observer interface {
	// RunStarted is called when an admitted run starts streaming.
	RunStarted(kind string)
	// RunEnded is called exactly once per started run, after its last
	// event was written. code is the RUN_ERROR code, or "" when the
	// outcome is not OutcomeError; events counts the AG-UI events written.
	RunEnded(kind, outcome, code string, events int, d time.Duration)
	// Interrupt is called once per interrupt made durable, with the
	// projection's kind (permission, ask_user_question, …).
	Interrupt(kind string)
	// AdmissionRejected is called when admission refuses a request, with
	// the code answered over HTTP.
	AdmissionRejected(code string)
	// StateWrite is called after every write of a thread document.
	StateWrite(err error, d time.Duration)
}

// Run kinds reported to the Observer.
const (
	RunKindNew      = "new"
	RunKindResume   = "resume"
	RunKindGuidance = "guidance"
)

// Run outcomes reported to the Observer.
const (
	RunOutcomeSuccess   = "success"
	RunOutcomeInterrupt = "interrupt"
	RunOutcomeError     = "error"
	// RunOutcomeDisconnected is a run whose client left before the run
	// decided a terminal event.
	RunOutcomeDisconnected = "disconnected"
)

// nopObserver is used when Options.Observer is nil.
type nopObserver struct{}

func (nopObserver) RunStarted(string)                                   {}
func (nopObserver) RunEnded(string, string, string, int, time.Duration) {}
func (nopObserver) Interrupt(string)                                    {}
func (nopObserver) AdmissionRejected(string)                            {}
func (nopObserver) StateWrite(error, time.Duration)                     {}

// kind is the run's kind for the Observer.
func (rs *runState) kind() string {
	if rs.r.guidance {
		return RunKindGuidance
	}
	if rs.r.resume {
		return RunKindResume
	}
	return RunKindNew
}

// report tells the Observer how the run ended; release calls it once.
func (rs *runState) report() {
	outcome := rs.outcome
	if outcome == "" {
		outcome = RunOutcomeDisconnected
	}
	d := time.Since(rs.started)
	rs.r.a.obs.RunEnded(rs.kind(), outcome, rs.code, rs.events, d)
	rs.traceRunEnd(outcome, d)
	rs.r.log.Info("run ended", "kind", rs.kind(), "outcome", outcome, "code", rs.code, "events", rs.events,
		"durationMs", float64(d.Microseconds())/1000)
}

// observeInterrupts reports the inputs just made durable.
func (a *Adapter) observeInterrupts(ctx context.Context, inputs []mapper.Input) {
	traceInterrupts(ctx, inputs)
	for _, in := range inputs {
		a.obs.Interrupt(string(projection.KindOf(in.Projection)))
	}
}
