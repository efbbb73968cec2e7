package metrics

// The adapter passes only its own constants, but labels are bounded here
// as well: a label value that came from upstream data (an input kind) or a
// future caller's mistake must not create one series per request.

// Run kinds and outcomes of adapter.Observer, repeated here so that this
// package does not depend on the adapter.
const (
	kindNew    = "new"
	kindResume = "resume"
)

func runKind(k string) string {
	if k == kindNew || k == kindResume {
		return k
	}
	return other
}

func runOutcome(o string) string {
	switch o {
	case "success", "interrupt", "error", "disconnected":
		return o
	}
	return other
}

// inputKinds are the input kinds of the iac-code projection
// (protocol.md §5.2); the projection comes from A2A, so its kind is not
// trusted to be one of them.
var inputKinds = map[string]bool{
	"permission": true, "ask_user_question": true, "candidate_selection": true,
	"cloud_resource_selection": true, "deployment_confirmation": true,
}

func inputKind(k string) string {
	if inputKinds[k] {
		return k
	}
	return other
}

// errorCode keeps a public error code (upper-case letters, digits and
// underscores, as every code of protocol.md §2.6–§2.7) and "" (no error);
// anything else counts as "other".
func errorCode(c string) string {
	if len(c) > 40 {
		return other
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if (b < 'A' || b > 'Z') && (b < '0' || b > '9') && b != '_' {
			return other
		}
	}
	return c
}
