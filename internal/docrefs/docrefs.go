// Package docrefs owns the check that the repository's documentation
// references stay true: every "protocol.md §5.6"-style reference in a Go
// comment or a Markdown file names a section anchored (<a id="s5.6">) in
// that document under docs/, every relative Markdown link reaches an
// existing file and anchor, and nothing cites documents outside the
// repository. It only reads files; it must not import other packages of
// this module.
package docrefs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Docs are the anchored documents, by the name code cites them with.
var Docs = map[string]string{
	"protocol.md":     "docs/protocol.md",
	"upstream.md":     "docs/upstream.md",
	"agui.md":         "docs/agui.md",
	"dependencies.md": "docs/dependencies.md",
}

// bareOwner names the document a reference without a file name refers to,
// per Markdown file; Go files and other Markdown files are not checked for
// bare references, since their "§" may belong to a name on an earlier line.
var bareOwner = map[string]string{
	"docs/protocol.md":     "protocol.md",
	"docs/upstream.md":     "upstream.md",
	"docs/agui.md":         "agui.md",
	"docs/dependencies.md": "dependencies.md",
	"docs/decisions.md":    "protocol.md",
}

// Provenance markers delimit the one place where the specification set,
// which lives outside the repository, may be named.
const (
	provenanceStart = "<!-- spec-provenance -->"
	provenanceEnd   = "<!-- /spec-provenance -->"
)

