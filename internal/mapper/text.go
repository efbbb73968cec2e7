package mapper

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// message is the bookkeeping of one text message id. The text itself is
// never kept: a running SHA-256 of the message's text so far is all the
// resume de-duplication needs (protocol.md §4.7).
type message struct {
	open     bool
	pipeline bool
	h        hash.Hash
	pending  bool // h holds text not yet recorded as a digest
	// said: text of the message was shown (in this run, or before the
	// interrupt when a replayed prefix proved it); last is its last
	// character; gap: a tool call started or the message ended since
	// (segmentSeparator).
	said bool
	last rune
	gap  bool
}

// segmentSeparator is put between two segments of one message that A2A
// sends glued together ("…first.The workspace is…"): text resumed after a
// tool call or an interrupt. Ours (protocol.md §4.7): a blank line, which
// every markdown renderer and the console show as a paragraph break.
const segmentSeparator = "\n\n"

// separated reports whether text continues ms after a gap with no white
// space on either side (text that starts with punctuation continues the
// sentence). The first text of a run that continues an
// execution which showed text before its interrupt counts as such a
// continuation: what that text ended with is not kept.
func (m *Mapper) separated(ms *message, text string) bool {
	if first, _ := utf8.DecodeRuneInString(text); unicode.IsSpace(first) || unicode.IsPunct(first) {
		return false // already apart, or punctuation that continues the sentence
	}
	if ms.said {
		return ms.gap && !unicode.IsSpace(ms.last)
	}
	return m.persistedDigests != nil && !m.emitted
}

func (m *Mapper) msg(id string) *message {
	ms := m.msgs[id]
	if ms == nil {
		ms = &message{}
		m.msgs[id] = ms
	}
	return ms
}

// statusTextEvents maps status text, stripping a prefix that was already
// emitted before an interrupt. Only the persisted digests count: a digest
// recorded in this run describes text this run already streamed.
func (m *Mapper) statusTextEvents(dst []agui.Event, text, id string) []agui.Event {
	key := id
	if key == "" {
		key = m.current
	}
	if len(m.persistedDigests) == 0 || key == "" {
		return m.text(dst, text, id, false, true)
	}
	if _, done := m.replayChecked[key]; done {
		return m.text(dst, text, id, false, true)
	}
	if m.replayChecked == nil {
		m.replayChecked = make(map[string]struct{})
	}
	m.replayChecked[key] = struct{}{}
	n := replayedPrefix(text, m.persistedDigests)
	if n == 0 {
		return m.text(dst, text, id, false, true)
	}
	// Keep the full text as the next snapshot, but expose only the suffix.
	ms := m.msg(key)
	ms.h = sha256.New()
	m.writeHash(ms.h, text)
	ms.pending = true
	// The client shows the prefix already: what follows continues it.
	ms.said, ms.gap = true, true
	ms.last, _ = utf8.DecodeLastRuneInString(text[:n])
	if n == len(text) {
		return dst
	}
	return m.text(dst, text[n:], id, false, false)
}

// replayedPrefix returns the byte length of the longest prefix, taken at
// character boundaries, whose SHA-256 is one of digests.
func replayedPrefix(text string, digests map[string]struct{}) int {
	h := sha256.New()
	var sum [sha256.Size]byte
	var hx [2 * sha256.Size]byte
	longest := 0
	for i := 0; i < len(text); {
		_, size := utf8.DecodeRuneInString(text[i:])
		h.Write([]byte(text[i : i+size]))
		i += size
		hex.Encode(hx[:], h.Sum(sum[:0]))
		if _, ok := digests[string(hx[:])]; ok {
			longest = i
		}
	}
	return longest
}

func (m *Mapper) writeHash(h hash.Hash, s string) {
	m.scratch = append(m.scratch[:0], s...)
	h.Write(m.scratch)
}

