package request

import "strings"

// Metadata builds message.metadata.iac_code for an A2A request
// (protocol.md §10.3–§10.4). cwd is the resolved workspace and lang the
// normalised request language. Keys with absent values are dropped;
// cleanupOnly is always present and llm_headers is present also when {}.
// Values are JSON-shaped (map[string]any, string, bool, int64) so the A2A
// layer can marshal or copy them without surprises.
func Metadata(ic *IacCode, cwd, lang string) map[string]any {
	md := map[string]any{"cleanupOnly": false}
	if ic == nil {
		return md
	}
	md["cleanupOnly"] = ic.CleanupOnly
	put := func(k, v string) {
		if v != "" {
			md[k] = v
		}
	}
	put("cwd", cwd)
	put("iac_code_model", strings.TrimSpace(ic.Model))
	put("iac_code_api_key", strings.TrimSpace(ic.LLMApiKey))
	put("rosInvocationId", ic.RosInvocationID)
	put("preferredLanguage", lang)
	put("channel", ic.Channel)
	put("candidatePresentation", ic.CandidatePresentation)
	put("run_mode", ic.RunMode)
	put("pipeline_name", ic.PipelineName)
	put("guidance_id", ic.GuidanceID)
	put("input_digest", ic.InputDigest)
	if ic.ExecutionFence != nil {
		md["execution_fence"] = ic.ExecutionFence
	}
	if ic.UserID != nil {
		md["user_id"] = *ic.UserID
	}
	if t := thinkingMetadata(ic.Thinking); t != nil {
		md["thinking"] = t
	}
	if ic.LLMHeadersSet {
		h := make(map[string]any, len(ic.LLMHeaders))
		for k, v := range ic.LLMHeaders {
			h[k] = v
		}
		md["llm_headers"] = h
	}
	if c := ic.AlibabaCloud; c != nil {
		put("alibaba_cloud_access_key_id", c.AccessKeyID)
		put("alibaba_cloud_access_key_secret", c.AccessKeySecret)
		put("alibaba_cloud_security_token", c.SecurityToken)
		put("alibaba_cloud_region_id", c.RegionID)
	}
	return md
}

// thinkingMetadata returns the thinking object, or nil when no field is
// set (enabled false, no effort, no budget).
func thinkingMetadata(t *Thinking) map[string]any {
	if t == nil || (!t.Enabled && t.Effort == "" && t.Budget <= 0) {
		return nil
	}
	m := map[string]any{"enabled": t.Enabled}
	if t.Effort != "" {
		m["effort"] = t.Effort
	}
	if t.Budget > 0 {
		m["budget"] = t.Budget
	}
	return m
}

// HandoffMetadata is the part of Metadata that names a handed-over input
// (guidance_id, input_digest, execution_fence), for the messages that
// carry no other metadata (a permission answer); nil when the request has
// no input digest and no fence.
func HandoffMetadata(ic *IacCode) map[string]any {
	if ic == nil || (ic.InputDigest == "" && ic.ExecutionFence == nil) {
		return nil
	}
	md := map[string]any{}
	if ic.GuidanceID != "" {
		md["guidance_id"] = ic.GuidanceID
	}
	if ic.InputDigest != "" {
		md["input_digest"] = ic.InputDigest
	}
	if ic.ExecutionFence != nil {
		md["execution_fence"] = ic.ExecutionFence
	}
	return md
}
