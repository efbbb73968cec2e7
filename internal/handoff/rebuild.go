// Package handoff owns the AG-UI side of iac-code's session handoff that is
// not HTTP: the names of the six operations, the identity each one must
// carry, and the rebuild of the RunAgentInput that delivers a handed-over
// input on the destination (protocol.md §7.3).
//
// It is pure: it reads the apply-input payload and returns a validated
// envelope and its canonical body. It must not call A2A, admit runs or
// touch the thread store: the server's handoff route does those through
// the A2A client and the adapter.
package handoff

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/fence"
)

// Operations are the handoff operations the adapter proxies.
var Operations = map[string]bool{
	"capabilities": true, "prepare": true, "restore": true, "authorize": true, "discover": true, "apply-input": true,
}

// Identity returns the object of payload that names the protocol: the
// payload itself for prepare, payload.request for discover, payload.receipt
// otherwise.
func Identity(op string, payload map[string]any) map[string]any {
	var v any = payload
	switch op {
	case "prepare":
	case "discover":
		v = payload["request"]
	default:
		v = payload["receipt"]
	}
	m, _ := v.(map[string]any)
	return m
}

// IsAGUI reports whether the operation's identity is an AG-UI one.
func IsAGUI(op string, payload map[string]any) bool {
	return Identity(op, payload)["protocol"] == "agui"
}

// ErrInvalid is wrapped by every rebuild failure: the payload does not
// describe a deliverable input (400 "Invalid handoff request").
var ErrInvalid = errors.New("handoff: invalid input payload")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// metadataFields maps callerMetadata.iac_code keys to iacCode fields.
var metadataFields = [][2]string{
	{"iac_code_model", "model"}, {"iac_code_api_key", "llmApiKey"}, {"llm_headers", "llmHeaders"},
	{"thinking", "thinking"}, {"pipeline_name", "pipelineName"}, {"preferredLanguage", "preferredLanguage"},
}

var cloudFields = [][2]string{
	{"alibaba_cloud_access_key_id", "accessKeyId"}, {"alibaba_cloud_access_key_secret", "accessKeySecret"},
	{"alibaba_cloud_security_token", "securityToken"}, {"alibaba_cloud_region_id", "regionId"},
}

// Rebuild builds the RunAgentInput that delivers an apply-input payload's
// pending input (protocol.md §7.3): the thread and rosInvocationId of
// receipt.aguiIdentity, runId and message id = receipt.guidanceId, the
// receipt's cwd, userId and mode, the caller's current credentials from
// callerMetadata.iac_code, inputDigest, and executionFence = {version,
// owner: target}. The input is pendingInput.agui_raw_input.run_input when
// stored, else the query and the images (each checked against its size and
// SHA-256); interrupt_responses make it a resume, anything else an active
// guidance. It returns the decoded envelope and its JSON body.
func Rebuild(payload map[string]any) (*agui.RunAgentInput, []byte, error) {
	receipt, _ := payload["receipt"].(map[string]any)
	pending, okPending := payload["pendingInput"].(map[string]any)
	identity, _ := receipt["aguiIdentity"].(map[string]any)
	if receipt == nil || !okPending || identity == nil {
		return nil, nil, invalid("receipt, aguiIdentity and pendingInput are required")
	}
	var threadID, ros, guidanceID, cwd, mode, digest string
	for _, f := range []struct {
		m   map[string]any
		k   string
		dst *string
	}{
		{identity, "threadId", &threadID}, {identity, "rosInvocationId", &ros}, {receipt, "guidanceId", &guidanceID},
		{receipt, "cwd", &cwd}, {receipt, "mode", &mode}, {payload, "inputDigest", &digest},
	} {
		s, ok := f.m[f.k].(string)
		if !ok || s == "" {
			return nil, nil, invalid("%s must be a non-empty string", f.k)
		}
		*f.dst = s
	}
	owner, err := fence.CanonicalOwner(payload["target"])
	if err != nil {
		return nil, nil, invalid("target must be a physical execution identity")
	}
	iac := map[string]any{
		"schemaVersion": 1, "rosInvocationId": ros, "cwd": cwd, "runMode": mode,
		"guidanceId": guidanceID, "inputDigest": digest,
		"executionFence": map[string]any{"version": fence.Version, "owner": owner},
	}
	if u, ok := receipt["userId"]; ok && u != nil {
		iac["userId"] = u
	}
	caller, _ := payload["callerMetadata"].(map[string]any)
	md, _ := caller["iac_code"].(map[string]any)
	for _, f := range metadataFields {
		if v, ok := md[f[0]]; ok && v != nil {
			iac[f[1]] = v
		}
	}
	cloud := map[string]any{}
	for _, f := range cloudFields {
		if v, ok := md[f[0]]; ok && v != nil {
			cloud[f[1]] = v
		}
	}
	if len(cloud) > 0 {
		iac["alibabaCloud"] = cloud
	}

	env, err := pendingEnvelope(pending, guidanceID)
	if err != nil {
		return nil, nil, err
	}
	resume := pending["interrupt_responses"]
	if !truthy(resume) {
		resume = env["resume"]
	}
	iac["activeGuidance"] = !truthy(resume)
	env["threadId"], env["runId"] = threadID, guidanceID
	if truthy(resume) {
		env["resume"] = resume
	} else {
		delete(env, "resume")
	}
	env["forwardedProps"] = map[string]any{"iacCode": iac}
	body, err := json.Marshal(env)
	if err != nil {
		return nil, nil, invalid("the input cannot be encoded")
	}
	in, err := agui.DecodeRunAgentInput(body)
	if err != nil {
		return nil, nil, invalid("the rebuilt RunAgentInput is invalid")
	}
	return in, body, nil
}

