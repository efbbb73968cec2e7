package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/iac-code-agui/iac-code-agui/internal/jsonstr"
)

// ErrInvalidEvent reports an event that cannot be put on the wire without
// breaking the AG-UI 1.0 schema (nil event, interrupt outcome without
// interrupts, a free-form value encoding/json rejects).
var ErrInvalidEvent = errors.New("agui: invalid event")

// AppendEvent appends the one-line compact JSON of ev to dst, with the keys
// "type" and "timestamp" (epoch milliseconds) first and then the event's
// fields in the order of protocol.md §4.2. If ev cannot be encoded it
// returns dst unchanged; use EncodeEvent to see the error.
func AppendEvent(dst []byte, ts int64, ev Event) []byte {
	out, err := EncodeEvent(dst, ts, ev)
	if err != nil {
		return dst
	}
	return out
}

// MarshalEvent returns the one-line JSON of ev stamped with ts.
func MarshalEvent(ts int64, ev Event) ([]byte, error) {
	return EncodeEvent(nil, ts, ev)
}

// EncodeEvent is AppendEvent with the error reported. On error the returned
// slice is dst with its original length.
func EncodeEvent(dst []byte, ts int64, ev Event) ([]byte, error) {
	n := len(dst)
	out, err := encodeEvent(dst, ts, ev)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// open writes `{"type":"<T>","timestamp":<ts>`; the type literals are
// plain ASCII constants, so they need no escaping.
func open(dst []byte, t EventType, ts int64) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, t...)
	dst = append(dst, `","timestamp":`...)
	return strconv.AppendInt(dst, ts, 10)
}

// field writes `,"<key>":` followed by s as a JSON string.
func field(dst []byte, key, s string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return jsonstr.Append(dst, s)
}

