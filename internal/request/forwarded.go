package request

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalidForwardedProps is wrapped by every ParseForwardedProps error.
// The wrapped detail names the field, never its value.
var ErrInvalidForwardedProps = errors.New("invalid iac-code forwarded properties")

// maxRosInvocationID is the limit on rosInvocationId (and userId), in code
// points.
const maxRosInvocationID = 256

// IacCode is forwardedProps.iacCode after strict validation. Strings are
// empty when absent.
type IacCode struct {
	SchemaVersion   int
	RosInvocationID string
	CWD             string
	Model           string
	LLMApiKey       string
	LLMHeaders      map[string]string
	// LLMHeadersSet tells {} (clears the A2A binding) from an absent field.
	LLMHeadersSet bool
	Thinking      *Thinking
	// UserID is nil when absent; "" and absent bind differently (§3.5).
	UserID                *string
	Channel               string
	PreferredLanguage     string
	CandidatePresentation string
	RunMode               string
	PipelineName          string
	CleanupOnly           bool
	AlibabaCloud          *AlibabaCloud
	// ActiveGuidance steers the thread's running pipeline instead of
	// starting a turn (protocol.md §5.13); GuidanceID ("" when absent)
	// travels to A2A as guidance_id.
	ActiveGuidance bool
	GuidanceID     string
	// ExecutionFence is the session-handoff fence object (nil when absent);
	// its owner feeds the writer fence (protocol.md §8.9). InputDigest
	// names a handed-over input. Both travel to A2A as execution_fence and
	// input_digest (§10.4).
	ExecutionFence map[string]any
	InputDigest    string
}

// Thinking holds the per-request thinking options.
type Thinking struct {
	Enabled bool
	Effort  string
	Budget  int64 // 0 when absent; otherwise > 0
}

// AlibabaCloud holds per-request Alibaba Cloud credentials.
type AlibabaCloud struct {
	AccessKeyID     string
	AccessKeySecret string
	SecurityToken   string
	RegionID        string
}

// field is one schema key with its accepted spellings (camelCase first).
type field []string

var (
	fTop      = field{"iacCode", "iac_code"}
	fSchema   = field{"schemaVersion", "schema_version"}
	fRos      = field{"rosInvocationId", "ros_invocation_id"}
	fCwd      = field{"cwd"}
	fModel    = field{"model"}
	fKey      = field{"llmApiKey", "llm_api_key"}
	fHeaders  = field{"llmHeaders", "llm_headers"}
	fThinking = field{"thinking"}
	fUser     = field{"userId", "user_id"}
	fChannel  = field{"channel"}
	fLang     = field{"preferredLanguage", "preferred_language"}
	fPresent  = field{"candidatePresentation", "candidate_presentation"}
	fRunMode  = field{"runMode", "run_mode"}
	fPipeline = field{"pipelineName", "pipeline_name"}
	fCleanup  = field{"cleanupOnly", "cleanup_only"}
	fCloud    = field{"alibabaCloud", "alibaba_cloud"}
	fGuidance = field{"activeGuidance", "active_guidance"}
	fGuideID  = field{"guidanceId", "guidance_id"}
	fFence    = field{"executionFence", "execution_fence"}
	fDigest   = field{"inputDigest", "input_digest"}

	fEnabled = field{"enabled"}
	fEffort  = field{"effort"}
	fBudget  = field{"budget"}

	fAKID    = field{"accessKeyId", "access_key_id"}
	fAKSec   = field{"accessKeySecret", "access_key_secret"}
	fSTS     = field{"securityToken", "security_token"}
	fRegion  = field{"regionId", "region_id"}
	topKeys  = []field{fTop}
	iacKeys  = []field{fSchema, fRos, fCwd, fModel, fKey, fHeaders, fThinking, fUser, fChannel, fLang, fPresent, fRunMode, fPipeline, fCleanup, fCloud, fGuidance, fGuideID, fFence, fDigest}
	thinKeys = []field{fEnabled, fEffort, fBudget}
	akKeys   = []field{fAKID, fAKSec, fSTS, fRegion}
)

// ParseForwardedProps validates forwardedProps strictly and returns its
// iacCode member. Every failure wraps ErrInvalidForwardedProps.
func ParseForwardedProps(raw json.RawMessage) (*IacCode, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, invalid("forwardedProps", "is not JSON")
	}
	top, err := object(v, "forwardedProps", topKeys)
	if err != nil {
		return nil, err
	}
	iv, ok, err := pick(top, fTop)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalid("iacCode", "is required")
	}
	m, err := object(iv, "iacCode", iacKeys)
	if err != nil {
		return nil, err
	}
	return parseIacCode(m)
}

// ParseGenericForwardedProps is ParseForwardedProps for the generic A2A
// profile: forwardedProps must be an object, its iacCode member is
// optional (absent gives the zero IacCode) and validated as strictly as
// ParseForwardedProps does when present, and every other member is
// ignored, because a front end other than iac-code's puts its own
// properties there.
func ParseGenericForwardedProps(raw json.RawMessage) (*IacCode, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, invalid("forwardedProps", "is not JSON")
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("forwardedProps", "must be an object")
	}
	iv, ok, err := pick(top, fTop)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &IacCode{}, nil
	}
	m, err := object(iv, "iacCode", iacKeys)
	if err != nil {
		return nil, err
	}
	return parseIacCode(m)
}

