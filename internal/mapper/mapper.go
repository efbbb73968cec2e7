package mapper

import (
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"sort"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// Config is the per-run input of a Mapper.
type Config struct {
	ThreadID, RunID string
	// PipelineRunID names pipeline messages and the activity snapshot;
	// default "pipeline-<threadId>".
	PipelineRunID string
	// PipelineSequence is the persisted pipeline cursor; live envelopes at
	// or below it are duplicates.
	PipelineSequence int64
	// DurableOpenSteps are the persisted open step keys.
	DurableOpenSteps []string
	// TextDigests are the persisted textSnapshotDigests (hex SHA-256).
	TextDigests []string
	// Answered reports inputs already answered in this execution; may be nil.
	Answered func(inputID string) bool
	// NewID returns 32 lowercase hex characters; default crypto/rand.
	NewID func() string
	// Generic maps with the generic A2A profile (generic.go): no iac-code
	// metadata is read.
	Generic bool
}

// Mapper holds the span bookkeeping of one AG-UI run.
type Mapper struct {
	threadID, runID, pipelineRunID string
	newID                          func() string
	answered                       func(string) bool

	current string   // message that last received text; "" when none is open
	curMsg  *message // msgs[current] when set by text
	// contents are unused TEXT_MESSAGE_CONTENT events (newContent).
	contents []agui.TextMessageContent
	msgs     map[string]*message // every message seen in this run
	emitted  bool

	reasoning        []string // open reasoning ids
	lastReasonBase   string   // cache so a thinking delta does not rebuild its id
	lastReasonID     string
	tools            []string // open tool call ids
	toolResults      map[string]struct{}
	usage            []agui.TokenUsage
	seq              int64
	seenEvents       map[string]struct{}
	durable          map[string]struct{}
	runSteps         map[string]string // step key → stepName, opened in this run
	persistedDigests map[string]struct{}
	digests          map[string]struct{}
	replayChecked    map[string]struct{}
	returned         map[string]struct{}
	scratch          []byte
	// meta memoises what the last event's metadata map says (see
	// plain and Identity): a text delta shares its metadata map with the
	// previous one (Event.Metadata is read-only), so most events need no
	// map lookups at all.
	meta metaMemo

	generic      bool              // Config.Generic
	artifactMsgs map[string]string // generic: artifact id → message id
}

// metaMemo is what one metadata map (md, of size n) says.
type metaMemo struct {
	md       map[string]any
	n        int
	plain    bool   // its iac_code holds none of actionKeys
	session  string // its iacCodeSessionId (Identity)
	identity bool   // session is known
}

// contentBlock is how many text delta events newContent allocates at once.
const contentBlock = 64

// actionKeys are the iac_code keys mapEvent and RequiredInputs act on.
var actionKeys = [...]string{"pipelineBatch", "pipeline", "thinking", "tool", "usage", "assistantFinal", "input", "pendingPermissions"}

// memo returns the memo of ev's metadata, reset when the map is another.
func (m *Mapper) memo(ev *a2a.Event) *metaMemo {
	md := ev.Metadata
	mm := &m.meta
	if len(md) != mm.n || reflect.ValueOf(md).UnsafePointer() != reflect.ValueOf(mm.md).UnsafePointer() {
		*mm = metaMemo{md: md, n: len(md)}
		ic := ev.IacCode()
		mm.plain = true
		for _, k := range actionKeys {
			if _, ok := ic[k]; ok {
				mm.plain = false
				break
			}
		}
	}
	return mm
}

// plain reports whether ev's iac_code metadata holds none of actionKeys.
func (m *Mapper) plain(ev *a2a.Event) bool { return ev == nil || m.memo(ev).plain }

// Identity is the package's Identity, memoised for the session id.
func (m *Mapper) Identity(ev *a2a.Event) (taskID, contextID, sessionID string) {
	if ev == nil {
		return "", "", ""
	}
	mm := m.memo(ev)
	if !mm.identity {
		_, _, mm.session = Identity(ev)
		mm.identity = true
	}
	return ev.TaskID, ev.ContextID, mm.session
}

// New returns a Mapper for one run.
func New(c Config) *Mapper {
	m := &Mapper{
		threadID:      c.ThreadID,
		runID:         c.RunID,
		pipelineRunID: c.PipelineRunID,
		newID:         c.NewID,
		answered:      c.Answered,
		msgs:          make(map[string]*message, 4),
		seq:           c.PipelineSequence,
		durable:       make(map[string]struct{}, len(c.DurableOpenSteps)),
		runSteps:      make(map[string]string),
		digests:       make(map[string]struct{}, len(c.TextDigests)),
		generic:       c.Generic,
	}
	if m.pipelineRunID == "" {
		m.pipelineRunID = "pipeline-" + c.ThreadID
	}
	if m.newID == nil {
		m.newID = randomID
	}
	for _, k := range c.DurableOpenSteps {
		if k != "" {
			m.durable[k] = struct{}{}
		}
	}
	if len(c.TextDigests) > 0 {
		m.persistedDigests = make(map[string]struct{}, len(c.TextDigests))
		for _, d := range c.TextDigests {
			m.persistedDigests[d] = struct{}{}
			m.digests[d] = struct{}{}
		}
	}
	return m
}

// randomID returns 16 random bytes as 32 lowercase hex characters.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// Map appends the AG-UI events for one live A2A stream item.
func (m *Mapper) Map(dst []agui.Event, ev *a2a.Event) []agui.Event {
	return m.mapEvent(dst, ev, true, true)
}

// MapTaskSnapshot appends the events of a GetTask result during resume
// preparation: like Map, but without its pipeline events and without its
// status text, so the last message is not emitted again (protocol.md §5.6).
func (m *Mapper) MapTaskSnapshot(dst []agui.Event, ev *a2a.Event) []agui.Event {
	return m.mapEvent(dst, ev, false, false)
}

// MapWithoutText appends the events of ev like Map, without its status
// or history text: for a task snapshot whose text a later snapshot of the
// same task carries again (an observer's GetTask before SubscribeToTask,
// whose first frame is the task), so that the text is mapped once.
func (m *Mapper) MapWithoutText(dst []agui.Event, ev *a2a.Event) []agui.Event {
	return m.mapEvent(dst, ev, true, false)
}

func (m *Mapper) mapEvent(dst []agui.Event, ev *a2a.Event, withPipeline, withText bool) []agui.Event {
	if ev == nil {
		return dst
	}
	if m.generic {
		return m.genericEvent(dst, ev, withText)
	}
	var ic map[string]any
	if !m.plain(ev) {
		ic = ev.IacCode() // else nothing below would find a key
	}
	if withPipeline && ic != nil {
		if batch, ok := ic["pipelineBatch"].(map[string]any); ok {
			if list, ok := batch["events"].([]any); ok {
				for _, e := range list {
					if env, ok := e.(map[string]any); ok {
						dst = m.liveEnvelope(dst, env)
					}
				}
			}
		}
		if env, ok := ic["pipeline"].(map[string]any); ok {
			dst = m.liveEnvelope(dst, env)
		}
	}
	if ic != nil {
		if th, ok := ic["thinking"].(map[string]any); ok {
			dst = m.thinking(dst, th, "")
		}
		if t, ok := ic["tool"].(map[string]any); ok {
			dst = m.tool(dst, t)
		}
		if u, ok := ic["usage"].(map[string]any); ok {
			m.recordUsage(u)
		}
	}
	if ev.Artifact != nil {
		dst = append(dst, &agui.Custom{Name: "iac-code.artifact.v1", Value: withSchemaVersion(ev.Artifact)})
	}
	if !withText || ev.State() == a2a.StateCanceled {
		// Ours (protocol.md §4.7): a cancelled task's status text is the
		// executor's English "Task canceled.", which the run's RUN_ERROR
		// CANCELLED says in the request's language.
		return dst
	}
	text, id := statusText(ev)
	if text == "" && !m.emitted {
		text, id = historyText(ev.History)
	}
	if text == "" {
		return dst
	}
	if final, ok := ic["assistantFinal"].(map[string]any); ok && final["complete"] == true && m.emitted {
		return dst // A2A repeats the streamed text as the final message
	}
	return m.statusTextEvents(dst, text, id)
}

// statusText returns the agent text of status.message and its id.
func statusText(ev *a2a.Event) (string, string) {
	if ev.Status == nil || ev.Status.Message == nil {
		return "", ""
	}
	msg := ev.Status.Message
	switch msg.Role {
	case a2a.RoleAgent, "agent", "":
	default:
		return "", ""
	}
	return msg.Text(), msg.MessageID
}

// historyText returns the text of the trailing run of agent messages and
// the last one's id. A trailing user message ends the run with nothing, so
// a previous turn's answer is never replayed as new text.
func historyText(h []a2a.Message) (string, string) {
	i := len(h)
	for i > 0 && isAgentRole(h[i-1].Role) {
		i--
	}
	if i == len(h) {
		return "", ""
	}
	var text, id string
	for j := i; j < len(h); j++ {
		text += h[j].Text()
		if h[j].MessageID != "" {
			id = h[j].MessageID
		}
	}
	return text, id
}

func isAgentRole(r string) bool { return r == a2a.RoleAgent || r == "agent" }

// CloseAll appends the events that close every open span, in the order of
// protocol.md §4.13. Steps opened in this run are finished but stay in the
// durable set, so they reopen in the next run.
func (m *Mapper) CloseAll(dst []agui.Event) []agui.Event {
	dst = m.closeReasoning(dst)
	if len(m.tools) > 0 {
		sort.Strings(m.tools)
		for _, id := range m.tools {
			dst = append(dst, &agui.ToolCallEnd{ToolCallID: id})
		}
		m.tools = m.tools[:0]
	}
	var open []string
	for id, ms := range m.msgs {
		if ms.open {
			open = append(open, id)
		}
	}
	sort.Strings(open)
	for _, id := range open {
		dst = m.closeText(dst, id)
	}
	if len(m.runSteps) > 0 {
		keys := make([]string, 0, len(m.runSteps))
		for k := range m.runSteps {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst = append(dst, &agui.StepFinished{StepName: m.runSteps[k]})
			delete(m.runSteps, k)
		}
	}
	return dst
}

// EmittedText reports whether this run emitted any text.
func (m *Mapper) EmittedText() bool { return m.emitted }

// PipelineSequence is the pipeline cursor to persist.
func (m *Mapper) PipelineSequence() int64 { return m.seq }

// DurableOpenSteps returns the durable open step keys, sorted.
func (m *Mapper) DurableOpenSteps() []string { return sortedKeys(m.durable) }

// TextDigests returns the persisted and recorded text snapshot digests,
// sorted and unique.
func (m *Mapper) TextDigests() []string { return sortedKeys(m.digests) }

func sortedKeys(s map[string]struct{}) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Identity returns the task, context and iac-code session ids of an A2A
// event (protocol.md §4.6).
func Identity(ev *a2a.Event) (taskID, contextID, sessionID string) {
	if ev == nil {
		return "", "", ""
	}
	ic := ev.IacCode()
	sessionID = str(ic["iacCodeSessionId"])
	if sessionID == "" {
		if p, ok := ic["pipeline"].(map[string]any); ok {
			sessionID = str(p["iacCodeSessionId"])
		}
	}
	if sessionID == "" {
		if b, ok := ic["pipelineBatch"].(map[string]any); ok {
			list, _ := b["events"].([]any)
			for _, e := range list {
				if env, ok := e.(map[string]any); ok {
					if sessionID = str(env["iacCodeSessionId"]); sessionID != "" {
						break
					}
				}
			}
		}
	}
	return ev.TaskID, ev.ContextID, sessionID
}

// str returns v when it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

// withSchemaVersion returns {"schemaVersion":1, …v…}; v's keys win, as in
// the original's dict merge.
func withSchemaVersion(v map[string]any) map[string]any {
	out := make(map[string]any, len(v)+1)
	out["schemaVersion"] = 1
	for k, x := range v {
		out[k] = x
	}
	return out
}
