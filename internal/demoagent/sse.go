package demoagent

import (
	"net/http"
	"time"
)

// sseWriter frames Server-Sent Events the way sse-starlette does: CRLF line
// endings, one data line per JSON-RPC response, "event: error" for error
// frames, comment pings, and a flush after every frame.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

func (s *sseWriter) data(payload []byte) error {
	if err := s.write(payload); err != nil {
		return err
	}
	return s.rc.Flush()
}

// write frames payload without flushing; the caller flushes once no
// further frame is ready, so no frame waits in the buffer while idle.
func (s *sseWriter) write(payload []byte) error {
	buf := make([]byte, 0, len(payload)+10)
	buf = append(buf, "data: "...)
	buf = append(buf, payload...)
	buf = append(buf, "\r\n\r\n"...)
	_, err := s.w.Write(buf)
	return err
}

func (s *sseWriter) flush() error { return s.rc.Flush() }

func (s *sseWriter) errorFrame(payload []byte) error {
	if _, err := s.w.Write([]byte("event: error\r\n")); err != nil {
		return err
	}
	return s.data(payload)
}

func (s *sseWriter) ping() error {
	if _, err := s.w.Write([]byte(": ping - " + time.Now().UTC().Format(time.RFC3339) + "\r\n\r\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}