func parseIacCode(m map[string]any) (*IacCode, error) {
	ic := &IacCode{}
	sv, ok, err := pick(m, fSchema)
	if err != nil {
		return nil, err
	}
	// Literal[1] in strict mode: only the integer 1; 1.0, true and "1" fail.
	if n, isNum := sv.(json.Number); !ok || !isNum || n.String() != "1" {
		return nil, invalid("schemaVersion", "must be 1")
	}
	ic.SchemaVersion = 1
	if ic.RosInvocationID, err = reqString(m, fRos); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(ic.RosInvocationID); n < 1 || n > maxRosInvocationID {
		return nil, invalid("rosInvocationId", "must have 1..256 characters")
	}
	if ic.CWD, err = reqString(m, fCwd); err != nil {
		return nil, err
	}
	strs := []struct {
		f       field
		dst     *string
		allowed []string // a Literal: only these values, "" included
	}{
		{fModel, &ic.Model, nil}, {fKey, &ic.LLMApiKey, nil}, {fChannel, &ic.Channel, nil},
		{fLang, &ic.PreferredLanguage, nil}, {fPipeline, &ic.PipelineName, nil},
		{fPresent, &ic.CandidatePresentation, []string{"standard", "rich"}},
		{fRunMode, &ic.RunMode, []string{"normal", "pipeline"}},
	}
	for _, s := range strs {
		v, present, err := optString(m, s.f)
		if err != nil {
			return nil, err
		}
		if present && s.allowed != nil && !slices.Contains(s.allowed, v) {
			return nil, invalid(s.f[0], "has an unsupported value")
		}
		*s.dst = v
	}
	user, present, err := optString(m, fUser)
	if err != nil {
		return nil, err
	}
	if present {
		// Ours: bounded like rosInvocationId, since it is persisted (§3.3).
		if utf8.RuneCountInString(user) > maxRosInvocationID {
			return nil, invalid(fUser[0], "must have at most 256 characters")
		}
		ic.UserID = &user
	}
	if ic.CleanupOnly, err = optBool(m, fCleanup); err != nil {
		return nil, err
	}
	if ic.ActiveGuidance, err = optBool(m, fGuidance); err != nil {
		return nil, err
	}
	id, present, err := optString(m, fGuideID)
	if err != nil {
		return nil, err
	}
	if present && id == "" {
		return nil, invalid(fGuideID[0], "must not be empty")
	}
	ic.GuidanceID = id
	digest, present, err := optString(m, fDigest)
	if err != nil {
		return nil, err
	}
	if present && digest == "" {
		return nil, invalid(fDigest[0], "must not be empty")
	}
	ic.InputDigest = digest
	if fv, ok, err := pick(m, fFence); err != nil {
		return nil, err
	} else if ok && fv != nil {
		obj, isObj := fv.(map[string]any)
		if !isObj {
			return nil, invalid(fFence[0], "must be an object")
		}
		ic.ExecutionFence = obj
	}
	if ic.LLMHeaders, ic.LLMHeadersSet, err = parseHeaders(m); err != nil {
		return nil, err
	}
	if ic.Thinking, err = parseThinking(m); err != nil {
		return nil, err
	}
	if ic.AlibabaCloud, err = parseCloud(m); err != nil {
		return nil, err
	}
	return ic, nil
}

func parseHeaders(m map[string]any) (map[string]string, bool, error) {
	v, ok, err := pick(m, fHeaders)
	if err != nil || !ok || v == nil {
		return nil, false, err
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil, false, invalid("llmHeaders", "must be an object")
	}
	out := make(map[string]string, len(obj))
	for k, hv := range obj {
		s, isStr := hv.(string)
		if !isStr {
			return nil, false, invalid("llmHeaders", "values must be strings")
		}
		out[k] = s
	}
	return out, true, nil
}

func parseThinking(m map[string]any) (*Thinking, error) {
	v, ok, err := pick(m, fThinking)
	if err != nil || !ok || v == nil {
		return nil, err
	}
	tm, err := object(v, "thinking", thinKeys)
	if err != nil {
		return nil, err
	}
	t := &Thinking{}
	if t.Enabled, err = optBool(tm, fEnabled); err != nil {
		return nil, err
	}
	if t.Effort, _, err = optString(tm, fEffort); err != nil {
		return nil, err
	}
	bv, ok, _ := pick(tm, fBudget)
	if ok && bv != nil {
		n, isNum := bv.(json.Number)
		if !isNum || strings.ContainsAny(n.String(), ".eE") {
			return nil, invalid("budget", "must be an integer")
		}
		b, perr := strconv.ParseInt(n.String(), 10, 64)
		if perr != nil || b <= 0 {
			return nil, invalid("budget", "must be a positive 64-bit integer")
		}
		t.Budget = b
	}
	return t, nil
}

func parseCloud(m map[string]any) (*AlibabaCloud, error) {
	v, ok, err := pick(m, fCloud)
	if err != nil || !ok || v == nil {
		return nil, err
	}
	cm, err := object(v, "alibabaCloud", akKeys)
	if err != nil {
		return nil, err
	}
	c := &AlibabaCloud{}
	for _, s := range []struct {
		f   field
		dst *string
	}{{fAKID, &c.AccessKeyID}, {fAKSec, &c.AccessKeySecret}, {fSTS, &c.SecurityToken}, {fRegion, &c.RegionID}} {
		if *s.dst, _, err = optString(cm, s.f); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Spellings returns the accepted spellings (camelCase first) of every key
// of forwardedProps ("forwardedProps"), iacCode ("iacCode"), thinking
// ("thinking") and alibabaCloud ("alibabaCloud"), in the order of §3.3.
// internal/contract publishes them as JSON Schema, so the published
// contract cannot drift from what this package accepts. The caller owns
// the result.
func Spellings() map[string][][]string {
	out := map[string][][]string{}
	for name, fs := range map[string][]field{"forwardedProps": topKeys, "iacCode": iacKeys, "thinking": thinKeys, "alibabaCloud": akKeys} {
		list := make([][]string, len(fs))
		for i, f := range fs {
			list[i] = append([]string(nil), f...)
		}
		out[name] = list
	}
	return out
}
