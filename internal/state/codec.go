package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// Decode parses and validates a stored document of threadID (protocol.md
// §8.4). Errors wrap ErrUnavailable. Other Store backends use it with Encode
// so that every backend stores the same bytes under the same rules.
func Decode(data []byte, threadID string) (*Thread, error) {
	t, err := decodeThread(data, threadID)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, err.Error())
	}
	return t, nil
}

// Encode renders t as the persisted document (§8.5): normalised, 2-space
// indented, keys sorted at every level, non-ASCII and <>& unescaped, with a
// trailing newline. Errors wrap ErrInvalidDocument. Use it rather than
// json.Marshal(t), whose field order and nil handling differ.
func Encode(t *Thread) ([]byte, error) { return encodeThread(t) }

// decodeThread parses and validates a document per protocol.md §8.4, mirroring
// the original's checks: missing optional cursors default to empty, the three
// top-level collections are required, unknown keys and a stale pending
// "expiresAt" are ignored. The returned error names the field, never a value.
func decodeThread(data []byte, threadID string) (*Thread, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, errors.New("not JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON")
	}
	doc, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	if n, ok := doc["schemaVersion"].(json.Number); !ok || !numberIs(n, SchemaVersion) {
		return nil, errors.New("unsupported schemaVersion")
	}
	t := &Thread{SchemaVersion: SchemaVersion}
	var err error
	if t.ThreadID, err = requiredString(doc, "threadId"); err != nil {
		return nil, err
	}
	if t.ThreadID != threadID {
		return nil, errors.New("threadId does not match the requested thread")
	}
	exec, ok := doc["execution"].(map[string]any)
	if !ok {
		return nil, errors.New("execution is invalid")
	}
	runDigests, ok := doc["runDigests"].(map[string]any)
	if !ok {
		return nil, errors.New("runDigests is invalid")
	}
	applied, ok := doc["appliedResumeDigests"].([]any)
	if !ok {
		return nil, errors.New("appliedResumeDigests is invalid")
	}
	terminal, ok := doc["terminalExecutionIds"].([]any)
	if !ok {
		return nil, errors.New("terminalExecutionIds is invalid")
	}
	if t.ContextID, err = requiredString(doc, "contextId"); err != nil {
		return nil, err
	}
	if t.CWD, err = requiredString(doc, "cwd"); err != nil {
		return nil, err
	}
	if t.UserID, err = nullableString(doc, "userId"); err != nil {
		return nil, err
	}
	if t.IacCodeSessionID, err = nullableString(doc, "iacCodeSessionId"); err != nil {
		return nil, err
	}
	if err = decodeExecution(exec, &t.Execution); err != nil {
		return nil, err
	}
	if t.AppliedResumeDigests, err = decodeApplied(applied); err != nil {
		return nil, err
	}
	t.RunDigests = make(map[string]string, len(runDigests))
	for k, v := range runDigests {
		if s, ok := v.(string); ok && k != "" && s != "" {
			t.RunDigests[k] = s
		}
	}
	// runOrder is ours and optional: the original neither writes nor
	// reads it; entries it does not name count as the oldest runs.
	if order, ok := doc["runOrder"].([]any); ok {
		for _, v := range order {
			if s, ok := v.(string); ok && s != "" {
				t.RunOrder = append(t.RunOrder, s)
			}
		}
	}
	t.RunOrder = t.runOrder()
	for len(t.RunOrder) > MaxRunDigests {
		delete(t.RunDigests, t.RunOrder[0])
		t.RunOrder = t.RunOrder[1:]
	}
	t.TerminalExecutionIDs = make([]string, 0, len(terminal))
	for _, v := range terminal {
		if s, ok := v.(string); ok && s != "" {
			t.TerminalExecutionIDs = append(t.TerminalExecutionIDs, s)
		}
	}
	t.TerminalExecutionIDs = sortedSet(t.TerminalExecutionIDs)
	return t, nil
}