var (
	// outside matches citations of the specification set by file name or
	// path. The patterns are split so that this file does not match them
	// itself, and so that a rename of those names in the sources leaves it
	// alone.
	outside = regexp.MustCompile(`\b(?:adapter|a2a-upstream|agui-1\.0|libraries)\.md\b|protocol-` + `reference|shared/` + `spec`)

	// ref matches a document name followed by a chain of sections, for
	// example "protocol.md §2.5 steps 2–4, §7.1" or, across a comment line
	// break, "protocol.md\n// §4.4 step 9". A Markdown link to the document
	// may stand for the name: "[upstream.md](upstream.md) §9".
	ref = regexp.MustCompile(`\b(protocol|upstream|agui|dependencies)\.md` + "`?" + `(?:\]\([^)\s]*\))?` +
		`((?:(?:[\s/*,–-]|\band\b|\bor\b|\bto\b|\bsteps?\s+\d+(?:–\d+)?|\bitems?\s+\d+)*§\d+(?:\.\d+)*(?:\([a-z]\))?)+)`)
	section = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)
	anchor  = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	link    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+)$`)
)

// Problem is one broken reference.
type Problem struct {
	File string // slash-separated, relative to the root
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Check scans every .go and .md file under root (skipping .git,
// node_modules, testdata and hidden directories) and returns the broken
// references, sorted by file and line.
func Check(root string) ([]Problem, error) {
	c := &checker{root: root, anchors: make(map[string]map[string]bool)}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".md") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return c.file(filepath.ToSlash(rel))
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(c.problems, func(i, j int) bool {
		a, b := c.problems[i], c.problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return c.problems, nil
}

type checker struct {
	root     string
	anchors  map[string]map[string]bool // rel path → ids; nil when missing
	problems []Problem
}

func (c *checker) report(file string, text []byte, off int, format string, args ...any) {
	line := 1 + bytes.Count(text[:off], []byte("\n"))
	c.problems = append(c.problems, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// anchorsOf returns the explicit anchors and heading slugs of a Markdown
// file, or nil when it cannot be read.
func (c *checker) anchorsOf(rel string) map[string]bool {
	if a, ok := c.anchors[rel]; ok {
		return a
	}
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	var ids map[string]bool
	if err == nil {
		ids = make(map[string]bool)
		for _, m := range anchor.FindAllSubmatch(b, -1) {
			ids[string(m[1])] = true
		}
		for _, m := range heading.FindAllSubmatch(b, -1) {
			ids[slug(string(m[1]))] = true
		}
	}
	c.anchors[rel] = ids
	return ids
}

// slug is GitHub's anchor of a heading: lowercase, punctuation dropped,
// spaces as "-".
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (c *checker) file(rel string) error {
	text, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	isMD := strings.HasSuffix(rel, ".md")
	var skip []span // provenance blocks (Markdown only)
	if isMD {
		skip = provenance(text)
	}
	for _, m := range outside.FindAllIndex(text, -1) {
		if !inside(skip, m[0]) {
			c.report(rel, text, m[0], "%q points outside the repository; cite the documents under docs/", text[m[0]:m[1]])
		}
	}
	var chains []span
	for _, m := range ref.FindAllSubmatchIndex(text, -1) {
		if inside(skip, m[0]) {
			continue
		}
		chains = append(chains, span{m[0], m[1]})
		c.sections(rel, text, string(text[m[2]:m[3]])+".md", m[4], m[5])
	}
	if owner, ok := bareOwner[rel]; ok {
		for _, m := range section.FindAllIndex(text, -1) {
			if !inside(skip, m[0]) && !inside(chains, m[0]) {
				c.sections(rel, text, owner, m[0], m[1])
			}
		}
	}
	if isMD {
		c.links(rel, text, skip)
	}
	return nil
}

// sections checks every "§N" of text[from:to] against doc's anchors.
func (c *checker) sections(rel string, text []byte, doc string, from, to int) {
	target := Docs[doc]
	ids := c.anchorsOf(target)
	for _, m := range section.FindAllSubmatchIndex(text[from:to], -1) {
		off := from + m[0]
		num := string(text[from+m[2] : from+m[3]])
		switch {
		case ids == nil:
			c.report(rel, text, off, "%s §%s: %s does not exist", doc, num, target)
		case !ids["s"+num]:
			c.report(rel, text, off, "%s has no section §%s (anchor #s%s)", target, num, num)
		}
	}
}

// links checks the relative links of a Markdown file outside code blocks.
func (c *checker) links(rel string, text []byte, skip []span) {
	skip = append(skip, fences(text)...)
	dir := filepath.ToSlash(filepath.Dir(rel))
	for _, m := range link.FindAllSubmatchIndex(text, -1) {
		if inside(skip, m[0]) {
			continue
		}
		dest := string(text[m[2]:m[3]])
		if strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") {
			continue
		}
		path, frag, _ := strings.Cut(dest, "#")
		target := rel
		if path != "" {
			target = filepath.ToSlash(filepath.Clean(filepath.Join(dir, path)))
		}
		if strings.HasPrefix(target, "../") || filepath.IsAbs(path) {
			c.report(rel, text, m[0], "link %q leaves the repository", dest)
			continue
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(target))); err != nil {
			c.report(rel, text, m[0], "link %q: %s does not exist", dest, target)
			continue
		}
		if frag != "" && strings.HasSuffix(target, ".md") && !c.anchorsOf(target)[frag] {
			c.report(rel, text, m[0], "link %q: %s has no anchor #%s", dest, target, frag)
		}
	}
	seen := make(map[string]bool)
	for _, m := range anchor.FindAllSubmatchIndex(text, -1) {
		id := string(text[m[2]:m[3]])
		if seen[id] {
			c.report(rel, text, m[0], "duplicate anchor #%s", id)
		}
		seen[id] = true
	}
}

type span struct{ from, to int }

func inside(spans []span, off int) bool {
	for _, s := range spans {
		if off >= s.from && off < s.to {
			return true
		}
	}
	return false
}

// provenance returns the spans between the provenance markers.
func provenance(text []byte) []span {
	var out []span
	for off := 0; ; {
		i := bytes.Index(text[off:], []byte(provenanceStart))
		if i < 0 {
			return out
		}
		from := off + i
		j := bytes.Index(text[from:], []byte(provenanceEnd))
		if j < 0 {
			return append(out, span{from, len(text)})
		}
		out = append(out, span{from, from + j})
		off = from + j
	}
}

// fences returns the spans of fenced code blocks.
func fences(text []byte) []span {
	var out []span
	open := -1
	off := 0
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("```")) {
			if open < 0 {
				open = off
			} else {
				out = append(out, span{open, off + len(line)})
				open = -1
			}
		}
		off += len(line)
	}
	return out
}
