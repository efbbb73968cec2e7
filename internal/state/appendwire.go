package state

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/iac-code-agui/iac-code-agui/internal/jsonstr"
)

// appendWire appends w exactly as encoding/json's Encoder writes it with
// HTML escaping off and a two-space indent (FuzzAppendWire compares the
// two), without the reflection and the second, indenting pass: every save
// encodes a document, three times per normal turn. Pending values, which
// only interrupts have, are free-form and still go through encoding/json.
func appendWire(dst []byte, w *wireThread) ([]byte, error) {
	dst = append(dst, "{\n"...)
	dst = wireKey(dst, 1, "appliedResumeDigests")
	if len(w.AppliedResumeDigests) == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, "[\n"...)
		for i, a := range w.AppliedResumeDigests {
			dst = append(wireIndent(dst, 2), "{\n"...)
			dst = jsonstr.Append(wireKey(dst, 3, "digest"), a.Digest)
			dst = jsonstr.Append(wireKey(append(dst, ",\n"...), 3, "executionId"), a.ExecutionID)
			dst = jsonstr.Append(wireKey(append(dst, ",\n"...), 3, "interruptId"), a.InterruptID)
			dst = append(wireIndent(append(dst, '\n'), 2), '}')
			dst = wireNext(dst, i, len(w.AppliedResumeDigests))
		}
		dst = append(wireIndent(dst, 1), ']')
	}
	dst = jsonstr.Append(wireKey(append(dst, ",\n"...), 1, "contextId"), w.ContextID)
	dst = jsonstr.Append(wireKey(append(dst, ",\n"...), 1, "cwd"), w.CWD)
	dst = append(wireKey(append(dst, ",\n"...), 1, "execution"), "{\n"...)
	e := &w.Execution
	dst = jsonstr.Append(wireKey(dst, 2, "executionId"), e.ExecutionID)
	dst = optString(wireKey(append(dst, ",\n"...), 2, "lastTaskId"), e.LastTaskID)
	dst = wireKey(append(dst, ",\n"...), 2, "pending")
	var err error
	if dst, err = appendPending(dst, e.Pending); err != nil {
		return nil, err
	}
	dst = wireStrings(wireKey(append(dst, ",\n"...), 2, "pipelineOpenSteps"), 2, e.PipelineOpenSteps)
	dst = strconv.AppendInt(wireKey(append(dst, ",\n"...), 2, "pipelineSequence"), e.PipelineSequence, 10)
	dst = jsonstr.Append(wireKey(append(dst, ",\n"...), 2, "rosInvocationId"), e.RosInvocationID)
	dst = optString(wireKey(append(dst, ",\n"...), 2, "taskId"), e.TaskID)
	dst = wireStrings(wireKey(append(dst, ",\n"...), 2, "textSnapshotDigests"), 2, e.TextSnapshotDigests)
	dst = append(wireIndent(append(dst, '\n'), 1), '}')
	dst = optString(wireKey(append(dst, ",\n"...), 1, "iacCodeSessionId"), w.IacCodeSessionID)
	dst = wireKey(append(dst, ",\n"...), 1, "runDigests")
	if len(w.RunDigests) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, "{\n"...)
		ids := make([]string, 0, len(w.RunDigests))
		for id := range w.RunDigests {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for i, id := range ids {
			dst = jsonstr.Append(append(jsonstr.Append(wireIndent(dst, 2), id), ": "...), w.RunDigests[id])
			dst = wireNext(dst, i, len(ids))
		}
		dst = append(wireIndent(dst, 1), '}')
	}
	dst = wireStrings(wireKey(append(dst, ",\n"...), 1, "runOrder"), 1, w.RunOrder)
	dst = strconv.AppendInt(wireKey(append(dst, ",\n"...), 1, "schemaVersion"), int64(w.SchemaVersion), 10)
	dst = wireStrings(wireKey(append(dst, ",\n"...), 1, "terminalExecutionIds"), 1, w.TerminalExecutionIDs)
	dst = jsonstr.Append(wireKey(append(dst, ",\n"...), 1, "threadId"), w.ThreadID)
	dst = optString(wireKey(append(dst, ",\n"...), 1, "userId"), w.UserID)
	return append(dst, "\n}\n"...), nil
}

// appendPending writes the pending map at depth 2; each value goes
// through encoding/json, indented to its place.
func appendPending(dst []byte, pending map[string]wirePending) ([]byte, error) {
	if len(pending) == 0 {
		return append(dst, "{}"...), nil
	}
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	dst = append(dst, "{\n"...)
	for i, id := range ids {
		p := pending[id]
		dst = append(append(jsonstr.Append(wireIndent(dst, 3), id), ": "...), "{\n"...)
		dst = strconv.AppendBool(wireKey(dst, 4, "sideband"), p.Sideband)
		dst = wireKey(append(dst, ",\n"...), 4, "value")
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("        ", "  ") // depth 4
		if err := enc.Encode(p.Value); err != nil {
			return nil, err
		}
		dst = append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		dst = append(wireIndent(append(dst, '\n'), 3), '}')
		dst = wireNext(dst, i, len(ids))
	}
	return append(wireIndent(dst, 2), '}'), nil
}

// wireKey appends the indentation of depth and `"name": `.
func wireKey(dst []byte, depth int, name string) []byte {
	dst = append(wireIndent(dst, depth), '"')
	return append(append(dst, name...), `": `...)
}

func wireIndent(dst []byte, depth int) []byte {
	for range depth {
		dst = append(dst, "  "...)
	}
	return dst
}

// wireNext ends element i of n: a comma unless it is the last, then a newline.
func wireNext(dst []byte, i, n int) []byte {
	if i < n-1 {
		dst = append(dst, ',')
	}
	return append(dst, '\n')
}

func optString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return jsonstr.Append(dst, *s)
}

// wireStrings writes a list of strings whose key is at depth.
func wireStrings(dst []byte, depth int, list []string) []byte {
	if len(list) == 0 {
		return append(dst, "[]"...)
	}
	dst = append(dst, "[\n"...)
	for i, s := range list {
		dst = wireNext(jsonstr.Append(wireIndent(dst, depth+1), s), i, len(list))
	}
	return append(wireIndent(dst, depth), ']')
}
