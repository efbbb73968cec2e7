package e2etest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/contract"
)

var validator = sync.OnceValues(contract.NewValidator)

// Contract is the published contract (schemas/), compiled once per test
// binary.
func Contract(t testing.TB) *contract.Validator {
	t.Helper()
	v, err := validator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// CheckEvents validates every decoded event against the published
// contract (CUSTOM values, the pipeline activity, interrupts with their
// metadata) and reports each violation as a test error.
func CheckEvents(t testing.TB, evs []map[string]any) {
	t.Helper()
	v := Contract(t)
	for _, ev := range evs {
		if err := v.CheckEvent(ev); err != nil {
			raw, _ := json.Marshal(ev)
			t.Errorf("event outside the published contract: %v\n%s", err, raw)
		}
	}
}

// CheckRequest validates the forwardedProps and resume a test client
// sends; kinds maps each interrupt id the client was shown to its
// metadata.kind.
func CheckRequest(t testing.TB, body map[string]any, kinds map[string]string) {
	t.Helper()
	v := Contract(t)
	if err := v.Validate(contract.FileForwardedProps, body["forwardedProps"]); err != nil {
		t.Errorf("request forwardedProps outside the published contract: %v", err)
	}
	if r, ok := body["resume"]; ok {
		if err := v.CheckResume(r, kinds); err != nil {
			t.Errorf("resume outside the published contract: %v", err)
		}
	}
}
