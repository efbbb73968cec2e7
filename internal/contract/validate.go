package contract

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator checks live payloads against the published schemas.
type Validator struct {
	schemas map[string]*jsonschema.Schema // by file name or file#/$defs/name
}

// NewValidator compiles Schemas() (locally; nothing is fetched).
func NewValidator() (*Validator, error) {
	c := newCompiler()
	all := Schemas()
	for name, s := range all {
		v, err := roundTrip(s)
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(BaseURL+name, v); err != nil {
			return nil, fmt.Errorf("contract: %s: %w", name, err)
		}
	}
	out := &Validator{schemas: map[string]*jsonschema.Schema{}}
	for name, s := range all {
		sc, err := c.Compile(BaseURL + name)
		if err != nil {
			return nil, fmt.Errorf("contract: %s: %w", name, err)
		}
		out.schemas[name] = sc
		defs, _ := s["$defs"].(obj)
		for def := range defs {
			ref := name + "#/$defs/" + def
			if out.schemas[ref], err = c.Compile(BaseURL + ref); err != nil {
				return nil, fmt.Errorf("contract: %s: %w", ref, err)
			}
		}
	}
	return out, nil
}

// roundTrip turns a built schema into the value jsonschema expects.
func roundTrip(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// Validate checks v (any JSON value, or raw JSON bytes) against a schema
// file or file#/$defs/name.
func (vd *Validator) Validate(schema string, v any) error {
	sc, ok := vd.schemas[schema]
	if !ok {
		return fmt.Errorf("contract: no schema %s", schema)
	}
	var doc any
	var err error
	if raw, isRaw := v.(json.RawMessage); isRaw {
		doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	} else {
		doc, err = roundTrip(v)
	}
	if err != nil {
		return err
	}
	if err := sc.Validate(doc); err != nil {
		return fmt.Errorf("%s: %w", schema, err)
	}
	return nil
}

// CheckEvent validates the contract parts of one decoded AG-UI event:
// CUSTOM values by name (unknown names are allowed: clients tolerate
// them), the pipeline ACTIVITY_SNAPSHOT content, and every interrupt of a
// RUN_FINISHED interrupt outcome with the metadata of its kind. Other
// events have no contract here and pass.
func (vd *Validator) CheckEvent(ev map[string]any) error {
	switch ev["type"] {
	case "CUSTOM":
		if file, ok := CustomEventFiles[fmt.Sprint(ev["name"])]; ok {
			return vd.Validate(file, ev["value"])
		}
	case "ACTIVITY_SNAPSHOT":
		if ev["activityType"] == "iac-code.pipeline.v1" {
			return vd.Validate(FileActivity, ev["content"])
		}
	case "RUN_FINISHED":
		out, _ := ev["outcome"].(map[string]any)
		its, _ := out["interrupts"].([]any)
		for _, it := range its {
			if err := vd.CheckInterrupt(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckInterrupt validates one interrupt against the shape of its
// metadata.kind.
func (vd *Validator) CheckInterrupt(it any) error {
	m, _ := it.(map[string]any)
	md, _ := m["metadata"].(map[string]any)
	kind, _ := md["kind"].(string)
	def := "QuestionInterrupt"
	if d := AnswerDef(kind); d != "QuestionAnswer" {
		def = d[:len(d)-len("Answer")] + "Interrupt"
	}
	if kind == "deployment_confirmation" && vd.Validate(FileInterrupt+"#/$defs/"+def, it) != nil {
		// Options that break §5.2 make it a question.
		def = "QuestionInterrupt"
	}
	return vd.Validate(FileInterrupt+"#/$defs/"+def, it)
}

// CheckResume validates the resume entries a client sends, each resolved
// payload against the generic answer of its interrupt's kind (kinds maps
// interrupt id to metadata.kind; for an id it lacks, any kind's answer
// passes).
func (vd *Validator) CheckResume(resume any, kinds map[string]string) error {
	if err := vd.Validate(FileResume, resume); err != nil {
		return err
	}
	var list []any
	if raw, err := json.Marshal(resume); err != nil || json.Unmarshal(raw, &list) != nil {
		return fmt.Errorf("contract: resume is not a JSON array")
	}
	for _, e := range list {
		em, _ := e.(map[string]any)
		p, has := em["payload"]
		id, _ := em["interruptId"].(string)
		kind := kinds[id]
		switch {
		case em["status"] == "resolved" && kind == "":
			// A client that does not say which kind it answered: the
			// payload must be an answer of some kind.
			if err := vd.anyAnswer(p); err != nil {
				return err
			}
		case em["status"] == "resolved":
			if err := vd.Validate(FileResume+"#/$defs/"+AnswerDef(kind), p); err != nil {
				return err
			}
		case kind == "cloud_resource_selection" && has:
			if err := vd.Validate(FileResume+"#/$defs/CloudResourceSelectionCancel", p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (vd *Validator) anyAnswer(p any) error {
	var first error
	for _, s := range shapes() {
		err := vd.Validate(FileResume+"#/$defs/"+s.name+"Answer", p)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// newCompiler is a compiler for the contract's draft, 2020-12.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	return c
}
