package mapper

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// StandardOption is one entry of metadata.standardOptions.
type StandardOption struct {
	ID, Title string
}

// BuildInterrupt builds the AG-UI interrupt of a persisted input projection
// (protocol.md §5.2). Schemas are built from map[string]any and []any only,
// so they marshal to JSON objects and can be compiled after a JSON round
// trip.
func BuildInterrupt(p map[string]any) agui.Interrupt {
	kind := projection.KindOf(p)
	if kind.Generic() {
		return genericInterrupt(p)
	}
	lang := i18n.Lang(normalizeLang(p["language"]))
	rawOpts, _ := p["options"].([]any)
	opts := StandardOptions(rawOpts)
	in := agui.Interrupt{ID: str(p["inputId"]), Reason: "input_required", ToolCallID: str(p["toolUseId"])}
	if in.ID == "" {
		// Without an inputId the id must still be stable for the same
		// projection; RequiredInputs always assigns one, so this is a guard.
		sum := sha256.Sum256(appendJSON(nil, p))
		in.ID = "input-" + hex.EncodeToString(sum[:16])
	}
	prompt := str(p["prompt"])
	switch {
	case kind == projection.KindPermission:
		in.Reason = "tool_call"
		in.ResponseSchema = permissionSchema()
		in.Message = permissionPrompt(prompt, str(p["title"]), lang)
		if in.Message == "" {
			in.Message = str(p["title"])
		}
		if in.Message == "" {
			in.Message = i18n.T(lang, "Permission required")
		}
	case kind == projection.KindCloudResourceSelection:
		in.ResponseSchema = map[string]any{"oneOf": []any{resourceValueBranch(), freeTextBranch()}}
		in.Message = prompt
		if in.Message == "" {
			in.Message = i18n.T(lang, "Input required")
		}
	case kind == projection.KindDeploymentConfirmation && validDeploymentOptions(rawOpts, opts):
		in.ResponseSchema = deploymentSchema(rawOpts, opts)
		in.Message = selectionMessage(prompt, lang, opts)
	default:
		// Questions, candidate selections, unknown kinds, and deployment
		// confirmations whose options break the rules of §5.2.
		allowFree := truthy(p["allowFreeText"]) || len(opts) == 0
		in.ResponseSchema = selectionSchema(opts, allowFree, false)
		in.Message = selectionMessage(prompt, lang, opts)
	}
	md := make(map[string]any, len(p)+2)
	md["schemaVersion"] = 1
	for k, v := range p {
		md[k] = v
	}
	list := make([]any, len(opts))
	for i, o := range opts {
		list[i] = map[string]any{"id": o.ID, "title": o.Title}
	}
	md["standardOptions"] = list
	in.Metadata = md
	return in
}

// StandardOptions derives the standard options: id = option.id, else
// candidate_index, else the position; title = label, else name, else title,
// else the id; a non-object option uses its string form; an empty id
// becomes option-<n> (1-based); duplicates get -2, -3, ….
func StandardOptions(raw []any) []StandardOption {
	out := make([]StandardOption, 0, len(raw))
	used := make(map[string]bool, len(raw))
	for i, o := range raw {
		var id, title string
		if om, ok := o.(map[string]any); ok {
			if v, ok := om["id"]; ok && v != nil {
				id = scalarText(v)
			} else if v, ok := om["candidate_index"]; ok && v != nil {
				id = scalarText(v)
			} else {
				id = strconv.Itoa(i)
			}
			for _, k := range [...]string{"label", "name", "title"} {
				if title = scalarText(om[k]); title != "" {
					break
				}
			}
			if title == "" {
				title = id
			}
		} else {
			id = scalarText(o)
			title = id
		}
		base := id
		if base == "" {
			base = "option-" + strconv.Itoa(i+1)
		}
		id = base
		for n := 2; used[id]; n++ {
			id = base + "-" + strconv.Itoa(n)
		}
		used[id] = true
		out = append(out, StandardOption{ID: id, Title: title})
	}
	return out
}

// OptionByID resolves a selectedId of the responseSchema to the option it
// was built from, through StandardOptions itself, so every id the schema
// offers (candidate_index, option-<n>, a -2 suffix) names its own option.
func OptionByID(raw []any, id string) (opt any, std StandardOption, ok bool) {
	for i, o := range StandardOptions(raw) {
		if o.ID == id {
			return raw[i], o, true
		}
	}
	return nil, StandardOption{}, false
}

// scalarText is the string form of a scalar option value; integral
// numbers have no fraction because A2A delivers every number as a double.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return string(appendJSON(nil, v))
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

