package config

import (
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// CompatCopilotKit is the one client compatibility mode (--compat
// copilotkit): what it relaxes is listed in docs/copilotkit.md.
const CompatCopilotKit = "copilotkit"

// resolveCompat: explicit flag > IAC_CODE_AGUI_COMPAT > YAML compat > none.
// Case and surrounding blanks are ignored; "none" and "" both mean none.
func resolveCompat(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	raw, err := lookupString(fv, "compat", fv.compat, "IAC_CODE_AGUI_COMPAT", "compat", y, getenv, i18n.MsgCompatInvalid, "")
	if err != nil {
		return err
	}
	switch c := strings.ToLower(strings.TrimSpace(raw)); c {
	case "", "none":
		cfg.Compat = ""
		return nil
	case CompatCopilotKit:
		cfg.Compat = c
		return nil
	}
	return newError(i18n.MsgCompatInvalid, nil)
}
