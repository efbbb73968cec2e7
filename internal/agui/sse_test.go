package agui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

var fixedNow = func() time.Time { return time.UnixMilli(1767225600000) }

// serve runs handle inside a real loopback HTTP server and returns the
// response of one POST to it.
func serve(t *testing.T, opts WriterOptions, handle func(w *Writer)) *http.Response {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := NewWriter(rw, opts)
		defer w.Close()
		handle(w)
	}))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readFrame reads one SSE frame, up to and including the blank line.
func readFrame(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var sb strings.Builder
	for {
		line, err := r.ReadString('\n')
		sb.WriteString(line)
		if err != nil {
			t.Fatalf("read frame: %v (got %q)", err, sb.String())
		}
		if line == "\n" {
			return sb.String()
		}
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

func TestWriterFramesAndHeaders(t *testing.T) {
	resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
		mustNil(t, w.Start())
		mustNil(t, w.Write(&RunStarted{ThreadID: "t1", RunID: "r1"}))
		mustNil(t, w.WriteBatch([]Event{
			&TextMessageStart{MessageID: "m1", Role: "assistant"},
			&TextMessageContent{MessageID: "m1", Delta: "a\r\nb\u2028"},
			&TextMessageEnd{MessageID: "m1"},
		}))
		mustNil(t, w.Write(&RunFinished{ThreadID: "t1", RunID: "r1", Outcome: Outcome{Type: OutcomeSuccess}}))
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for k, v := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
		"Connection":        "keep-alive",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	want := `data: {"type":"RUN_STARTED","timestamp":1767225600000,"threadId":"t1","runId":"r1"}` + "\n\n" +
		`data: {"type":"TEXT_MESSAGE_START","timestamp":1767225600000,"messageId":"m1","role":"assistant"}` + "\n\n" +
		`data: {"type":"TEXT_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"m1","delta":"a\r\nb\u2028"}` + "\n\n" +
		`data: {"type":"TEXT_MESSAGE_END","timestamp":1767225600000,"messageId":"m1"}` + "\n\n" +
		`data: {"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"t1","runId":"r1","outcome":{"type":"success"}}` + "\n\n"
	if got := readAll(t, resp); got != want {
		t.Fatalf("body\n got: %q\nwant: %q", got, want)
	}
}

func TestWriterDefaultTimestampIsEpochMillis(t *testing.T) {
	before := time.Now().UnixMilli()
	resp := serve(t, WriterOptions{}, func(w *Writer) {
		mustNil(t, w.Write(&StepStarted{StepName: "s"}))
	})
	after := time.Now().UnixMilli()
	body := readAll(t, resp)
	var ev struct{ Timestamp int64 }
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(body, "data: "), "\n\n")), &ev); err != nil {
		t.Fatalf("%v in %q", err, body)
	}
	if ev.Timestamp < before || ev.Timestamp > after {
		t.Fatalf("timestamp %d not in [%d, %d]", ev.Timestamp, before, after)
	}
}

func TestWriterHeartbeatAndClose(t *testing.T) {
	const hb = 40 * time.Millisecond
	wrote := make(chan struct{})
	closed := make(chan struct{})
	resp := serve(t, WriterOptions{Heartbeat: hb, Now: fixedNow}, func(w *Writer) {
		mustNil(t, w.Start())
		<-wrote // the client saw a heartbeat
		mustNil(t, w.Write(&StepStarted{StepName: "s"}))
		<-closed
		w.Close()
		w.Close() // idempotent
		if err := w.Write(&StepFinished{StepName: "s"}); !errors.Is(err, ErrWriterClosed) {
			t.Errorf("write after Close = %v, want ErrWriterClosed", err)
		}
		// Close stopped the heartbeat's timer; a beat that fired just
		// before it and runs now writes nothing.
		if w.timer.Stop() {
			t.Error("heartbeat timer still armed after Close")
		}
		w.mu.Lock()
		w.lastWritten = time.Now().Add(-time.Hour)
		w.mu.Unlock()
		w.beat()
	})
	r := bufio.NewReader(resp.Body)
	if got := readFrame(t, r); got != ": heartbeat\n\n" {
		t.Fatalf("first frame %q, want heartbeat", got)
	}
	close(wrote)
	want := `data: {"type":"STEP_STARTED","timestamp":1767225600000,"stepName":"s"}` + "\n\n"
	for {
		got := readFrame(t, r)
		if got == ": heartbeat\n\n" {
			continue // a second heartbeat may race with the event
		}
		if got != want {
			t.Fatalf("frame %q, want %q", got, want)
		}
		break
	}
	close(closed)
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Fatalf("bytes after Close: %q", rest)
	}
}

