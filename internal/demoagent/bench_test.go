package demoagent

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"testing"
)

// BenchmarkFlood streams "flood 10000" (10,000 text-delta frames plus the
// turn frames) over loopback and counts frames with a lean line reader.
func BenchmarkFlood(b *testing.B) {
	s, err := Start(context.Background(), "127.0.0.1:0", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 10000
	frames := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","contextId":"bench-` +
			itoa(i) + `","parts":[{"text":"flood 10000"}],"metadata":{"iac_code":{"cwd":"/w"}}}}}`)
		req, _ := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		got := 0
		for sc.Scan() {
			if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
				got++
			}
		}
		resp.Body.Close()
		if got < n {
			b.Fatalf("got %d frames", got)
		}
		frames += got
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}
