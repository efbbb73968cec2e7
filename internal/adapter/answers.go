package adapter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Input kinds of the iac-code projection (protocol.md §5.2).
const (
	resourceSelectionLabel = 1024
)

// resourceSelectionPrefix starts the text answer of a cloud resource
// selection. The original's constant is not public (protocol.md §12.2); this
// value is our choice (docs/decisions.md).
const resourceSelectionPrefix = "[iac-code:cloud_resource_selection] "

// answerDigest is canonical_digest({"status", "payload"}) (protocol.md §5.8):
// an absent payload digests as null, as Python's None.
func answerDigest(e agui.ResumeEntry) (string, error) {
	payload := e.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	status, _ := json.Marshal(e.Status)
	var b bytes.Buffer
	b.WriteString(`{"payload":`)
	b.Write(payload)
	b.WriteString(`,"status":`)
	b.Write(status)
	b.WriteString(`}`)
	return request.Digest(b.Bytes())
}

func kindOf(p state.Pending) projection.Kind { return projection.KindOf(p.Value) }

func isPermission(p state.Pending) bool { return kindOf(p) == projection.KindPermission }

// validateAnswer applies §5.7: a resolved entry needs a payload matching the
// interrupt's responseSchema; a cancelled permission is validated as deny;
// other cancelled kinds skip validation. A refusal names the failing
// member of the resume (field, reason: ours, protocol.md §5.7).
func validateAnswer(a answer) error {
	if kindOf(a.pending) == projection.KindCloudResourceSelection && !selectionIdentified(a.pending) {
		return runErr(CodeA2AProtocolError, i18n.MsgResourceSelectorInvalid)
	}
	at := "/resume/" + strconv.Itoa(a.index) + "/payload"
	var payload any
	switch {
	case a.entry.Status == agui.ResumeCancelled && isPermission(a.pending):
		payload = map[string]any{"decision": "deny"}
	case a.entry.Status == agui.ResumeCancelled:
		return validateCancelled(a, at)
	case len(a.entry.Payload) == 0:
		return payloadErr(i18n.MsgPayloadRequired, at, "is required")
	default:
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(a.entry.Payload))
		if err != nil {
			return payloadErr(i18n.MsgPayloadInvalid, at, "is not valid JSON")
		}
		payload = v
	}
	schema, err := compileSchema(mapper.BuildInterrupt(a.pending.Value).ResponseSchema)
	if err != nil {
		return runErr(CodeResumePayloadInvalid, i18n.MsgPayloadInvalid)
	}
	if err := schema.Validate(payload); err != nil {
		if f, ok := payloadFailure(err); ok {
			return payloadErr(i18n.MsgPayloadInvalid, at+f.loc, f.reason)
		}
		return runErr(CodeResumePayloadInvalid, i18n.MsgPayloadInvalid)
	}
	if kindOf(a.pending) == projection.KindCloudResourceSelection {
		// The label sent is the payload's label, else the value (§5.8),
		// so a long value without a label is as long a label.
		p := payloadMap(a.entry.Payload)
		label, _ := p["label"].(string)
		key := "label"
		if label == "" {
			key = "value"
			if _, ok := p["value"].(string); !ok {
				key = "freeText"
			}
			label, _ = firstString(p, "value", "freeText")
		}
		if utf8.RuneCountInString(label) > resourceSelectionLabel {
			return payloadErr(i18n.MsgResourceLabelTooLong, at+"/"+key, "must have at most "+strconv.Itoa(resourceSelectionLabel)+" characters")
		}
	}
	return nil
}

// payloadErr is RESUME_PAYLOAD_INVALID with the failing member.
func payloadErr(msg, field, reason string) *Error {
	return runErr(CodeResumePayloadInvalid, msg).with(&Details{Field: field, Reason: reason})
}

// selectionIdentified reports whether a resource selection names what its
// answer must name back: a selector id and a tool-use id (§5.8). Without
// them A2A sent an input no answer can match, a protocol error rather than
// a bad answer.
func selectionIdentified(p state.Pending) bool {
	selector, _ := p.Value["selector"].(map[string]any)
	id, _ := selector["id"].(string)
	toolUseID, _ := p.Value["toolUseId"].(string)
	return strings.TrimSpace(id) != "" && strings.TrimSpace(toolUseID) != ""
}

// validateCancelled accepts a cancelled resource selection with no payload
// or only {"optionsEmpty": <bool>} (§5.8).
func validateCancelled(a answer, at string) error {
	if kindOf(a.pending) != projection.KindCloudResourceSelection || len(a.entry.Payload) == 0 {
		return nil
	}
	m := payloadMap(a.entry.Payload)
	if m != nil && len(m) == 0 {
		return nil // {} carries nothing, like an absent payload
	}
	_, isBool := m["optionsEmpty"].(bool)
	if m == nil || len(m) != 1 || !isBool {
		return payloadErr(i18n.MsgPayloadInvalid, at, `must be absent, {} or {"optionsEmpty": <boolean>} for a cancelled resource selection`)
	}
	return nil
}

// compileSchema compiles a responseSchema under a synthetic URL; remote
// references are never loaded.
func compileSchema(schema map[string]any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://interrupt/response.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem://interrupt/response.json")
}

func payloadMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// permissionData is the exact A2A permission reply payload (§5.8).
func permissionData(a answer, taskID string) map[string]any {
	decision := "deny"
	if a.entry.Status == agui.ResumeResolved {
		decision, _ = payloadMap(a.entry.Payload)["decision"].(string)
	}
	requestTaskID, _ := a.pending.Value["requestTaskId"].(string)
	if requestTaskID == "" {
		requestTaskID = taskID
	}
	inputID, _ := a.pending.Value["inputId"].(string)
	toolUseID, _ := a.pending.Value["toolUseId"].(string)
	return map[string]any{
		"schemaVersion": 1,
		"kind":          string(projection.KindPermission),
		"requestTaskId": requestTaskID,
		"inputId":       inputID,
		"toolUseId":     toolUseID,
		"decision":      decision,
	}
}

// answerText is the text sent for a resolved non-permission answer (§5.8).
// It also returns the label shown in the answered tool's TOOL_CALL_RESULT.
func answerText(a answer, contextID, taskID string) (string, error) {
	p := payloadMap(a.entry.Payload)
	switch kind := kindOf(a.pending); {
	case kind.Generic():
		// The schema made text a string: it is sent as it is.
		text, _ := p["text"].(string)
		return text, nil
	case kind == projection.KindCloudResourceSelection:
		return resourceSelectionText(a, p, contextID, taskID), nil
	case kind == projection.KindDeploymentConfirmation:
		if id, ok := firstString(p, "selectedId", "selected_id"); ok {
			overrides, _ := p["parameter_overrides"].(map[string]any)
			action := optionField(a.pending.Value, id, "action")
			if len(overrides) == 0 || action == "" {
				return optionLabel(a.pending.Value, id), nil
			}
			// The label alone would drop the parameters the user edited:
			// send the option's action with them (docs/decisions.md).
			b, _ := json.Marshal(map[string]any{"action": action, "parameter_overrides": overrides})
			return string(b), nil
		}
		// The original's encoding is not public (protocol.md §12.2): send the
		// decision as compact JSON the agent can parse (docs/decisions.md).
		b, _ := json.Marshal(map[string]any{"action": p["action"], "parameter_overrides": p["parameter_overrides"]})
		return string(b), nil
	}
	if text, ok := firstString(p, "freeText", "free_text"); ok && text != "" {
		return text, nil
	}
	if id, ok := firstString(p, "selectedId", "selected_id"); ok && id != "" {
		return optionLabel(a.pending.Value, id), nil
	}
	return "", runErr(CodeResumePayloadInvalid, i18n.MsgPayloadNoAnswer)
}

// answerLabel is what the answered tool's TOOL_CALL_RESULT shows (§4.9):
// the chosen resource's label for a resource selection, else the text
// sent.
func answerLabel(a answer, sent string) string {
	if kindOf(a.pending) != projection.KindCloudResourceSelection {
		return sent
	}
	p := payloadMap(a.entry.Payload)
	if label, _ := p["label"].(string); label != "" {
		return label
	}
	if v, ok := firstString(p, "value", "freeText"); ok && v != "" {
		return v
	}
	return sent
}

func resourceSelectionText(a answer, p map[string]any, contextID, taskID string) string {
	v := a.pending.Value
	sel := map[string]any{
		"schemaVersion": 1,
		"kind":          string(projection.KindCloudResourceSelection),
		"status":        "selected",
		"requestTaskId": stringOr(v["requestTaskId"], taskID),
		"contextId":     stringOr(v["contextId"], contextID),
		"inputId":       v["inputId"],
		"toolUseId":     v["toolUseId"],
	}
	if selector, ok := v["selector"].(map[string]any); ok {
		if id, ok := selector["id"].(string); ok {
			sel["selectorId"] = id
		}
	}
	if a.entry.Status == agui.ResumeCancelled {
		sel["status"] = "canceled"
		if oe, ok := p["optionsEmpty"].(bool); ok {
			sel["optionsEmpty"] = oe
		}
	} else {
		value, _ := firstString(p, "value", "freeText")
		label, _ := p["label"].(string)
		if label == "" {
			label = value
		}
		sel["value"], sel["label"] = value, label
		if _, free := p["freeText"]; free {
			sel["source"] = "free_text"
		} else {
			sel["source"] = "option"
		}
	}
	b, _ := json.Marshal(sel)
	return resourceSelectionPrefix + string(b)
}

func stringOr(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

func firstString(m map[string]any, keys ...string) (string, bool) {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s, true
		}
	}
	return "", false
}

// optionLabel returns the label, else name, else id of the option the
// schema offered under id (§5.8); a non-object option is its string form,
// and an id no option has is sent as it is.
func optionLabel(projection map[string]any, id string) string {
	raw, _ := projection["options"].([]any)
	opt, std, ok := mapper.OptionByID(raw, id)
	if !ok {
		return id
	}
	if m, isObj := opt.(map[string]any); isObj {
		for _, k := range []string{"label", "name", "id"} {
			if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
				return s
			}
		}
	}
	return std.Title
}

// optionField returns a string field of the option the schema offered
// under id, or "".
func optionField(projection map[string]any, id, field string) string {
	s, _ := findOption(projection, id)[field].(string)
	return s
}

// findOption returns the object option the schema offered under id.
func findOption(projection map[string]any, id string) map[string]any {
	raw, _ := projection["options"].([]any)
	opt, _, _ := mapper.OptionByID(raw, id)
	m, _ := opt.(map[string]any)
	return m
}

// toolUseIDOf finds the tool call an answer belongs to: the projection's
// toolUseId, else the id encoded in an "ask-<toolUseId>" input id.
func toolUseIDOf(p state.Pending) string {
	if id, ok := p.Value["toolUseId"].(string); ok && id != "" {
		return id
	}
	if id, ok := p.Value["inputId"].(string); ok && strings.HasPrefix(id, "ask-") {
		return strings.TrimPrefix(id, "ask-")
	}
	return ""
}