// A beat finds how long the stream has really been idle: none is written
// while writes keep it busy, one once a whole interval passed without a
// write. The beats are called here as the timer would; its interval is too
// long to fire during the test, so a loaded machine cannot add one.
func TestWriterNoHeartbeatWhileEventsFlow(t *testing.T) {
	const hb = time.Hour
	resp := serve(t, WriterOptions{Heartbeat: hb, Now: fixedNow}, func(w *Writer) {
		for range 3 {
			mustNil(t, w.Write(&TextMessageContent{MessageID: "m", Delta: "x"}))
			w.beat() // less than hb since the write: nothing
		}
		w.mu.Lock()
		w.lastWritten = time.Now().Add(-hb) // a whole interval without a write
		w.mu.Unlock()
		w.beat()
		w.beat() // the heartbeat was a write: nothing
		mustNil(t, w.Write(&TextMessageContent{MessageID: "m", Delta: "y"}))
	})
	frame := func(d string) string {
		return `data: {"type":"TEXT_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"m","delta":"` + d + `"}` + "\n\n"
	}
	want := frame("x") + frame("x") + frame("x") + ": heartbeat\n\n" + frame("y")
	if got := readAll(t, resp); got != want {
		t.Fatalf("body\n got: %q\nwant: %q", got, want)
	}
}

func TestWriterConcurrentWritesDoNotInterleave(t *testing.T) {
	const writers, perWriter = 8, 100
	delta := strings.Repeat("0123456789", 400)
	resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				for i := range perWriter {
					id := fmt.Sprintf("m%d-%d", g, i)
					if i%2 == 0 {
						mustNil(t, w.Write(&TextMessageContent{MessageID: id, Delta: delta}))
					} else {
						mustNil(t, w.WriteBatch([]Event{&TextMessageContent{MessageID: id, Delta: delta}}))
					}
				}
			})
		}
		wg.Wait()
	})
	body := readAll(t, resp)
	frames := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	if len(frames) != writers*perWriter {
		t.Fatalf("%d frames, want %d", len(frames), writers*perWriter)
	}
	seen := map[string]bool{}
	for _, f := range frames {
		var ev TextMessageContent
		if !strings.HasPrefix(f, "data: ") || strings.Contains(f, "\n") {
			t.Fatalf("bad frame %.80q", f)
		}
		if err := json.Unmarshal([]byte(f[len("data: "):]), &ev); err != nil || ev.Delta != delta {
			t.Fatalf("frame not intact: %v %.80q", err, f)
		}
		seen[ev.MessageID] = true
	}
	if len(seen) != writers*perWriter {
		t.Fatalf("%d distinct events, want %d", len(seen), writers*perWriter)
	}
}

// WriteTimeout bounds each write, not the stream: gaps between writes
// longer than the bound (and than the server's own WriteTimeout, which the
// writer replaces) cut nothing, and the end of the response, written after
// such a gap, arrives whole.
func TestWriterWriteTimeoutIsPerWrite(t *testing.T) {
	const bound = 100 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := NewWriter(rw, WriterOptions{Now: fixedNow, WriteTimeout: bound, Heartbeat: -1})
		defer w.Close()
		for i := range 4 {
			mustNil(t, w.Write(&StepStarted{StepName: fmt.Sprint(i)}))
			// Elapsed time is what is tested here, not a condition: a
			// loaded machine only makes the gap longer.
			time.Sleep(2 * bound)
		}
	}))
	srv.Config.WriteTimeout = bound
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := readAll(t, resp) // fails on a cut chunked body
	if n := strings.Count(body, "STEP_STARTED"); n != 4 {
		t.Fatalf("%d events, want 4: %q", n, body)
	}
}

