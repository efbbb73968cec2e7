package projection

// Kind is the "kind" of an input projection. The value comes from the
// upstream agent, so a Kind may be one the gateway does not know; Known
// says whether it is one of Kinds.
type Kind string

// The input kinds of the iac-code projection (protocol.md §5.2,
// upstream.md §4). Only the first three have their own interrupt
// shape; the others, like unknown kinds, are questions.
const (
	KindPermission             Kind = "permission"
	KindCloudResourceSelection Kind = "cloud_resource_selection"
	KindDeploymentConfirmation Kind = "deployment_confirmation"
	KindAskUserQuestion        Kind = "ask_user_question"
	KindCandidateSelection     Kind = "candidate_selection"
)

var kinds = [...]Kind{
	KindPermission, KindCloudResourceSelection, KindDeploymentConfirmation,
	KindAskUserQuestion, KindCandidateSelection,
}

// Kinds returns every known kind, in the order of the constants; the
// caller owns the slice.
func Kinds() []Kind { return append([]Kind(nil), kinds[:]...) }

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	for _, c := range kinds {
		if k == c {
			return true
		}
	}
	return false
}

// KindOf returns the kind of a projection: its "kind" value when that is a
// string, else "" (absent, null or another JSON type).
func KindOf(p map[string]any) Kind {
	k, _ := p["kind"].(string)
	return Kind(k)
}

// The input kinds of the generic A2A profile (docs/upstream.md §10): the
// agent's task waits in TASK_STATE_INPUT_REQUIRED or
// TASK_STATE_AUTH_REQUIRED, the prompt is the text of its status message,
// and the answer is one text. They are not among Kinds, which are
// iac-code's (protocol.md §5.2).
const (
	KindA2AInputRequired Kind = "a2a_input_required"
	KindA2AAuthRequired  Kind = "a2a_auth_required"
)

// Generic reports whether k is a kind of the generic A2A profile.
func (k Kind) Generic() bool { return k == KindA2AInputRequired || k == KindA2AAuthRequired }