func decodeExecution(m map[string]any, e *Execution) error {
	var err error
	if e.ExecutionID, err = requiredString(m, "executionId"); err != nil {
		return err
	}
	if e.RosInvocationID, err = requiredString(m, "rosInvocationId"); err != nil {
		return err
	}
	if e.TaskID, err = nullableString(m, "taskId"); err != nil {
		return err
	}
	// The original reads lastTaskId unchecked; we hold it to taskId's rule.
	if e.LastTaskID, err = nullableString(m, "lastTaskId"); err != nil {
		return err
	}
	if v, ok := m["pipelineSequence"]; ok {
		n, isNum := v.(json.Number)
		seq, perr := strconv.ParseInt(string(n), 10, 64)
		if !isNum || perr != nil || seq < 0 {
			return errors.New("pipelineSequence is invalid")
		}
		e.PipelineSequence = seq
	}
	if e.PipelineOpenSteps, err = stringList(m, "pipelineOpenSteps", func(s string) bool { return s != "" }); err != nil {
		return err
	}
	if e.TextSnapshotDigests, err = stringList(m, "textSnapshotDigests", isDigest); err != nil {
		return err
	}
	e.Pending = map[string]Pending{}
	rawPending, ok := m["pending"]
	if !ok {
		return nil
	}
	pending, ok := rawPending.(map[string]any)
	if !ok {
		return errors.New("pending is invalid")
	}
	for id, rp := range pending {
		entry, ok := rp.(map[string]any)
		if !ok {
			return errors.New("pending entry is invalid")
		}
		value, isObj := entry["value"].(map[string]any)
		sideband, isBool := false, true
		if sb, present := entry["sideband"]; present {
			sideband, isBool = sb.(bool)
		}
		if !isObj || value == nil || !isBool {
			return errors.New("pending entry is invalid")
		}
		value = projection.Project(value)
		if inputID, isStr := value["inputId"].(string); !isStr || inputID != id {
			return errors.New("pending inputId does not match its key")
		}
		e.Pending[id] = Pending{Value: value, Sideband: sideband}
	}
	return nil
}

func decodeApplied(list []any) ([]AppliedDigest, error) {
	out := make([]AppliedDigest, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, errors.New("appliedResumeDigests entry is invalid")
		}
		var a AppliedDigest
		var err error
		if a.ExecutionID, err = requiredString(m, "executionId"); err != nil {
			return nil, err
		}
		if a.InterruptID, err = requiredString(m, "interruptId"); err != nil {
			return nil, err
		}
		if a.Digest, err = requiredString(m, "digest"); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return dedupeApplied(out), nil
}

// dedupeApplied keeps the last digest per (executionId, interruptId), as the
// original's dict does, and sorts the result.
func dedupeApplied(in []AppliedDigest) []AppliedDigest {
	type pair struct{ e, i string }
	last := make(map[pair]int, len(in))
	for i, a := range in {
		last[pair{a.ExecutionID, a.InterruptID}] = i
	}
	out := make([]AppliedDigest, 0, len(last))
	for i, a := range in {
		if last[pair{a.ExecutionID, a.InterruptID}] == i {
			out = append(out, a)
		}
	}
	sortApplied(out)
	return out
}

func requiredString(m map[string]any, key string) (string, error) {
	s, ok := m[key].(string)
	if !ok || s == "" {
		return "", fmt.Errorf("%s is required", key)
	}
	return s, nil
}

func nullableString(m map[string]any, key string) (*string, error) {
	switch v := m[key].(type) {
	case nil:
		return nil, nil
	case string:
		return &v, nil
	default:
		return nil, fmt.Errorf("%s is invalid", key)
	}
}

func stringList(m map[string]any, key string, valid func(string) bool) ([]string, error) {
	v, ok := m[key]
	if !ok {
		return []string{}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is invalid", key)
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok || !valid(s) {
			return nil, fmt.Errorf("%s is invalid", key)
		}
		out = append(out, s)
	}
	return sortedSet(out), nil
}

// numberIs compares a JSON number with an integer the way Python's == does
// for int and float (1, 1.0 and 1e0 all equal 1).
func numberIs(n json.Number, want int64) bool {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i == want
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && f == float64(want)
}

func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