// A client that stops reading: its receive buffer is small and it never
// reads, so once the server's socket buffer is full a write waits. That
// write fails after WriteTimeout with a timeout, is remembered, and net/http
// cancels the request's context, the disconnect signal.
func TestWriterWriteTimeoutStalledClient(t *testing.T) {
	const bound = 300 * time.Millisecond
	type result struct {
		err      error
		blocked  time.Duration // how long the failed write took
		canceled bool
	}
	done := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := NewWriter(rw, WriterOptions{WriteTimeout: bound, Heartbeat: -1})
		defer w.Close()
		ev := &TextMessageContent{MessageID: "m", Delta: strings.Repeat("x", 64<<10)}
		var res result
		// Bounded: loopback socket buffers hold a few MiB at most.
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
			began := time.Now()
			if res.err = w.Write(ev); res.err != nil {
				res.blocked = time.Since(began)
				break
			}
		}
		select {
		case <-r.Context().Done():
			res.canceled = true
		case <-time.After(10 * time.Second):
		}
		done <- res
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the stalled stream was never released")
	}
	if !errors.Is(res.err, os.ErrDeadlineExceeded) {
		t.Fatalf("write error %v, want a deadline exceeded", res.err)
	}
	if res.blocked < bound {
		t.Errorf("the failed write returned after %v, before the %v bound", res.blocked, bound)
	}
	if !res.canceled {
		t.Error("the request context was not cancelled after the failed write")
	}
}

func TestWriterRemembersWriteError(t *testing.T) {
	done := make(chan error, 1)
	first := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := NewWriter(rw, WriterOptions{})
		defer w.Close()
		mustNil(t, w.Write(&StepStarted{StepName: "s"}))
		<-first
		// The client is gone; keep writing until the kernel reports it
		// (bounded: a write that never fails fails the test).
		var err error
		for end := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(end); {
			err = w.Write(&TextMessageContent{MessageID: "m", Delta: strings.Repeat("x", 1024)})
		}
		if err == nil {
			done <- errors.New("no error after the client disconnected")
			return
		}
		if again := w.Write(&StepFinished{StepName: "s"}); again != err {
			done <- fmt.Errorf("second write returned %v, want the remembered %v", again, err)
			return
		}
		if w.Err() != err {
			done <- fmt.Errorf("Err() = %v", w.Err())
			return
		}
		done <- nil
	}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readFrame(t, bufio.NewReader(resp.Body))
	cancel()
	resp.Body.Close()
	close(first)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWriterInvalidEventKeepsStreamUsable(t *testing.T) {
	resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
		if err := w.Write(&RunFinished{Outcome: Outcome{Type: OutcomeInterrupt}}); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("Write = %v, want ErrInvalidEvent", err)
		}
		if err := w.WriteBatch([]Event{&StepStarted{StepName: "a"}, nil}); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("WriteBatch = %v, want ErrInvalidEvent", err)
		}
		mustNil(t, w.WriteBatch(nil))
		mustNil(t, w.Write(&StepStarted{StepName: "b"}))
		mustNil(t, w.Err())
	})
	// Write before Start started the stream implicitly.
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	want := `data: {"type":"STEP_STARTED","timestamp":1767225600000,"stepName":"b"}` + "\n\n"
	if got := readAll(t, resp); got != want {
		t.Fatalf("body %q, want %q", got, want)
	}
}

// noFlushWriter is a scripted fake: a real net/http server always supports
// Flush, so a ResponseWriter without it can only be produced this way.
type noFlushWriter struct{ h http.Header }

func (n *noFlushWriter) Header() http.Header         { return n.h }
func (n *noFlushWriter) Write(b []byte) (int, error) { return len(b), nil }
func (n *noFlushWriter) WriteHeader(int)             {}

