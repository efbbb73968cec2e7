package main

import (
	"fmt"
	"strings"
	"time"
)

// row is one line of the printed table.
type row struct {
	what, value, vsRef, vsPeer, target, met string
}

type table struct{ rows []row }

func (t *table) add(r row) {
	t.rows = append(t.rows, r)
	fmt.Printf("  %s: %s %s %s\n", r.what, r.value, r.vsRef, r.vsPeer)
}

// print writes the table as Markdown, ready for docs/benchmarks.md.
func (t *table) print() {
	var b strings.Builder
	b.WriteString("\n| Measurement | Value | vs reference | vs peer | Target | Met |\n|---|---|---|---|---|---|\n")
	for _, r := range t.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.what, r.value, dash(r.vsRef), dash(r.vsPeer), dash(r.target), dash(r.met))
	}
	fmt.Print(b.String())
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func ratio(a, b float64) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func eps(v float64) string { return fmt.Sprintf("%s events/s", thousands(int64(v))) }

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func thousands(n int64) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
