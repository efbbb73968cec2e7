module github.com/iac-code-agui/iac-code-agui

go 1.26.0

require (
	github.com/a2aproject/a2a-go/v2 v2.4.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.44.0 // indirect
)