func TestWriterStartWithoutFlusher(t *testing.T) {
	w := NewWriter(&noFlushWriter{h: http.Header{}}, WriterOptions{})
	defer w.Close()
	err := w.Start()
	if !errors.Is(err, http.ErrNotSupported) {
		t.Fatalf("Start = %v, want ErrNotSupported", err)
	}
	if again := w.Start(); again != err {
		t.Fatalf("second Start = %v", again)
	}
}

// discardWriter is a flushable ResponseWriter that drops the bytes, so the
// benchmark measures the writer, not a network.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

func BenchmarkWriterText(b *testing.B) {
	w := NewWriter(&discardWriter{h: http.Header{}}, WriterOptions{})
	defer w.Close()
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	ev := &TextMessageContent{MessageID: "msg-0123456789abcdef", Delta: "Hello, world! 12345\n"}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// batchBytes is what WriteBatch puts on the wire for evs.
func batchBytes(t *testing.T, evs []Event) string {
	t.Helper()
	rec := httptest.NewRecorder()
	w := NewWriter(rec, WriterOptions{Now: fixedNow, Heartbeat: -1})
	mustNil(t, w.WriteBatch(evs))
	w.Close()
	return rec.Body.String()
}

// frameBytes is the same batch encoded one event at a time.
func frameBytes(t *testing.T, evs []Event) string {
	t.Helper()
	var b []byte
	for _, ev := range evs {
		var err error
		if b, err = appendFrame(b, fixedNow().UnixMilli(), ev); err != nil {
			t.Fatal(err)
		}
	}
	return string(b)
}

// WriteBatch builds the bytes before a text delta once per message id;
// they must be those of the event encoded on its own.
func TestWriterBatchTextDeltas(t *testing.T) {
	evs := []Event{
		&RunStarted{ThreadID: "t", RunID: "r"},
		&TextMessageStart{MessageID: "m1", Role: "assistant"},
		&TextMessageContent{MessageID: "m1", Delta: "a"},
		&TextMessageContent{MessageID: "m1", Delta: "b\"\\\n\u2028\xff中"},
		&TextMessageContent{MessageID: "m\"2", Delta: ""},
		&ToolCallArgs{ToolCallID: "m1", Delta: "x"},
		&TextMessageContent{MessageID: "m\"2", Delta: "c"},
		&TextMessageContent{MessageID: "m1", Delta: "d"},
		&TextMessageEnd{MessageID: "m1"},
	}
	if got, want := batchBytes(t, evs), frameBytes(t, evs); got != want {
		t.Fatalf("batch\n%q\nwant\n%q", got, want)
	}
}

func FuzzWriterBatchTextDeltas(f *testing.F) {
	f.Add("m1", "tok ", "m1", "\u2028\"")
	f.Add("", "", "m\xff", "\x00")
	f.Fuzz(func(t *testing.T, id1, d1, id2, d2 string) {
		evs := []Event{
			&TextMessageContent{MessageID: id1, Delta: d1},
			&TextMessageContent{MessageID: id2, Delta: d2},
			&TextMessageContent{MessageID: id2, Delta: d1},
			&TextMessageEnd{MessageID: id1},
			&TextMessageContent{MessageID: id1, Delta: d2},
		}
		if got, want := batchBytes(t, evs), frameBytes(t, evs); got != want {
			t.Fatalf("batch\n%q\nwant\n%q", got, want)
		}
	})
}

// WriteBatchSoon holds its frames until the next write, Close or its
// bound, whichever comes first, and never reorders them.
func TestWriterBatchSoon(t *testing.T) {
	delta := func(s string) Event { return &TextMessageContent{MessageID: "m", Delta: s} }
	frame := func(s string) string {
		return `data: {"type":"TEXT_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"m","delta":"` + s + `"}` + "\n\n"
	}
	t.Run("next write", func(t *testing.T) {
		resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
			mustNil(t, w.WriteBatchSoon([]Event{delta("a")}, time.Hour))
			mustNil(t, w.WriteBatchSoon([]Event{delta("b")}, time.Hour))
			// An invalid batch is dropped whole; what was held stays.
			if err := w.WriteBatch([]Event{delta("x"), &Custom{Name: "c", Value: func() {}}}); !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("invalid batch: %v", err)
			}
			mustNil(t, w.WriteBatch([]Event{delta("c")}))
		})
		if got, want := readAll(t, resp), frame("a")+frame("b")+frame("c"); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("close", func(t *testing.T) {
		resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
			mustNil(t, w.WriteBatchSoon([]Event{delta("a")}, time.Hour))
		})
		if got := readAll(t, resp); got != frame("a") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("bound", func(t *testing.T) {
		release := make(chan struct{})
		resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
			mustNil(t, w.WriteBatchSoon([]Event{delta("a")}, 10*time.Millisecond))
			<-release // nothing else is written until the client saw "a"
			mustNil(t, w.WriteBatch([]Event{delta("b")}))
		})
		r := bufio.NewReader(resp.Body)
		if got := readFrame(t, r); got != frame("a") {
			t.Fatalf("got %q", got)
		}
		close(release)
		if got := readFrame(t, r); got != frame("b") {
			t.Fatalf("got %q", got)
		}
	})
}

