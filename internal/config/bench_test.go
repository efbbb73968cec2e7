package config

import "testing"

func BenchmarkLoad(b *testing.B) {
	p := writeYAML(b, "host: 0.0.0.0\nport: 41243\na2a-url: http://127.0.0.1:41242\n"+
		"state-dir: /var/lib/iac-code/agui\nidle-shutdown: 0\ndebug: false\nlog-stdout: true\n")
	e := with(base(), "IAC_CODE_AGUI_AUTH_TOKEN", "t")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load([]string{"--config", p, "--port", "9000"}, e.get); err != nil {
			b.Fatal(err)
		}
	}
}