// optField writes the field only when s is not empty (AG-UI 1.0: no null
// and no empty placeholder for optional fields).
func optField(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return field(dst, key, s)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func encodeEvent(dst []byte, ts int64, ev Event) ([]byte, error) {
	// The hot events come first; each case checks for a nil pointer so a
	// typed nil never panics.
	switch e := ev.(type) {
	case *TextMessageContent:
		if e == nil {
			break
		}
		dst = open(dst, TypeTextMessageContent, ts)
		dst = field(dst, "messageId", e.MessageID)
		return append(field(dst, "delta", e.Delta), '}'), nil
	case *ReasoningMessageContent:
		if e == nil {
			break
		}
		dst = open(dst, TypeReasoningMessageContent, ts)
		dst = field(dst, "messageId", e.MessageID)
		return append(field(dst, "delta", e.Delta), '}'), nil
	case *ToolCallArgs:
		if e == nil {
			break
		}
		dst = open(dst, TypeToolCallArgs, ts)
		dst = field(dst, "toolCallId", e.ToolCallID)
		return append(field(dst, "delta", e.Delta), '}'), nil
	case *TextMessageStart:
		if e == nil {
			break
		}
		dst = open(dst, TypeTextMessageStart, ts)
		dst = field(dst, "messageId", e.MessageID)
		return append(field(dst, "role", orDefault(e.Role, "assistant")), '}'), nil
	case *TextMessageEnd:
		if e == nil {
			break
		}
		return idEvent(dst, TypeTextMessageEnd, ts, "messageId", e.MessageID), nil
	case *ReasoningStart:
		if e == nil {
			break
		}
		return idEvent(dst, TypeReasoningStart, ts, "messageId", e.MessageID), nil
	case *ReasoningMessageStart:
		if e == nil {
			break
		}
		// AG-UI 1.0 requires the literal "reasoning"; any other role fails
		// the client's run, so the field is fixed here.
		dst = open(dst, TypeReasoningMessageStart, ts)
		dst = field(dst, "messageId", e.MessageID)
		return append(dst, `,"role":"reasoning"}`...), nil
	case *ReasoningMessageEnd:
		if e == nil {
			break
		}
		return idEvent(dst, TypeReasoningMessageEnd, ts, "messageId", e.MessageID), nil
	case *ReasoningEnd:
		if e == nil {
			break
		}
		return idEvent(dst, TypeReasoningEnd, ts, "messageId", e.MessageID), nil
	case *ToolCallStart:
		if e == nil {
			break
		}
		dst = open(dst, TypeToolCallStart, ts)
		dst = field(dst, "toolCallId", e.ToolCallID)
		dst = field(dst, "toolCallName", e.ToolCallName)
		return append(optField(dst, "parentMessageId", e.ParentMessageID), '}'), nil
	case *ToolCallEnd:
		if e == nil {
			break
		}
		return idEvent(dst, TypeToolCallEnd, ts, "toolCallId", e.ToolCallID), nil
	case *StepStarted:
		if e == nil {
			break
		}
		return idEvent(dst, TypeStepStarted, ts, "stepName", e.StepName), nil
	case *StepFinished:
		if e == nil {
			break
		}
		return idEvent(dst, TypeStepFinished, ts, "stepName", e.StepName), nil
	case *RunStarted:
		if e == nil {
			break
		}
		dst = open(dst, TypeRunStarted, ts)
		dst = field(dst, "threadId", e.ThreadID)
		dst = field(dst, "runId", e.RunID)
		return append(optField(dst, "parentRunId", e.ParentRunID), '}'), nil
	case *RunFinished:
		if e == nil {
			break
		}
		return appendRunFinished(dst, ts, e)
	case *RunError:
		if e == nil {
			break
		}
		dst = open(dst, TypeRunError, ts)
		dst = field(dst, "message", e.Message)
		dst = field(dst, "code", e.Code)
		dst = appendUsage(dst, e.Usage)
		if e.Field != "" {
			dst = append(dst, `,"metadata":{"field":`...)
			dst = jsonstr.Append(dst, e.Field)
			dst = append(field(dst, "reason", e.Reason), '}')
		}
		return append(dst, '}'), nil
	case *ToolCallResult:
		if e == nil {
			break
		}
		dst = open(dst, TypeToolCallResult, ts)
		dst = field(dst, "messageId", e.MessageID)
		dst = field(dst, "toolCallId", e.ToolCallID)
		dst = field(dst, "content", e.Content)
		return append(field(dst, "role", orDefault(e.Role, "tool")), '}'), nil
	case *ActivitySnapshot:
		if e == nil {
			break
		}
		return appendActivity(dst, ts, e)
	case *Custom:
		if e == nil {
			break
		}
		dst = open(dst, TypeCustom, ts)
		dst = field(dst, "name", e.Name)
		dst = append(dst, `,"value":`...)
		var err error
		if dst, err = appendValue(dst, e.Value); err != nil {
			return dst, fmt.Errorf("%w: CUSTOM value: %w", ErrInvalidEvent, err)
		}
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("%w: nil or unknown event %T", ErrInvalidEvent, ev)
}

// idEvent writes an event whose only field is one identifier.
func idEvent(dst []byte, t EventType, ts int64, key, id string) []byte {
	dst = open(dst, t, ts)
	return append(field(dst, key, id), '}')
}

func appendRunFinished(dst []byte, ts int64, e *RunFinished) ([]byte, error) {
	dst = open(dst, TypeRunFinished, ts)
	dst = field(dst, "threadId", e.ThreadID)
	dst = field(dst, "runId", e.RunID)
	switch e.Outcome.Type {
	case OutcomeSuccess, "":
		// The zero Outcome means success; interrupts never ride on it.
		dst = append(dst, `,"outcome":{"type":"success"}`...)
	case OutcomeInterrupt:
		if len(e.Outcome.Interrupts) == 0 {
			return dst, fmt.Errorf("%w: interrupt outcome without interrupts", ErrInvalidEvent)
		}
		dst = append(dst, `,"outcome":{"type":"interrupt","interrupts":[`...)
		for i := range e.Outcome.Interrupts {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendInterrupt(dst, &e.Outcome.Interrupts[i]); err != nil {
				return dst, fmt.Errorf("%w: interrupt %d: %w", ErrInvalidEvent, i, err)
			}
		}
		dst = append(dst, "]}"...)
	default:
		return dst, fmt.Errorf("%w: unknown outcome type %q", ErrInvalidEvent, e.Outcome.Type)
	}
	return append(appendUsage(dst, e.Usage), '}'), nil
}

func appendInterrupt(dst []byte, in *Interrupt) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = jsonstr.Append(dst, in.ID)
	dst = field(dst, "reason", in.Reason)
	dst = optField(dst, "message", in.Message)
	dst = optField(dst, "toolCallId", in.ToolCallID)
	dst = append(dst, `,"responseSchema":`...)
	var err error
	if len(in.ResponseSchema) == 0 {
		// responseSchema must be an object, never null.
		dst = append(dst, "{}"...)
	} else if dst, err = appendValue(dst, in.ResponseSchema); err != nil {
		return dst, err
	}
	if len(in.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendValue(dst, in.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendUsage(dst []byte, usage []TokenUsage) []byte {
	if len(usage) == 0 {
		return dst
	}
	dst = append(dst, `,"usage":[`...)
	for i := range usage {
		u := &usage[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if u.Provider != "" {
			dst = jsonstr.Append(append(dst, `"provider":`...), u.Provider)
			dst = append(dst, ',')
		}
		if u.Model != "" {
			dst = jsonstr.Append(append(dst, `"model":`...), u.Model)
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(append(dst, `"inputTokens":`...), u.InputTokens, 10)
		dst = strconv.AppendInt(append(dst, `,"outputTokens":`...), u.OutputTokens, 10)
		dst = strconv.AppendInt(append(dst, `,"totalTokens":`...), u.TotalTokens, 10)
		dst = strconv.AppendInt(append(dst, `,"cachedInputTokens":`...), u.CachedInputTokens, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendActivity(dst []byte, ts int64, e *ActivitySnapshot) ([]byte, error) {
	dst = open(dst, TypeActivitySnapshot, ts)
	dst = field(dst, "messageId", e.MessageID)
	dst = field(dst, "activityType", e.ActivityType)
	dst = append(dst, `,"content":`...)
	if len(e.Content) == 0 {
		// content must be an object, never null.
		dst = append(dst, "{}"...)
	} else {
		var err error
		if dst, err = appendValue(dst, e.Content); err != nil {
			return dst, fmt.Errorf("%w: ACTIVITY_SNAPSHOT content: %w", ErrInvalidEvent, err)
		}
	}
	dst = strconv.AppendBool(append(dst, `,"replace":`...), e.Replace)
	return append(dst, '}'), nil
}

// encoders pools json.Encoders writing into reusable buffers, so the cold
// events do not allocate a fresh encoder and buffer every time.
var encoders = sync.Pool{New: func() any {
	st := &encState{}
	st.enc = json.NewEncoder(&st.buf)
	st.enc.SetEscapeHTML(false)
	return st
}}

type encState struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// appendValue appends the compact JSON of a free-form value (nil gives
// null) through encoding/json with HTML escaping off.
func appendValue(dst []byte, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	st := encoders.Get().(*encState)
	defer func() {
		// Do not keep a huge buffer alive in the pool.
		if st.buf.Cap() <= 64<<10 {
			encoders.Put(st)
		}
	}()
	st.buf.Reset()
	if err := st.enc.Encode(v); err != nil {
		return dst, err
	}
	out := bytes.TrimSuffix(st.buf.Bytes(), []byte{'\n'})
	return jsonstr.AppendSanitized(dst, out), nil
}