// WriteBatchSoon writes at once what reaches maxHeldBytes.
func TestWriterBatchSoonBounded(t *testing.T) {
	big := strings.Repeat("x", maxHeldBytes)
	read := make(chan struct{})
	resp := serve(t, WriterOptions{Now: fixedNow}, func(w *Writer) {
		mustNil(t, w.WriteBatchSoon([]Event{&TextMessageContent{MessageID: "m", Delta: big}}, time.Hour))
		<-read // nothing else writes it
	})
	r := bufio.NewReaderSize(resp.Body, 2*maxHeldBytes)
	got := readFrame(t, r)
	close(read)
	if !strings.Contains(got, big) {
		t.Fatalf("got %.80q", got)
	}
}

// callLog is a flushable ResponseWriter that records the calls it gets.
type callLog struct {
	h     http.Header
	calls []string
}

func (c *callLog) Header() http.Header { return c.h }
func (c *callLog) Write(b []byte) (int, error) {
	c.calls = append(c.calls, "write "+string(b))
	return len(b), nil
}
func (c *callLog) WriteHeader(code int) { c.calls = append(c.calls, fmt.Sprintf("header %d", code)) }
func (c *callLog) Flush()               { c.calls = append(c.calls, "flush") }

func TestWriterHeadersGoWithTheFirstFrame(t *testing.T) {
	frame := `write data: {"type":"RUN_STARTED","timestamp":1767225600000,"threadId":"t","runId":"r"}` + "\n\n"
	started := &RunStarted{ThreadID: "t", RunID: "r"}

	// No Start: the first batch carries the headers, one flush.
	c := &callLog{h: http.Header{}}
	w := NewWriter(c, WriterOptions{Now: fixedNow, Heartbeat: -1})
	mustNil(t, w.WriteBatch([]Event{started}))
	want := []string{"header 200", frame, "flush"}
	if fmt.Sprint(c.calls) != fmt.Sprint(want) {
		t.Fatalf("calls %q, want %q", c.calls, want)
	}
	if got := c.h.Get("Content-Type"); got != "text/event-stream" {
		t.Fatalf("Content-Type %q", got)
	}

	// Start flushes the headers alone, before any frame.
	c = &callLog{h: http.Header{}}
	w = NewWriter(c, WriterOptions{Now: fixedNow, Heartbeat: -1})
	mustNil(t, w.Start())
	mustNil(t, w.Write(started))
	want = []string{"header 200", "flush", frame, "flush"}
	if fmt.Sprint(c.calls) != fmt.Sprint(want) {
		t.Fatalf("calls %q, want %q", c.calls, want)
	}

	// A first batch that cannot be encoded still sends the headers.
	c = &callLog{h: http.Header{}}
	w = NewWriter(c, WriterOptions{Now: fixedNow, Heartbeat: -1})
	if err := w.WriteBatch([]Event{&StepStarted{StepName: "a"}, nil}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("WriteBatch = %v, want ErrInvalidEvent", err)
	}
	want = []string{"header 200", "flush"}
	if fmt.Sprint(c.calls) != fmt.Sprint(want) {
		t.Fatalf("calls %q, want %q", c.calls, want)
	}
}