func selectionMessage(prompt string, lang i18n.Lang, opts []StandardOption) string {
	if prompt == "" {
		prompt = i18n.T(lang, "Input required")
	}
	if len(opts) == 0 {
		return prompt
	}
	var b strings.Builder
	b.WriteString(prompt)
	for _, o := range opts {
		b.WriteString("\n- ")
		b.WriteString(o.ID)
		b.WriteString(": ")
		b.WriteString(o.Title)
	}
	return b.String()
}

// permissionPrompt is the message of a permission interrupt. iac-code
// builds its prompt as the title, a space and the question ("Run a local
// shell command Allow once?"); the message ends the title's sentence
// first ("Run a local shell command. Allow once?"; ours, protocol.md
// §5.2). Any other prompt is kept as it is; the metadata keeps A2A's.
func permissionPrompt(prompt, title string, lang i18n.Lang) string {
	rest, ok := strings.CutPrefix(prompt, title+" ")
	if title == "" || !ok || rest == "" {
		return prompt
	}
	if last, _ := utf8.DecodeLastRuneInString(title); unicode.IsPunct(last) {
		return prompt
	}
	if lang == i18n.ZH || lang == i18n.JA {
		return title + "。" + rest
	}
	return title + ". " + rest
}

func permissionSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "enum": []any{"allow_once", "deny"}},
		},
		"required":             []any{"decision"},
		"additionalProperties": false,
	}
}

func resourceValueBranch() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"value": map[string]any{"type": "string", "minLength": 1},
			"label": map[string]any{"type": "string"},
		},
		"required":             []any{"value"},
		"additionalProperties": false,
	}
}

func freeTextBranch() map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"freeText": map[string]any{"type": "string", "minLength": 1}},
		"required":             []any{"freeText"},
		"additionalProperties": false,
	}
}

// selectionSchema has one selectedId branch per option, with an optional
// parameter_overrides object for deployment confirmations, plus the
// free-text branch when allowed.
func selectionSchema(opts []StandardOption, allowFree, overrides bool) map[string]any {
	branches := make([]any, 0, len(opts)+1)
	for _, o := range opts {
		props := map[string]any{"selectedId": map[string]any{"type": "string", "const": o.ID, "title": o.Title}}
		if overrides {
			props["parameter_overrides"] = map[string]any{"type": "object"}
		}
		branches = append(branches, map[string]any{
			"type":                 "object",
			"properties":           props,
			"required":             []any{"selectedId"},
			"additionalProperties": false,
		})
	}
	if allowFree {
		branches = append(branches, freeTextBranch())
	}
	return map[string]any{"oneOf": branches}
}

var deploymentActions = map[string]bool{"confirm": true, "adjust": true, "reselect": true, "cancel": true}

// validDeploymentOptions checks §5.2: a non-empty list of objects, each with
// a unique non-blank id of at most 200 characters and a known action.
func validDeploymentOptions(raw []any, opts []StandardOption) bool {
	if len(raw) == 0 {
		return false
	}
	seen := make(map[string]bool, len(raw))
	for i, o := range raw {
		om, ok := o.(map[string]any)
		if !ok {
			return false
		}
		id, ok := om["id"].(string)
		if !ok || strings.TrimSpace(id) == "" || utf8.RuneCountInString(id) > 200 || seen[id] || opts[i].ID != id {
			return false
		}
		seen[id] = true
		if !deploymentActions[str(om["action"])] {
			return false
		}
	}
	return true
}

func deploymentSchema(raw []any, opts []StandardOption) map[string]any {
	s := selectionSchema(opts, false, true)
	set := make(map[string]bool)
	for _, o := range raw {
		set[str(o.(map[string]any)["action"])] = true
	}
	names := make([]string, 0, len(set))
	for a := range set {
		names = append(names, a)
	}
	sort.Strings(names)
	enum := make([]any, len(names))
	for i, a := range names {
		enum[i] = a
	}
	s["oneOf"] = append(s["oneOf"].([]any), map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":              map[string]any{"type": "string", "enum": enum},
			"parameter_overrides": map[string]any{"type": "object"},
		},
		"required":             []any{"action"},
		"additionalProperties": false,
	})
	return s
}

var supportedLangs = map[string]bool{"en": true, "zh": true, "es": true, "fr": true, "de": true, "ja": true, "pt": true}

// normalizeLang applies protocol.md §2.9 to a projection's language: trim,
// lowercase, "_" → "-", primary subtag, else "en".
func normalizeLang(v any) string {
	s := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(str(v))), "_", "-")
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s = s[:i]
	}
	if supportedLangs[s] {
		return s
	}
	return "en"
}
