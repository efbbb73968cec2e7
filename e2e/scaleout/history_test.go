package scaleout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// attempt is one HTTP request a client sent to one replica, as the
// client observed it.
type attempt struct {
	thread, kind, runID, reqID string
	replica                    int    // the replica the client contacted
	exec                       string // the execution id of its session event
	start, header, end         time.Time
	status                     int
	code                       string // the error code of a JSON answer
	transport                  string // the transport error, before any answer
	// Of an SSE answer: when RUN_STARTED and the terminal event arrived,
	// the terminal ("success", "interrupt", "error:CODE"; "" when the
	// stream ended without one), the interrupt ids of an interrupt
	// outcome, and the interrupt ids this request answered.
	started, finished time.Time
	lastContent       time.Time // the last event before the terminal one
	terminal          string
	// afterRefusal is set on a served attempt of a request that an
	// earlier attempt was refused for.
	afterRefusal bool
	interrupts   []string
	answers      []string
}

// upcall is one request a replica sent to A2A, as its front saw it.
type upcall struct {
	replica                                      int
	reqID, method, messageID, contextID, inputID string
	start, end                                   time.Time
}

// history is everything a test's clients observed and everything that
// reached A2A.
type history struct {
	mu       sync.Mutex
	attempts []*attempt
	calls    []*upcall
}

func (h *history) add(a *attempt) {
	h.mu.Lock()
	h.attempts = append(h.attempts, a)
	h.mu.Unlock()
}

func (h *history) update(f func()) {
	h.mu.Lock()
	f()
	h.mu.Unlock()
}

// front serves A2A to one replica: a reverse proxy to the shared agent
// that records every call with the replica, the request id the replica
// sent (the client's X-Request-Id, kept by forwarding), and the answer
// (messageId agui-resume-…, with the interrupt id in its data part).
func (h *history) front(t testing.TB, replica int, agentURL string) string {
	t.Helper()
	target, err := url.Parse(agentURL)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &upcall{replica: replica, reqID: r.Header.Get("X-Request-Id"), method: r.Method + " " + r.URL.Path, start: time.Now()}
		if r.Method == http.MethodPost && r.URL.Path == "/" {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			c.parse(body)
		}
		h.update(func() { h.calls = append(h.calls, c) })
		defer func() { h.update(func() { c.end = time.Now() }) }()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	return srv.URL + "/"
}

