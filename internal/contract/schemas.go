package contract

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// obj is a JSON Schema (or any JSON object) under construction.
type obj = map[string]any

// BaseURL prefixes every schema's $id; nothing is fetched from it.
const BaseURL = "https://iac-code-agui.github.io/schemas/"

// Schema files, by name under schemas/.
const (
	FileForwardedProps = "forwarded-props.schema.json"
	FileSession        = "iac-code.session.v1.schema.json"
	FileArtifact       = "iac-code.artifact.v1.schema.json"
	FileToolProgress   = "iac-code.tool-progress.v1.schema.json"
	FilePipeline       = "iac-code.pipeline.v1.schema.json"
	FileActivity       = "pipeline-activity.schema.json"
	FileInterrupt      = "interrupt.schema.json"
	FileResume         = "resume.schema.json"
)

// CustomEventFiles maps each CUSTOM event name to the schema of its value
// (protocol.md §4.15).
var CustomEventFiles = map[string]string{
	"iac-code.session.v1":       FileSession,
	"iac-code.artifact.v1":      FileArtifact,
	"iac-code.tool-progress.v1": FileToolProgress,
	"iac-code.pipeline.v1":      FilePipeline,
}

// Schemas returns every published schema by file name. Each call builds
// fresh maps.
func Schemas() map[string]obj {
	return map[string]obj{
		FileForwardedProps: forwardedProps(),
		FileSession:        session(),
		FileArtifact:       openValue(FileArtifact, "IacCodeArtifactV1", "Value of CUSTOM iac-code.artifact.v1 (protocol.md §4.15): the A2A artifact update with schemaVersion 1; further keys come from iac-code unchanged."),
		FileToolProgress:   openValue(FileToolProgress, "IacCodeToolProgressV1", "Value of CUSTOM iac-code.tool-progress.v1 (protocol.md §4.15): the iac-code tool progress frame with schemaVersion 1; further keys come from iac-code unchanged."),
		FilePipeline:       pipelineEnvelope(),
		FileActivity:       pipelineActivity(),
		FileInterrupt:      interrupt(),
		FileResume:         resume(),
	}
}

