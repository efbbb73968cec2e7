package fence

import "errors"

// ownerKeys are the members of a physical execution identity, camelCase
// first, as iac-code's handoff models accept them.
var ownerKeys = [][2]string{
	{"sandboxId", "sandbox_id"}, {"activationId", "activation_id"}, {"runId", "run_id"},
	{"leaseId", "lease_id"}, {"identityKind", "identity_kind"}, {"quotaLeaseId", "quota_lease_id"},
}

var errOwnerShape = errors.New("fence: invalid physical execution identity")

// CanonicalOwner validates a physical execution identity ({sandboxId,
// activationId, runId, leaseId, identityKind, quotaLeaseId}) the way
// iac-code's handoff service does, and returns its canonical form: every
// member in camelCase, absent ones null, identityKind "slot" by default.
// sandboxId and runId are required non-empty strings; a "slot" identity
// needs activationId and leaseId, a "legacy" one quotaLeaseId; other
// members are refused.
func CanonicalOwner(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errOwnerShape
	}
	known := 0
	out := map[string]any{}
	for _, k := range ownerKeys {
		var val any
		n := 0
		for _, name := range k {
			if x, ok := m[name]; ok {
				val, n = x, n+1
			}
		}
		if n > 1 {
			return nil, errOwnerShape
		}
		known += n
		if val == nil {
			out[k[0]] = nil
			continue
		}
		s, isStr := val.(string)
		if !isStr {
			return nil, errOwnerShape
		}
		out[k[0]] = s
	}
	if known != len(m) {
		return nil, errOwnerShape
	}
	str := func(k string) string { s, _ := out[k].(string); return s }
	if str("sandboxId") == "" || str("runId") == "" {
		return nil, errOwnerShape
	}
	switch kind := out["identityKind"]; kind {
	case nil, "slot":
		out["identityKind"] = "slot"
		if str("activationId") == "" || str("leaseId") == "" {
			return nil, errOwnerShape
		}
	case "legacy":
		if str("quotaLeaseId") == "" {
			return nil, errOwnerShape
		}
	default:
		return nil, errOwnerShape
	}
	return out, nil
}
