package request

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
)

// Redacted describes ic for logs. It names which secrets are present but
// never shows llmApiKey, llmHeaders values, the AccessKey ID or secret, or
// the STS token.
func Redacted(ic *IacCode) string {
	if ic == nil {
		return "iacCode<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "iacCode{schemaVersion=%d rosInvocationId=%q cwd=%q", ic.SchemaVersion, ic.RosInvocationID, ic.CWD)
	if ic.Model != "" {
		fmt.Fprintf(&b, " model=%q", ic.Model)
	}
	if ic.LLMApiKey != "" {
		b.WriteString(" llmApiKey=[REDACTED]")
	}
	if ic.LLMHeadersSet {
		fmt.Fprintf(&b, " llmHeaders=%v", headerNames(ic.LLMHeaders))
	}
	if t := ic.Thinking; t != nil {
		fmt.Fprintf(&b, " thinking={enabled=%t effort=%q budget=%d}", t.Enabled, t.Effort, t.Budget)
	}
	if ic.UserID != nil {
		fmt.Fprintf(&b, " userId=%q", *ic.UserID)
	}
	for _, kv := range [][2]string{
		{"channel", ic.Channel}, {"preferredLanguage", ic.PreferredLanguage},
		{"candidatePresentation", ic.CandidatePresentation}, {"runMode", ic.RunMode},
		{"pipelineName", ic.PipelineName}, {"guidanceId", ic.GuidanceID},
		{"inputDigest", ic.InputDigest},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%q", kv[0], kv[1])
		}
	}
	fmt.Fprintf(&b, " cleanupOnly=%t", ic.CleanupOnly)
	if ic.ActiveGuidance {
		b.WriteString(" activeGuidance=true")
	}
	if ic.ExecutionFence != nil {
		b.WriteString(" executionFence=set")
	}
	if c := ic.AlibabaCloud; c != nil {
		fmt.Fprintf(&b, " alibabaCloud={credentials=%t securityToken=%t regionId=%q}",
			c.AccessKeyID != "" || c.AccessKeySecret != "", c.SecurityToken != "", c.RegionID)
	}
	b.WriteString("}")
	return b.String()
}

// headerNames lists header names only; values may be credentials.
func headerNames(h map[string]string) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// String keeps %v and %s from printing secrets.
func (ic *IacCode) String() string { return Redacted(ic) }

// GoString keeps %#v from printing secrets.
func (ic *IacCode) GoString() string { return Redacted(ic) }

// LogValue implements slog.LogValuer without exposing secrets.
func (ic *IacCode) LogValue() slog.Value {
	if ic == nil {
		return slog.StringValue("<nil>")
	}
	attrs := []slog.Attr{
		slog.String("rosInvocationId", ic.RosInvocationID),
		slog.String("cwd", ic.CWD),
		slog.Bool("cleanupOnly", ic.CleanupOnly),
		slog.Bool("llmApiKeySet", ic.LLMApiKey != ""),
	}
	if ic.Model != "" {
		attrs = append(attrs, slog.String("model", ic.Model))
	}
	if ic.LLMHeadersSet {
		attrs = append(attrs, slog.Any("llmHeaderNames", headerNames(ic.LLMHeaders)))
	}
	if ic.UserID != nil {
		attrs = append(attrs, slog.String("userId", *ic.UserID))
	}
	if ic.RunMode != "" {
		attrs = append(attrs, slog.String("runMode", ic.RunMode))
	}
	if ic.PipelineName != "" {
		attrs = append(attrs, slog.String("pipelineName", ic.PipelineName))
	}
	if ic.AlibabaCloud != nil {
		attrs = append(attrs, slog.Bool("alibabaCloudCredentials", true))
	}
	return slog.GroupValue(attrs...)
}
