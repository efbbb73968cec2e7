package i18n

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Lang is a supported, normalised language code (a primary subtag).
type Lang string

// The supported languages (protocol.md §2.9).
const (
	EN Lang = "en"
	ZH Lang = "zh"
	ES Lang = "es"
	FR Lang = "fr"
	DE Lang = "de"
	JA Lang = "ja"
	PT Lang = "pt"
)

// Default is the server default language; the spec leaves it open and proposes
// English (protocol.md §12 item 4).
const Default Lang = EN

var supported = []Lang{EN, ZH, ES, FR, DE, JA, PT}

// Supported returns the supported languages, English first. The slice is a
// fresh copy so callers cannot change the package's list.
func Supported() []Lang {
	return append([]Lang(nil), supported...)
}

func isSupported(l Lang) bool {
	for _, s := range supported {
		if s == l {
			return true
		}
	}
	return false
}

// Normalize trims, lowercases, maps "_" to "-" and keeps the primary subtag.
// ok reports whether the result is a supported language; when it is not, the
// returned Lang is Default so callers may use it directly as the fallback.
func Normalize(tag string) (Lang, bool) {
	t := strings.ToLower(strings.TrimSpace(tag))
	t = strings.ReplaceAll(t, "_", "-")
	if i := strings.IndexByte(t, '-'); i >= 0 {
		t = t[:i]
	}
	if l := Lang(t); isSupported(l) {
		return l, true
	}
	return Default, false
}

// FromAcceptLanguage applies protocol.md §2.9: entries split on ",", an invalid
// q-value counts as 0, entries with q <= 0, q > 1 or a non-finite q are dropped,
// "*" stands for Default, unsupported tags are dropped; the highest q wins and
// the earliest entry breaks ties. With no candidate it returns Default.
//
// Hand-written on purpose: x/text's matcher rejects the whole header on one bad
// entry and matches regions differently (dependencies.md §3).
func FromAcceptLanguage(header string) Lang {
	best, bestQ := Default, 0.0
	for _, entry := range strings.Split(header, ",") {
		params := strings.Split(entry, ";")
		q := 1.0
		for _, p := range params[1:] {
			key, value, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(key), "q") {
				q = parseQ(value)
			}
		}
		if math.IsNaN(q) || math.IsInf(q, 0) || q <= 0 || q > 1 {
			continue
		}
		tag := strings.TrimSpace(params[0])
		var lang Lang
		if tag == "*" {
			lang = Default
		} else {
			l, ok := Normalize(tag)
			if !ok {
				continue
			}
			lang = l
		}
		// Strictly greater keeps the earliest entry on ties.
		if q > bestQ {
			best, bestQ = lang, q
		}
	}
	return best
}

// parseQ reads a q-value the way a decimal float parser would; anything that is
// not a plain decimal number counts as 0 (invalid). Hex floats and digit
// separators, which strconv would accept, are refused.
func parseQ(s string) float64 {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "xX_") {
		return 0
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return q
}

// Resolve picks the request language: a supported preferredLanguage wins, then
// the Accept-Language header, then Default (protocol.md §2.9).
func Resolve(preferred string, acceptLanguage string) Lang {
	if l, ok := Normalize(preferred); ok {
		return l
	}
	return FromAcceptLanguage(acceptLanguage)
}

// FromLocaleEnv picks the language for command-line messages from the POSIX
// locale variables: the first non-empty of LC_ALL, LC_MESSAGES and LANG decides
// (as in setlocale), so an unsupported or "C"/"POSIX" locale gives English.
func FromLocaleEnv(getenv func(string) string) Lang {
	if getenv == nil {
		return Default
	}
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		// Drop ".codeset" and "@modifier", e.g. zh_CN.UTF-8 or de_DE@euro.
		if i := strings.IndexAny(v, ".@"); i >= 0 {
			v = v[:i]
		}
		l, _ := Normalize(v)
		return l
	}
	return Default
}

// T translates an English public message into lang. English, an unknown
// language or a message outside the catalogue returns msg unchanged
// (protocol.md §2.8). A message with a format verb is translated as its format
// string; use Tf to fill it in.
func T(lang Lang, msg string) string {
	if lang == EN {
		return msg
	}
	cat, ok := catalogues[lang]
	if !ok {
		l, ok := Normalize(string(lang))
		if !ok {
			return msg
		}
		cat = catalogues[l]
	}
	if s, ok := cat[msg]; ok {
		return s
	}
	return msg
}

// Tf translates a format message (for example MsgA2AExitedDuringStartup) and
// fills in its arguments.
func Tf(lang Lang, msg string, args ...any) string {
	return fmt.Sprintf(T(lang, msg), args...)
}

// catalogues maps each non-English language to its translations, keyed by the
// English text. Each language lives in its own file.
var catalogues = map[Lang]map[string]string{
	ZH: zh,
	ES: es,
	FR: fr,
	DE: de,
	JA: ja,
	PT: pt,
}