// parse reads the JSON-RPC method and message of an A2A call.
func (c *upcall) parse(body []byte) {
	var req struct {
		Method string `json:"method"`
		Params struct {
			Message *struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
				Parts     []struct {
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return
	}
	c.method = req.Method
	if m := req.Params.Message; m != nil {
		c.messageID, c.contextID = m.MessageID, m.ContextID
		for _, p := range m.Parts {
			var d struct {
				InputID string `json:"inputId"`
			}
			if len(p.Data) > 0 && json.Unmarshal(p.Data, &d) == nil && d.InputID != "" {
				c.inputID = d.InputID
			}
		}
	}
}

// verdict is what check found.
type verdict struct {
	problems []string
	// answered counts the answers that reached A2A per interrupt id.
	answered map[string]int
}

func (v *verdict) fail(format string, args ...any) {
	if len(v.problems) < 30 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	}
}

// check is the checker over a whole history:
//   - every interrupt is answered at most once upstream (an answer is a
//     message agui-resume-… carrying the interrupt id);
//   - every interrupt a client saw was answered once, or a resume of it
//     was told that its execution is over (CANCELLED, EXECUTION_LOST:
//     the client accepts that only after a run of the thread failed
//     closed and cancelled its task);
//   - a request reached A2A from one replica at most (the one that
//     served it), and no two requests of a thread served by different
//     replicas have overlapping RUN_STARTED … terminal intervals as their
//     clients observed them (streamEnd): never two replicas streaming one
//     thread.
func (h *history) check() *verdict {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := &verdict{answered: map[string]int{}}
	servedBy := map[string]map[int]bool{}
	for _, c := range h.calls {
		if c.reqID != "" {
			if servedBy[c.reqID] == nil {
				servedBy[c.reqID] = map[int]bool{}
			}
			servedBy[c.reqID][c.replica] = true
		}
		if strings.HasPrefix(c.messageID, "agui-resume-") && c.inputID != "" {
			v.answered[c.inputID]++
		}
	}
	for id, n := range v.answered {
		if n > 1 {
			v.fail("interrupt %s answered %d times upstream", id, n)
		}
	}
	type span struct {
		a       *attempt
		replica int
	}
	closed := map[string]bool{}
	for _, a := range h.attempts {
		if a.terminal == "error:CANCELLED" || a.terminal == "error:EXECUTION_LOST" {
			for _, id := range a.answers {
				closed[id] = true
			}
		}
	}
	spans := map[string][]span{}
	for _, a := range h.attempts {
		for _, id := range a.interrupts {
			if v.answered[id] == 0 && !closed[id] {
				v.fail("interrupt %s of %s (run %s) was never answered upstream: lost", id, a.thread, a.runID)
			}
		}
		reps := servedBy[a.reqID]
		if len(reps) > 1 {
			v.fail("request %s (%s %s) reached A2A from replicas %v", a.reqID, a.thread, a.kind, keys(reps))
		}
		if a.started.IsZero() || len(reps) != 1 {
			continue
		}
		spans[a.thread] = append(spans[a.thread], span{a, keys(reps)[0]})
	}
	for thread, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].a.started.Before(ss[j].a.started) })
		for i := range ss {
			for j := i + 1; j < len(ss) && ss[j].a.started.Before(ss[i].a.streamEnd()); j++ {
				if ss[i].replica != ss[j].replica {
					v.fail("%s streamed on replicas %d and %d at once: %s %s [%v, %v] and %s %s from %v", thread,
						ss[i].replica, ss[j].replica, ss[i].a.kind, ss[i].a.runID, ss[i].a.started.Format(timeFmt), ss[i].a.streamEnd().Format(timeFmt),
						ss[j].a.kind, ss[j].a.runID, ss[j].a.started.Format(timeFmt))
				}
			}
		}
	}
	return v
}

const timeFmt = "15:04:05.000"

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// during returns the outcomes of the attempts served by replica (as A2A
// saw them) whose answer overlapped [from, to], and the longest of them.
func (h *history) during(replica int, from, to time.Time) (map[string]int, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	served := map[string]bool{}
	for _, c := range h.calls {
		if c.replica == replica {
			served[c.reqID] = true
		}
	}
	n := map[string]int{}
	var longest time.Duration
	for _, a := range h.attempts {
		if served[a.reqID] && a.start.Before(to) && a.end.After(from) {
			n[a.kind+" "+a.result()]++
			longest = max(longest, a.end.Sub(a.start))
		}
	}
	return n, longest
}

// outcomes counts the attempts that got an answer by kind and outcome
// ("turn success", "resume error:EXECUTION_LOST", "cancel 200", …).
func (h *history) outcomes() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := map[string]int{}
	for _, a := range h.attempts {
		n[a.kind+" "+a.result()]++
	}
	return n
}

// streamEnd is when the replica stopped streaming the thread, as the
// client saw it: the terminal event, else the end of the answer. A run
// that ends RUN_ERROR OWNER_UNAVAILABLE was cut off from its thread: the
// replica held its events from then on, and that error only tells the
// client so once the replica knows, so its stream ends with the last
// event before it.
func (a *attempt) streamEnd() time.Time {
	switch {
	case a.terminal == "error:OWNER_UNAVAILABLE" && !a.lastContent.IsZero():
		return a.lastContent
	case a.terminal == "error:OWNER_UNAVAILABLE":
		return a.started
	case !a.finished.IsZero():
		return a.finished
	}
	return a.end
}

// result names what an attempt got.
func (a *attempt) result() string {
	switch {
	case a.transport != "":
		return "unreachable"
	case a.terminal != "":
		return a.terminal
	case !a.started.IsZero():
		return "broken stream"
	case a.code != "":
		return fmt.Sprintf("%d %s", a.status, a.code)
	}
	return fmt.Sprint(a.status)
}

// formatCounts prints counts sorted by key.
func formatCounts(n map[string]int) string {
	ks := make([]string, 0, len(n))
	for k := range n {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%s: %d; ", k, n[k])
	}
	return strings.TrimSuffix(b.String(), "; ")
}