func doc(file, title, description string, body obj) obj {
	body["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	body["$id"] = BaseURL + file
	body["title"] = title
	body["description"] = description
	return body
}

func str() obj              { return obj{"type": "string"} }
func nullable(t string) obj { return obj{"type": []any{t, "null"}} }
func describe(s obj, d string) obj {
	if d != "" {
		s["description"] = d
	}
	return s
}

func closed(props obj, required ...string) obj {
	r := make([]any, len(required))
	for i, k := range required {
		r[i] = k
	}
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(r) > 0 {
		o["required"] = r
	}
	return o
}

// rule is the schema of one forwardedProps key (camelCase name), with
// whether it is required.
type rule struct {
	schema   obj
	required bool
}

// forwardedRules holds the value rules of protocol.md §3.3; the keys and
// their spellings come from request.Spellings, and a key without a rule
// (or a rule without a key) panics, so the generator and its test catch a
// new field at once.
func forwardedRules() map[string]map[string]rule {
	optStr := func(d string) rule { return rule{schema: describe(nullable("string"), d)} }
	optEnum := func(d string, vals ...any) rule {
		return rule{schema: describe(obj{"enum": append(vals, nil)}, d)}
	}
	boolean := func(d string) rule { return rule{schema: describe(obj{"type": "boolean"}, d)} }
	return map[string]map[string]rule{
		"forwardedProps": {
			"iacCode": {schema: obj{"$ref": "#/$defs/IacCode"}, required: true},
		},
		"iacCode": {
			"schemaVersion":         {schema: obj{"const": 1, "description": "Exactly the integer 1 (1.0 is refused)."}, required: true},
			"rosInvocationId":       {schema: obj{"type": "string", "minLength": 1, "maxLength": 256, "description": "Execution identity (protocol.md §3.5): keep it with the threadId across reloads; a thread with a pending interrupt must be resumed with the same value."}, required: true},
			"cwd":                   {schema: describe(str(), "Workspace; must lie under an allowed root (protocol.md §3.4)."), required: true},
			"model":                 optStr("iac_code_model."),
			"llmApiKey":             optStr("Secret; never stored or logged."),
			"llmHeaders":            {schema: obj{"type": []any{"object", "null"}, "additionalProperties": str(), "description": "Secret values; bound to the A2A context: omitted inherits, a map replaces, {} clears."}},
			"thinking":              {schema: obj{"anyOf": []any{obj{"$ref": "#/$defs/Thinking"}, obj{"type": "null"}}}},
			"userId":                {schema: obj{"type": []any{"string", "null"}, "maxLength": 256, "description": "Part of the thread binding."}},
			"channel":               optStr(""),
			"preferredLanguage":     optStr("Language of messages (protocol.md §2.9)."),
			"candidatePresentation": optEnum("", "standard", "rich"),
			"runMode":               optEnum("Absent: A2A decides.", "normal", "pipeline"),
			"pipelineName":          optStr(""),
			"cleanupOnly":           boolean("Default false."),
			"alibabaCloud":          {schema: obj{"anyOf": []any{obj{"$ref": "#/$defs/AlibabaCloud"}, obj{"type": "null"}}}},
			"activeGuidance":        boolean("The request steers the thread's running pipeline (protocol.md §5.13)."),
			"guidanceId":            {schema: obj{"type": []any{"string", "null"}, "minLength": 1}},
			"inputDigest":           {schema: obj{"type": []any{"string", "null"}, "minLength": 1, "description": "Session handoff: digest of the handed-over input (protocol.md §7.3)."}},
			"executionFence":        {schema: obj{"type": []any{"object", "null"}, "description": "Session handoff fence, e.g. {\"version\":\"session-handoff-v1\",\"owner\":{…}}; required with owner when the writer fence is on (protocol.md §8.9)."}},
		},
		"thinking": {
			"enabled": boolean(""),
			"effort":  optStr(""),
			"budget":  {schema: obj{"type": []any{"integer", "null"}, "minimum": 1, "maximum": int64(1<<63 - 1)}},
		},
		"alibabaCloud": {
			"accessKeyId":     optStr(""),
			"accessKeySecret": optStr("Secret."),
			"securityToken":   optStr("Secret."),
			"regionId":        optStr(""),
		},
	}
}

// spellingObject builds the schema of one strict object: every spelling
// is a property; a required key needs exactly one of its spellings, an
// optional one at most one.
func spellingObject(section string) obj {
	spell := request.Spellings()[section]
	rules := forwardedRules()[section]
	if len(spell) != len(rules) {
		panic(fmt.Sprintf("contract: %s has %d keys in internal/request and %d rules", section, len(spell), len(rules)))
	}
	props := obj{}
	var all []any
	for _, names := range spell {
		r, ok := rules[names[0]]
		if !ok {
			panic("contract: no rule for " + section + "." + names[0])
		}
		for _, n := range names {
			props[n] = r.schema
		}
		switch {
		case r.required && len(names) == 1:
			all = append(all, obj{"required": []any{names[0]}})
		case r.required:
			one := make([]any, len(names))
			for i, n := range names {
				one[i] = obj{"required": []any{n}}
			}
			all = append(all, obj{"oneOf": one})
		case len(names) > 1:
			both := make([]any, len(names))
			for i, n := range names {
				both[i] = n
			}
			all = append(all, obj{"not": obj{"required": both}})
		}
	}
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(all) > 0 {
		o["allOf"] = all
	}
	return o
}

func forwardedProps() obj {
	s := spellingObject("forwardedProps")
	s["$defs"] = obj{
		"IacCode":      describe(spellingObject("iacCode"), "forwardedProps.iacCode (protocol.md §3.3). Strict: unknown keys are refused; each key in camelCase or snake_case, never both."),
		"Thinking":     spellingObject("thinking"),
		"AlibabaCloud": describe(spellingObject("alibabaCloud"), "Secrets; never stored or logged."),
	}
	return doc(FileForwardedProps, "ForwardedProps", "RunAgentInput.forwardedProps of every request (protocol.md §3.3). Failures are 400 INVALID_INPUT \"Invalid iac-code forwarded properties.\"", s)
}

func session() obj {
	return doc(FileSession, "IacCodeSessionV1", "Value of CUSTOM iac-code.session.v1, once per run (protocol.md §4.14). executionId is the handle of the cancel extension (§7.1).", closed(obj{
		"schemaVersion":   obj{"const": 1},
		"threadId":        str(),
		"aguiRunId":       str(),
		"executionId":     str(),
		"contextId":       str(),
		"taskId":          nullable("string"),
		"rosInvocationId": str(),
		"sessionId":       nullable("string"),
	}, "schemaVersion", "threadId", "aguiRunId", "executionId", "contextId", "taskId", "rosInvocationId", "sessionId"))
}

// openValue is a value iac-code defines: schemaVersion 1 and any keys.
func openValue(file, title, description string) obj {
	return doc(file, title, description, obj{
		"type":                 "object",
		"properties":           obj{"schemaVersion": obj{"const": 1}},
		"required":             []any{"schemaVersion"},
		"additionalProperties": true,
	})
}

func coordinate() obj {
	return obj{"type": "object", "properties": obj{"id": str(), "runId": str(), "attempt": obj{"type": "integer"}}, "additionalProperties": true}
}

func pipelineEnvelope() obj {
	types := mapper.CustomPipelineTypes()
	enum := make([]any, len(types))
	for i, t := range types {
		enum[i] = t
	}
	return doc(FilePipeline, "IacCodePipelineV1", "Value of CUSTOM iac-code.pipeline.v1: an iac-code pipeline envelope as A2A sent it (upstream.md §3.5), for the allowlisted event types only (protocol.md §4.12). De-duplicate by eventId or sequence; read pipeline completion from pipeline_completed / pipeline_error.", obj{
		"type": "object",
		"properties": obj{
			"schemaVersion":    describe(str(), "The envelope's own version, \"1.0\"."),
			"extensionUri":     str(),
			"eventId":          str(),
			"sequence":         obj{"type": "integer"},
			"eventType":        obj{"enum": enum},
			"scope":            str(),
			"pipelineRunId":    str(),
			"taskId":           str(),
			"contextId":        str(),
			"status":           str(),
			"data":             obj{"type": "object"},
			"iacCodeSessionId": str(),
			"step":             coordinate(),
			"candidate":        coordinate(),
			"candidateStep":    coordinate(),
		},
		"required":             []any{"eventType"},
		"additionalProperties": true,
	})
}

func pipelineActivity() obj {
	return doc(FileActivity, "PipelineActivityContent", "content of ACTIVITY_SNAPSHOT with activityType iac-code.pipeline.v1 and messageId pipeline:<pipelineRunId> (protocol.md §4.2, §9.2): the recovered pipeline snapshot; replace is true.", closed(obj{
		"schemaVersion": obj{"const": 1},
		"pipelineRunId": str(),
		"snapshot":      obj{"type": "object"},
	}, "schemaVersion", "pipelineRunId", "snapshot"))
}

// projectionTypes are the JSON types of the projection keys as iac-code
// documents them (upstream.md §4); a key missing here is any JSON value.
var projectionTypes = map[string]obj{
	"schemaVersion": {"const": 1}, "kind": str(), "requestTaskId": str(), "contextId": str(),
	"inputId": str(), "toolUseId": str(), "toolName": str(), "title": str(), "purpose": str(),
	"effect": str(), "target": str(), "isReadOnly": {"type": "boolean"}, "prompt": str(),
	"safeSummary": str(), "options": {"type": "array"}, "language": str(),
	"deploymentSummary": {"type": "object"}, "scope": str(), "subPipelineId": nullable("string"),
	"operation": str(), "allowFreeText": {"type": "boolean"}, "freeTextPrompt": str(),
	"required": {"type": "boolean"}, "selector": {"type": "object"},
}

// kindShape is one interrupt shape of protocol.md §5.2: the def names,
// the kinds it covers ("" = any other kind) and the projection keys it
// requires besides inputId.
type kindShape struct {
	name, reason string
	kind         projection.Kind
	required     []string
	sample       map[string]any
}

func shapes() []kindShape {
	return []kindShape{
		{name: "Permission", reason: "tool_call", kind: projection.KindPermission, required: []string{"toolUseId"},
			sample: obj{"kind": "permission", "inputId": "p"}},
		{name: "CloudResourceSelection", reason: "input_required", kind: projection.KindCloudResourceSelection, required: []string{"toolUseId", "selector"},
			sample: obj{"kind": "cloud_resource_selection", "inputId": "r"}},
		{name: "DeploymentConfirmation", reason: "input_required", kind: projection.KindDeploymentConfirmation, required: []string{"options"},
			sample: obj{"kind": "deployment_confirmation", "inputId": "d", "options": deploymentSampleOptions()}},
		{name: "Question", reason: "input_required",
			sample: obj{"kind": "ask_user_question", "inputId": "q", "options": []any{obj{"id": "a"}, obj{"id": "b"}}, "allowFreeText": true}},
	}
}

// deploymentSampleOptions offers every action, so the generic schema's
// action enum is the mapper's full set.
func deploymentSampleOptions() []any {
	var out []any
	for i, a := range []string{"confirm", "adjust", "reselect", "cancel"} {
		out = append(out, obj{"id": fmt.Sprintf("o%d", i), "action": a})
	}
	return out
}

func metadataDef(s kindShape) obj {
	props := obj{}
	for _, k := range projection.Keys() {
		if t, ok := projectionTypes[k]; ok {
			props[k] = cloneJSON(t)
		} else {
			props[k] = obj{}
		}
	}
	if s.kind != "" {
		props["kind"] = obj{"const": string(s.kind)}
	} else {
		props["kind"] = describe(str(), "ask_user_question, candidate_selection, a kind this version does not know, or a deployment_confirmation whose options break the rules of protocol.md §5.2.")
	}
	props["standardOptions"] = obj{"type": "array", "items": closed(obj{"id": str(), "title": str()}, "id", "title")}
	req := append([]string{"schemaVersion", "kind", "inputId", "standardOptions"}, s.required...)
	m := closed(props, req...)
	m["description"] = fmt.Sprintf("Interrupt.metadata of a %s interrupt: the input projection (protocol.md §5.1) with schemaVersion 1 and standardOptions.", s.name)
	return m
}

func interruptDef(s kindShape) obj {
	d := closed(obj{
		"id":             describe(str(), "The inputId; answer it in resume[].interruptId."),
		"reason":         obj{"const": s.reason},
		"message":        str(),
		"toolCallId":     str(),
		"responseSchema": describe(obj{"type": "object"}, "The JSON Schema the resume payload must satisfy; narrower than "+s.name+"Answer (for example one const selectedId per option)."),
		"metadata":       obj{"$ref": "#/$defs/" + s.name + "Metadata"},
	}, "id", "reason", "message", "responseSchema", "metadata")
	d["description"] = "An interrupt of RUN_FINISHED outcome.interrupts (protocol.md §5.2); answer with " + s.name + "Answer (resume.schema.json)."
	return d
}

func interrupt() obj {
	defs := obj{}
	var any []any
	for _, s := range shapes() {
		defs[s.name+"Interrupt"] = interruptDef(s)
		defs[s.name+"Metadata"] = metadataDef(s)
		any = append(any, obj{"$ref": "#/$defs/" + s.name + "Interrupt"})
	}
	return doc(FileInterrupt, "Interrupt", "One entry of RUN_FINISHED outcome.interrupts (protocol.md §5.2). Render message, responseSchema and the metadata (title, purpose, safeSummary, options, toolName) rather than branch on reason.", obj{"anyOf": any, "$defs": defs})
}

// AnswerDef is the $defs name of the generic resume payload of an
// interrupt whose metadata.kind is kind.
func AnswerDef(kind string) string {
	for _, s := range shapes() {
		if s.kind != "" && string(s.kind) == kind {
			return s.name + "Answer"
		}
	}
	return "QuestionAnswer"
}

// answerDef is the generic form of the responseSchema mapper.BuildInterrupt
// builds for the shape's sample: every per-option const selectedId becomes
// one non-empty string, so the result accepts what any interrupt of the
// kind may accept, and nothing the mapper would never offer.
func answerDef(s kindShape) obj {
	rs := cloneJSON(mapper.BuildInterrupt(s.sample).ResponseSchema).(obj)
	generalize(rs)
	rs["description"] = fmt.Sprintf("resume[].payload of a resolved %s interrupt (protocol.md §5.5, §5.7); the interrupt's responseSchema is the exact rule.", s.name)
	return rs
}

func generalize(s obj) {
	if props, ok := s["properties"].(obj); ok {
		if _, ok := props["selectedId"]; ok {
			props["selectedId"] = obj{"type": "string", "minLength": 1, "description": "One of metadata.standardOptions[].id."}
		}
	}
	branches, ok := s["oneOf"].([]any)
	if !ok {
		return
	}
	seen := map[string]bool{}
	var out []any
	for _, b := range branches {
		bo := b.(obj)
		generalize(bo)
		key, _ := json.Marshal(bo)
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, bo)
		}
	}
	s["oneOf"] = out
}

func resume() obj {
	defs := obj{}
	for _, s := range shapes() {
		defs[s.name+"Answer"] = answerDef(s)
	}
	defs["CloudResourceSelectionCancel"] = describe(closed(obj{"optionsEmpty": obj{"type": "boolean"}}),
		"The only payloads a cancelled cloud resource selection may carry (absent, {} or {optionsEmpty}); other cancelled kinds are not validated (protocol.md §5.7).")
	defs["ResumeEntry"] = closed(obj{
		"interruptId": str(),
		"status":      obj{"enum": []any{"resolved", "cancelled"}},
		"payload":     describe(obj{}, "Required when resolved; valid for the interrupt's responseSchema."),
	}, "interruptId", "status")
	return doc(FileResume, "Resume", "RunAgentInput.resume of a resume request (protocol.md §5.5): every pending interrupt answered exactly once, with a new runId (or, under --compat copilotkit, the interrupted run's), the same threadId and rosInvocationId.", obj{
		"type": "array", "items": obj{"$ref": "#/$defs/ResumeEntry"}, "$defs": defs,
	})
}

// cloneJSON deep-copies a JSON value built from maps, slices and scalars.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneJSON(e)
		}
		return s
	}
	return v
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
