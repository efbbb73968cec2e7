package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestBodyBudget: the bytes of request bodies read at once are bounded
// (server.Options.BodyBudget, here 64 KiB). While a slow client holds
// 60,000 bytes of it, a small run still starts at once, a 20,000-byte one
// waits and is read once the slow one has ended (its 408), and a body
// larger than the whole budget passes alone.
func TestBodyBudget(t *testing.T) {
	e := newEnv(t, envOptions{bodyBudget: 64 << 10, bodyTimeout: time.Second})
	head := func(n int) string {
		return "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	}
	type result struct {
		status int
		at     time.Time
	}
	slow := make(chan result, 1)
	go func() {
		// Announces 60,000 bytes and sends 10: it holds its share until
		// its body deadline answers 408.
		res, _, _ := rawExchange(t, e.URL, head(60000)+strings.Repeat(" ", 10), "", 0)
		slow <- result{res.StatusCode, time.Now()}
	}()
	held := func() float64 {
		_, body := scrapeMetrics(t, e, nil)
		return e2etest.Sample(body, "iac_code_agui_request_body_bytes")
	}
	for deadline := time.Now().Add(5 * time.Second); held() != 60000; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow request holds %v bytes, want 60000", held())
		}
	}

	if r := post(t, e.URL, e.body("thread-small", "run-1", "Create a VPC template", nil), nil); r.Status != 200 {
		t.Fatalf("small run while the budget is held: %d %s", r.Status, r.Body)
	}
	raw, err := json.Marshal(e.body("thread-medium", "run-1", "Create a VPC template "+strings.Repeat("x", 20000), nil))
	if err != nil {
		t.Fatal(err)
	}
	r := post(t, e.URL, raw, nil)
	medium := result{r.Status, time.Now()}
	s := <-slow
	if s.status != 408 {
		t.Fatalf("the slow request: %d, want 408", s.status)
	}
	if medium.status != 200 || medium.at.Before(s.at) {
		t.Fatalf("the 20,000-byte run: %d at %v, the slow one's 408 at %v; want 200 after it", medium.status, medium.at, s.at)
	}
	if r := post(t, e.URL, e.body("thread-large", "run-1", "Create a VPC template "+strings.Repeat("y", 100<<10), nil), nil); r.Status != 200 {
		t.Fatalf("a run larger than the budget: %d %s", r.Status, r.Body)
	}
	if n := held(); n != 0 {
		t.Fatalf("%v bytes still held after every request ended", n)
	}
}

// TestChunkedBodyWithinBudget: a body of unknown length (chunked) reserves
// the route's whole limit while it is read, is read as it comes, and is
// admitted like any other.
func TestChunkedBodyWithinBudget(t *testing.T) {
	e := newEnv(t, envOptions{})
	raw, err := json.Marshal(e.body("thread-chunked", "run-1", "Create a VPC template", nil))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, e.URL, io.MultiReader(bytes.NewReader(raw[:20]), bytes.NewReader(raw[20:])))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1 // unknown: sent chunked
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"type":"RUN_FINISHED"`) {
		t.Fatalf("chunked run: %d %.300s", res.StatusCode, body)
	}
	if _, m := scrapeMetrics(t, e, nil); e2etest.Sample(m, "iac_code_agui_request_body_bytes") != 0 {
		t.Fatalf("%v bytes still held", e2etest.Sample(m, "iac_code_agui_request_body_bytes"))
	}
}