// text appends one text delta for id (or the current message, or a new
// assistant-<hex> id). A new message closes the previous one unless either
// is parallel pipeline text, so candidate streams stay separate.
func (m *Mapper) text(dst []agui.Event, text, id string, pipeline, record bool) []agui.Event {
	if len(m.reasoning) > 0 {
		dst = m.closeReasoning(dst)
	}
	if id == "" {
		id = m.current
		if id == "" {
			id = "assistant-" + m.newID()
		}
	}
	ms := m.curMsg
	if id != m.current || ms == nil {
		ms = m.msgs[id]
	}
	if ms == nil || !ms.open {
		if !pipeline {
			dst = m.closeNormalText(dst)
		}
		if ms == nil {
			ms = m.msg(id)
		}
		ms.open = true
		ms.pipeline = pipeline
		dst = append(dst, &agui.TextMessageStart{MessageID: id, Role: "assistant"})
	}
	m.current, m.curMsg = id, ms
	delta := text
	if !pipeline && m.separated(ms, text) {
		delta = segmentSeparator + text
	}
	dst = append(dst, m.newContent(id, delta))
	ms.said, ms.gap = true, false
	ms.last, _ = utf8.DecodeLastRuneInString(text)
	if record {
		if ms.h == nil {
			ms.h = sha256.New()
		}
		m.writeHash(ms.h, text)
		ms.pending = true
	}
	m.emitted = true
	return dst
}

// newContent returns a TEXT_MESSAGE_CONTENT event, carved from a block of
// contentBlock events: one allocation per block instead of per delta.
func (m *Mapper) newContent(id, text string) *agui.TextMessageContent {
	if len(m.contents) == 0 {
		m.contents = make([]agui.TextMessageContent, contentBlock)
	}
	c := &m.contents[0]
	m.contents = m.contents[1:]
	c.MessageID, c.Delta = id, text
	return c
}

// closeNormalText ends the open non-pipeline message, if any. At most one
// is open, but pipeline text may have become current in between.
func (m *Mapper) closeNormalText(dst []agui.Event) []agui.Event {
	if cur := m.msgs[m.current]; cur != nil && cur.open && !cur.pipeline {
		return m.closeText(dst, m.current)
	}
	for id, ms := range m.msgs {
		if ms.open && !ms.pipeline {
			return m.closeText(dst, id)
		}
	}
	return dst
}

// closeText ends an open message and records its snapshot digest.
func (m *Mapper) closeText(dst []agui.Event, id string) []agui.Event {
	ms := m.msgs[id]
	if ms == nil || !ms.open {
		return dst
	}
	m.recordMsg(ms)
	ms.open, ms.gap = false, true
	if m.current == id {
		m.current, m.curMsg = "", nil
	}
	return append(dst, &agui.TextMessageEnd{MessageID: id})
}

// recordMsg records the digest of the message's whole text so far. The
// running hash is not reset: a replay repeats the message from its start,
// so a later snapshot must cover the earlier text too (protocol.md §4.7).
func (m *Mapper) recordMsg(ms *message) {
	if ms == nil || !ms.pending {
		return
	}
	m.digests[hex.EncodeToString(ms.h.Sum(nil))] = struct{}{}
	ms.pending = false
}

// RecordTextSnapshot records the digest of every message's unrecorded text
// (protocol.md §5.4 step 1, interrupt commit).
func (m *Mapper) RecordTextSnapshot() {
	for _, ms := range m.msgs {
		m.recordMsg(ms)
	}
}

// thinking maps a raw_thinking object to REASONING_* events.
func (m *Mapper) thinking(dst []agui.Event, th map[string]any, msgID string) []agui.Event {
	if str(th["type"]) != "raw_thinking" {
		return dst
	}
	text := str(th["text"])
	if text == "" {
		return dst
	}
	base := msgID
	if base == "" {
		base = m.current
		if base == "" {
			base = m.runID
		}
	}
	if base != m.lastReasonBase || m.lastReasonID == "" {
		m.lastReasonBase, m.lastReasonID = base, "reasoning-"+base
	}
	rid := m.lastReasonID
	open := false
	for _, r := range m.reasoning {
		if r == rid {
			open = true
			break
		}
	}
	if !open {
		m.reasoning = append(m.reasoning, rid)
		dst = append(dst,
			&agui.ReasoningStart{MessageID: rid},
			&agui.ReasoningMessageStart{MessageID: rid, Role: "reasoning"})
	}
	return append(dst, &agui.ReasoningMessageContent{MessageID: rid, Delta: text})
}

// closeReasoning ends every open reasoning span, ids sorted.
func (m *Mapper) closeReasoning(dst []agui.Event) []agui.Event {
	if len(m.reasoning) == 0 {
		return dst
	}
	sort.Strings(m.reasoning)
	for _, rid := range m.reasoning {
		dst = append(dst, &agui.ReasoningMessageEnd{MessageID: rid}, &agui.ReasoningEnd{MessageID: rid})
	}
	m.reasoning = m.reasoning[:0]
	return dst
}
