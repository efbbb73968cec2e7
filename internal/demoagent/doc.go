// Package demoagent is the embedded iac-code-compatible A2A 1.0 agent: a
// hand-written JSON-RPC + SSE server that behaves like `iac-code a2a` on the
// wire (upstream.md §9) with scripted, deterministic IaC content, so the
// adapter runs and is tested end to end with no Python, no LLM and no cloud.
//
// It owns: POST / (SendStreamingMessage, SendMessage, GetTask, CancelTask,
// SubscribeToTask, ListTasks), GET /health, GET
// /.well-known/agent-card.json, GET /iac-code/pipeline/state and POST
// /iac-code/session/ensure-restored, the session-handoff service under
// /iac-code/handoff/ when Options.Handoff is set (handoff.go), bearer
// authentication on every route,
// and in-memory tasks, contexts and pipeline journals, with their retention:
// it is the product's default upstream and runs for weeks, so idle tasks
// and contexts are evicted past Options limits (retention.go) while a task
// that runs or waits for an input is kept. With Options.BackupDir it also
// owns a session backup directory shared with other agents, the way
// iac-code replicas share IAC_CODE_CONFIG_BACKUP_DIR (backup.go,
// restore.go).
//
// With Options.TracerProvider it continues its callers' traces (trace.go).
//
// It must not import the adapter's other internal packages (internal/fence
// aside: the writer fence's files are shared with the adapter, as iac-code's
// handoff service shares them), write to disk anything but that backup
// directory and, with Options.Handoff, the handoff store, its staging
// directory, the fence and the thread files it hands over, log or back up secrets (llm_headers
// values, API keys, AccessKey secrets, STS and bearer tokens) or message
// text, or carry switches only tests use: recording calls belongs to the
// demoagenttest sub-package.
//
// It does not use the SDK's a2asrv: iac-code's quirks (plain-JSON errors
// before the first event, CRLF framing, object error data, pendingPermissions
// in task metadata, numbers as doubles, permission replies answered on their
// own stream) are simpler to reproduce by hand (dependencies.md §1.4, §1.6).
//
// Behaviours are chosen from the user's text (case-insensitive; the first
// matching row wins):
//
//	keyword                           behaviour
//	recoverable                       -32602 "Pipeline already running…" with data.recoverableTaskId (kinds_more.go)
//	mcp                               mcpWarning + mcpStatus (pipeline mode: an mcp_status envelope)
//	backup blocked                    backupBlocked INPUT_REQUIRED (pipeline mode: backup_blocked, any text continues)
//	hand over | handover              pause, its end of turn held until a handoff prepare (handover.go)
//	pause                             pipeline; pipeline_pause_confirmation without input; "continue" or cancel
//	flood <N>                         N one-character text deltas, no delay (N ≤ 1,000,000; default 1000)
//	cancel me                         a delta every 200 ms until CancelTask
//	stall                             SUBMITTED, WORKING, then nothing until cancelled
//	slow                              8 deltas 500 ms apart, then the normal end of turn
//	retryable                         INPUT_REQUIRED "A temporary error occurred. Please retry." + error metadata
//	stream error                      WORKING, then an SSE "event: error" frame (-32603)
//	fail                              FAILED with a sanitised provider message + error metadata
//	sideband | candidate permission   pipeline; candidate-scope permission answered by SendMessage (permission_ack)
//	pipeline permission               pipeline; parent-scope permission_requested (INPUT_REQUIRED, stream open)
//	question                          pipeline; ask_user_question, stream ends; text answer resumes
//	resource | select a vswitch       normal; cloud_resource_selection, stream ends; prefixed JSON answer resumes
//	select | candidate                pipeline; candidate_selection, stream ends; text answer resumes
//	deploy (without "permission")     pipeline; deployment_confirmation, stream ends; label or JSON action resumes
//	guided                            pipeline; two steps wait for guidance and apply it
//	pipeline (or run_mode=pipeline)   full pipeline: steps, parallel candidates, batches, gaps, duplicates
//	permission                        normal-mode bash permission, stream kept open for the decision
//	(anything else)                   normal turn writing vpc.yaml (bucket.yaml for "bucket"/"oss", main.tf for "terraform")
//
// Metadata cleanupOnly: true makes a cleanup-only turn (kinds_more.go). A
// message naming a running pipeline task is guidance, whatever its text
// (guidance.go). Independently of the row, "backup not ready" makes the next
// ensure-restored for the session answer 409 SESSION_BACKUP_NOT_READY once
// (then "restored"), and the next sideband SendMessage answer a JSON-RPC
// error with data {"code":"SESSION_BACKUP_NOT_READY","retryable":true} once.
package demoagent
