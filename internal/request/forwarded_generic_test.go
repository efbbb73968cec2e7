package request

import (
	"errors"
	"testing"
)

func TestParseGenericForwardedProps(t *testing.T) {
	for _, raw := range []string{`{}`, `{"copilotkit":{"x":1},"other":[1]}`} {
		ic, err := ParseGenericForwardedProps([]byte(raw))
		if err != nil || ic.RosInvocationID != "" || ic.CWD != "" {
			t.Fatalf("%s: %+v, %v", raw, ic, err)
		}
	}
	ic, err := ParseGenericForwardedProps([]byte(`{"app":1,"iacCode":{"schemaVersion":1,"rosInvocationId":"inv-1","cwd":"/w","userId":"u"}}`))
	if err != nil || ic.RosInvocationID != "inv-1" || ic.UserID == nil || *ic.UserID != "u" {
		t.Fatalf("with iacCode: %+v, %v", ic, err)
	}
	// A present iacCode is validated as strictly as in the iac-code profile.
	for _, raw := range []string{`[]`, `"x"`, `{"iacCode":{"schemaVersion":2,"rosInvocationId":"i","cwd":"/w"}}`, `{"iacCode":{"schemaVersion":1,"rosInvocationId":"i","cwd":"/w","extra":1}}`} {
		if _, err := ParseGenericForwardedProps([]byte(raw)); !errors.Is(err, ErrInvalidForwardedProps) {
			t.Errorf("%s: %v, want ErrInvalidForwardedProps", raw, err)
		}
	}
}