// pendingEnvelope is the stored raw run input, or one built from the
// query and the checkpointed images.
func pendingEnvelope(pending map[string]any, guidanceID string) (map[string]any, error) {
	if raw, _ := pending["agui_raw_input"].(map[string]any); raw != nil {
		if env, ok := raw["run_input"].(map[string]any); ok {
			out := make(map[string]any, len(env))
			for k, v := range env {
				out[k] = v
			}
			return out, nil
		}
	}
	var content []any
	if q, ok := pending["query"].(string); ok && q != "" {
		content = append(content, map[string]any{"type": "text", "text": q})
	}
	attachments, _ := pending["image_attachments"].(map[string]any)
	items, _ := attachments["items"].([]any)
	materialized := items
	if parts, ok := pending["image_parts"].([]any); ok && len(parts) > 0 {
		materialized = parts
	}
	if len(items) != len(materialized) {
		return nil, invalid("image content has no recoverable checkpoint")
	}
	for i, d := range items {
		desc, _ := d.(map[string]any)
		img, _ := materialized[i].(map[string]any)
		part, err := imagePart(desc, img)
		if err != nil {
			return nil, err
		}
		content = append(content, part)
	}
	messages := []any{}
	if len(content) > 0 {
		messages = append(messages, map[string]any{"id": guidanceID, "role": "user", "content": content})
	}
	return map[string]any{"messages": messages, "state": map[string]any{}, "tools": []any{}, "context": []any{}}, nil
}

// imagePart checks one checkpointed image against its descriptor.
func imagePart(desc, img map[string]any) (map[string]any, error) {
	encoded, _ := img["bytes_base64"].(string)
	raw, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err != nil {
		return nil, invalid("image bytes are not valid base64")
	}
	sum := sha256.Sum256(raw)
	if !sizeIs(desc["size_bytes"], len(raw)) || desc["sha256"] != hex.EncodeToString(sum[:]) {
		return nil, invalid("image checkpoint digest changed")
	}
	mt, ok := desc["media_type"].(string)
	name, ok2 := desc["filename"].(string)
	if !ok || !ok2 {
		return nil, invalid("image media_type and filename are required")
	}
	return map[string]any{"type": "image", "source": map[string]any{"type": "data", "value": encoded, "mimeType": mt},
		"metadata": map[string]any{"filename": name}}, nil
}

// sizeIs reports whether a JSON number (decoded with UseNumber or not) is
// the integer n.
func sizeIs(v any, n int) bool {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return err == nil && i == int64(n)
	case float64:
		return x == float64(n)
	}
	return false
}

// truthy is Python's truth of a JSON value, for the interrupt responses.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case bool:
		return x
	case string:
		return x != ""
	}
	return true
}
