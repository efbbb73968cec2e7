package demoagent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/fence"
)

// The A2A side of iac-code's session-handoff service (version
// session-handoff-v1; upstream.md §5.5, protocol.md §7.3), reduced to what
// moves an AG-UI session between two agents that share a handoff store
// (HandoffOptions.SharedDir) and a session backup directory (BackupDir):
//
//	capabilities  supported when the shared store and the fence are configured; protocols ["a2a","agui"]
//	prepare       source: the thread file must match the identity and name a task that waits for input or ended;
//	              the fence is quiesced, and the thread file and a receipt are committed to the shared store;
//	              a "hand over" turn held on the task then ends (handover.go)
//	discover      the committed receipt of a migration, if any
//	restore       destination: checks the committed receipt, reserves the fence (WAITING_COMMIT), stages the receipt
//	authorize     destination: copies the thread file into this side's state directory and activates the fence
//	              for the target owner (the epoch moves on)
//	apply-input   destination: ALREADY_APPLIED once the input's guidance id and digest were accepted by this
//	              agent, else NOT_READY agui_input_delivery_required (the adapter delivers AG-UI input itself)
//
// The task itself moves through the session backup (restore.go): the
// destination agent restores a parked pipeline input when the delivered
// answer names it. Receipts hold no message text and no credentials; the
// pending input an orchestrator sends is kept in the receipt as it came.

// HandoffOptions enables the session-handoff service.
type HandoffOptions struct {
	// SharedDir is the handoff store shared by the sandboxes
	// (IAC_CODE_HANDOFF_SHARED_DIR).
	SharedDir string
	// PrivateDir is this side's staging directory
	// (<config>/handoff-prepared).
	PrivateDir string
	// Fence is this side's writer fence, the adapter's.
	Fence *fence.Fence
	// ThreadFile names the AG-UI thread file of a thread id in this side's
	// state directory.
	ThreadFile func(threadID string) (string, error)
}

const handoffVersion = fence.Version

func (a *Agent) handoffEnabled() bool {
	h := a.opts.Handoff
	return h != nil && h.SharedDir != "" && h.PrivateDir != "" && h.Fence.Enabled() && h.ThreadFile != nil
}

// serveHandoff answers /iac-code/handoff/<op>.
func (a *Agent) serveHandoff(w http.ResponseWriter, r *http.Request, op string) {
	if op == "capabilities" {
		ok := a.handoffEnabled()
		protocols := []string{}
		if ok {
			protocols = []string{"a2a", "agui"}
		}
		writeJSON(w, http.StatusOK, map[string]any{"version": handoffVersion, "supported": ok, "protocols": protocols,
			"sourceQuiesce": ok, "immutableSharedCommit": ok, "writerFence": writerFence(ok), "runningControllerTransfer": false,
			"physicalOwnerFence": ok, "guidanceInputJournal": ok})
		return
	}
	var p map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil || p == nil {
		text := "Invalid session handoff identity"
		if op == "apply-input" {
			text = "Invalid handoff input"
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": text})
		return
	}
	if !a.handoffEnabled() {
		writeJSON(w, http.StatusOK, handoffResult("UNSUPPORTED", "handoff_storage_not_configured"))
		return
	}
	var res map[string]any
	var err error
	switch op {
	case "prepare":
		res, err = a.handoffPrepare(p)
	case "discover":
		res, err = a.handoffDiscover(p)
	case "restore":
		res, err = a.handoffRestore(p)
	case "authorize":
		res, err = a.handoffAuthorize(p)
	case "apply-input":
		res, err = a.handoffApply(p)
	}
	switch {
	case errors.Is(err, errHandoffInvalid):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Invalid session handoff identity"})
	case err != nil:
		a.log.Warn("Session handoff failed", "operation", op, "error", err)
		writeJSON(w, http.StatusOK, handoffResult("UNKNOWN", "handoff_operation_unconfirmed"))
	default:
		writeJSON(w, http.StatusOK, res)
	}
}

func writerFence(ok bool) any {
	if ok {
		return "cooperative-runtime-local"
	}
	return nil
}

var errHandoffInvalid = errors.New("invalid session handoff identity")

func handoffResult(status, reason string) map[string]any {
	return map[string]any{"status": status, "reason": reason}
}

// prepareIdentity is the part of a prepare request the demo checks.
type prepareIdentity struct {
	raw                                                     map[string]any
	threadID, executionID, ros, contextID, cwd, migrationID string
	userID                                                  string
	epoch                                                   int64
	source                                                  map[string]any
}

func readIdentity(p map[string]any) (*prepareIdentity, error) {
	if p == nil || p["protocol"] != "agui" {
		return nil, errHandoffInvalid
	}
	id, _ := p["aguiIdentity"].(map[string]any)
	s := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	pi := &prepareIdentity{raw: p, threadID: s(id, "threadId"), executionID: s(id, "executionId"), ros: s(id, "rosInvocationId"),
		contextID: s(p, "contextId"), cwd: s(p, "cwd"), migrationID: s(p, "migrationId"), userID: s(p, "userId")}
	n, _ := p["epoch"].(json.Number)
	pi.epoch, _ = n.Int64()
	src, err := fence.CanonicalOwner(p["source"])
	if err != nil || pi.threadID == "" || pi.executionID == "" || pi.ros == "" || pi.contextID == "" || !filepath.IsAbs(pi.cwd) ||
		pi.migrationID == "" || pi.userID == "" || pi.epoch <= 0 || s(p, "sessionId") == "" || s(p, "backendScope") == "" {
		return nil, errHandoffInvalid
	}
	pi.source = src
	return pi, nil
}

// migrationDir is the migration's directory under root, keyed like
// iac-code's (scope, user, session, migration).
func migrationDir(root string, p map[string]any) string {
	s := func(k string) string { v, _ := p[k].(string); return v }
	sum := sha256.Sum256([]byte(strings.Join([]string{s("backendScope"), s("userId"), s("sessionId"), s("migrationId")}, "\x00")))
	return filepath.Join(root, hex.EncodeToString(sum[:]))
}

func canonicalJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func digestOf(v any) string {
	sum := sha256.Sum256(canonicalJSON(v))
	return hex.EncodeToString(sum[:])
}

// handoffPrepare is the source's prepare.
func (a *Agent) handoffPrepare(p map[string]any) (map[string]any, error) {
	h := a.opts.Handoff
	pi, err := readIdentity(p)
	if err != nil {
		return nil, err
	}
	key := fence.ThreadKey(pi.threadID)
	if owner, err := h.Fence.Owner(key); err != nil {
		return nil, err
	} else if !bytes.Equal(canonicalJSON(owner), canonicalJSON(pi.source)) {
		return handoffResult("NOT_READY", "source_physical_owner_proof_missing"), nil
	}
	dest := migrationDir(h.SharedDir, p)
	if receipt, err := committed(dest); err != nil {
		return nil, err
	} else if receipt != nil {
		return map[string]any{"status": "PREPARED", "receipt": receipt}, nil
	}
	path, err := h.ThreadFile(pi.threadID)
	if err != nil {
		return nil, errHandoffInvalid
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return handoffResult("NOT_READY", "agui_execution_proof_missing"), nil
	}
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return handoffResult("NOT_READY", "agui_execution_proof_missing"), nil
	}
	exec, _ := doc["execution"].(map[string]any)
	taskID, _ := exec["taskId"].(string)
	if taskID == "" {
		taskID, _ = exec["lastTaskId"].(string)
	}
	if taskID == "" {
		return handoffResult("NOT_READY", "agui_actual_task_proof_missing"), nil
	}
	if doc["threadId"] != pi.threadID || doc["contextId"] != pi.contextID || doc["cwd"] != pi.cwd || doc["userId"] != pi.userID ||
		exec["executionId"] != pi.executionID || exec["rosInvocationId"] != pi.ros || (p["taskId"] != nil && p["taskId"] != taskID) {
		return handoffResult("CONFLICT", "agui_execution_binding_changed"), nil
	}
	kind := a.recoveryKind(taskID)
	if kind == "" {
		return handoffResult("NOT_READY", "working_checkpoint_not_transferable"), nil
	}
	if ok, err := h.Fence.Quiesce(key, pi.migrationID, pi.epoch); err != nil {
		return nil, err
	} else if !ok {
		return handoffResult("CONFLICT", "source_epoch_changed"), nil
	}
	// The thread file is read again under the frozen fence: nothing can
	// have written it since.
	if raw, err = os.ReadFile(path); err != nil {
		return nil, err
	}
	receipt := map[string]any{}
	for k, v := range p {
		receipt[k] = v
	}
	manifest := map[string]any{"version": handoffVersion, "identity": p,
		"files": []any{map[string]any{"path": "agui/state.json", "size": len(raw), "sha256": digestOf(json.RawMessage(raw))}}}
	md := digestOf(manifest)
	receipt["taskId"], receipt["version"], receipt["manifestDigest"] = taskID, handoffVersion, md
	receipt["commitId"] = md[:32]
	receipt["backupGeneration"], receipt["businessRevision"] = p["epoch"], 0
	receipt["sourceQuiesced"], receipt["sharedCommitted"], receipt["recoveryKind"] = true, true, kind
	receipt["inputAcceptance"] = a.inputAcceptance(pi.contextID, p)
	if err := writeSnapshot(dest, raw, manifest, receipt); err != nil {
		return nil, err
	}
	// A "hand over" turn held at its checkpoint ends now (handover.go);
	// its thread can no longer be written here.
	a.releaseCheckpoint(taskID)
	return map[string]any{"status": "PREPARED", "receipt": receipt}, nil
}

// recoveryKind is "input_required" for a task waiting for input,
// "terminal" for an ended one, "" for a task still working (or unknown).
func (a *Agent) recoveryKind(taskID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tasks[taskID]
	switch {
	case t == nil:
		return ""
	case t.t.Status.State == stateInputRequired:
		return "input_required"
	case isTerminal(t.t.Status.State):
		return "terminal"
	}
	return ""
}

func writeSnapshot(dest string, thread []byte, manifest, receipt map[string]any) error {
	tmp := dest + ".building"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "agui"), 0o700); err != nil {
		return err
	}
	files := map[string][]byte{"agui/state.json": thread, "manifest.json": canonicalJSON(manifest), "commit.json": canonicalJSON(receipt)}
	for _, name := range []string{"agui/state.json", "manifest.json", "commit.json"} {
		if err := os.WriteFile(filepath.Join(tmp, name), files[name], 0o600); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dest)
}

// committed reads a migration's committed receipt; nil when none.
func committed(dir string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(dir, "commit.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var r map[string]any
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	return r, nil
}

func (a *Agent) handoffDiscover(p map[string]any) (map[string]any, error) {
	req, _ := p["request"].(map[string]any)
	if _, err := readIdentity(req); err != nil {
		return nil, err
	}
	r, err := committed(migrationDir(a.opts.Handoff.SharedDir, req))
	if err != nil || r == nil {
		return handoffResult("NOT_READY", "predecessor_checkpoint_missing"), err
	}
	return map[string]any{"status": "PREPARED", "receipt": r}, nil
}

// destination reads a restore or authorize request: the receipt as
// committed in the shared store and the target owner.
func (a *Agent) destination(p map[string]any) (receipt, target map[string]any, status map[string]any, err error) {
	receipt, _ = p["receipt"].(map[string]any)
	if _, err := readIdentity(receipt); err != nil {
		return nil, nil, nil, err
	}
	target, err = fence.CanonicalOwner(p["target"])
	if err != nil {
		return nil, nil, nil, errHandoffInvalid
	}
	src, _ := fence.CanonicalOwner(receipt["source"])
	if bytes.Equal(canonicalJSON(src), canonicalJSON(target)) {
		return nil, nil, handoffResult("CONFLICT", "destination_is_source_owner"), nil
	}
	c, err := committed(migrationDir(a.opts.Handoff.SharedDir, receipt))
	switch {
	case err != nil:
		return nil, nil, nil, err
	case c == nil:
		return nil, nil, handoffResult("NOT_READY", "shared_commit_not_visible"), nil
	case !bytes.Equal(canonicalJSON(c), canonicalJSON(receipt)):
		return nil, nil, handoffResult("CONFLICT", "shared_receipt_changed"), nil
	}
	return receipt, target, nil, nil
}

func epochOf(receipt map[string]any) int64 {
	n, _ := receipt["epoch"].(json.Number)
	e, _ := n.Int64()
	return e
}

func threadOf(receipt map[string]any) string {
	id, _ := receipt["aguiIdentity"].(map[string]any)
	s, _ := id["threadId"].(string)
	return s
}

func (a *Agent) handoffRestore(p map[string]any) (map[string]any, error) {
	h := a.opts.Handoff
	receipt, target, status, err := a.destination(p)
	if err != nil || status != nil {
		return status, err
	}
	stage := migrationDir(h.PrivateDir, receipt)
	want := canonicalJSON(map[string]any{"receipt": receipt, "target": target})
	if b, err := os.ReadFile(filepath.Join(stage, "destination.json")); err == nil {
		if !bytes.Equal(b, want) {
			return handoffResult("CONFLICT", "destination_reservation_changed"), nil
		}
	} else {
		mig, _ := receipt["migrationId"].(string)
		if err := h.Fence.WaitCommit(fence.ThreadKey(threadOf(receipt)), mig, epochOf(receipt)); err != nil {
			return handoffResult("CONFLICT", "handoff_state_unverifiable"), nil
		}
		if err := os.MkdirAll(stage, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(stage, "destination.json"), want, 0o600); err != nil {
			return nil, err
		}
	}
	return map[string]any{"status": "RESTORED", "receipt": receipt, "target": target}, nil
}

func (a *Agent) handoffAuthorize(p map[string]any) (map[string]any, error) {
	h := a.opts.Handoff
	commitID, _ := p["commitId"].(string)
	if commitID == "" {
		return nil, errHandoffInvalid
	}
	receipt, target, status, err := a.destination(p)
	if err != nil || status != nil {
		return status, err
	}
	stage := migrationDir(h.PrivateDir, receipt)
	b, err := os.ReadFile(filepath.Join(stage, "destination.json"))
	if err != nil {
		return handoffResult("NOT_READY", "destination_not_prepared"), nil
	}
	if !bytes.Equal(b, canonicalJSON(map[string]any{"receipt": receipt, "target": target})) {
		return handoffResult("CONFLICT", "destination_reservation_changed"), nil
	}
	auth := canonicalJSON(map[string]any{"receipt": receipt, "target": target, "commitId": commitID})
	if prev, err := os.ReadFile(filepath.Join(stage, "authorization.json")); err == nil && !bytes.Equal(prev, auth) {
		return handoffResult("CONFLICT", "handoff_state_unverifiable"), nil
	}
	threadID := threadOf(receipt)
	snapshot, err := os.ReadFile(filepath.Join(migrationDir(h.SharedDir, receipt), "agui", "state.json"))
	if err != nil {
		return handoffResult("NOT_READY", "handoff_files_not_visible"), nil
	}
	path, err := h.ThreadFile(threadID)
	if err != nil {
		return nil, errHandoffInvalid
	}
	if cur, err := os.ReadFile(path); err == nil && !bytes.Equal(cur, snapshot) {
		return handoffResult("CONFLICT", "handoff_state_unverifiable"), nil
	} else if err != nil {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, snapshot, 0o600); err != nil {
			return nil, err
		}
	}
	mig, _ := receipt["migrationId"].(string)
	if err := h.Fence.Authorize(fence.ThreadKey(threadID), mig, epochOf(receipt), commitID, target); err != nil {
		return handoffResult("CONFLICT", "handoff_state_unverifiable"), nil
	}
	if err := os.WriteFile(filepath.Join(stage, "authorization.json"), auth, 0o600); err != nil {
		return nil, err
	}
	return map[string]any{"status": "AUTHORIZED", "receipt": receipt, "target": target, "commitId": commitID}, nil
}

func (a *Agent) handoffApply(p map[string]any) (map[string]any, error) {
	h := a.opts.Handoff
	receipt, target, status, err := a.destination(p)
	if err != nil || status != nil {
		return status, err
	}
	digest, _ := p["inputDigest"].(string)
	guidanceID, _ := receipt["guidanceId"].(string)
	if digest == "" || digest != receipt["inputDigest"] || guidanceID == "" {
		return handoffResult("CONFLICT", "guidance_input_identity_changed"), nil
	}
	pending, _ := p["pendingInput"].(map[string]any)
	identity := map[string]any{}
	for k, v := range pending {
		if k != "image_parts" {
			identity[k] = v
		}
	}
	if !bytes.Equal(canonicalJSON(identity), canonicalJSON(receipt["pendingInput"])) {
		return handoffResult("CONFLICT", "guidance_payload_changed"), nil
	}
	b, err := os.ReadFile(filepath.Join(migrationDir(h.PrivateDir, receipt), "authorization.json"))
	if err != nil {
		return handoffResult("NOT_READY", "destination_not_authorized"), nil
	}
	var auth map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&auth) != nil || !bytes.Equal(canonicalJSON(auth["target"]), canonicalJSON(target)) {
		return handoffResult("CONFLICT", "input_destination_identity_changed"), nil
	}
	contextID, _ := receipt["contextId"].(string)
	ack := map[string]any{"status": "ALREADY_APPLIED", "inputDigest": digest, "taskId": receipt["taskId"], "contextId": contextID,
		"executionId": receipt["aguiIdentity"].(map[string]any)["executionId"]}
	switch a.journalState(contextID, guidanceID, digest) {
	case journalApplied:
		return ack, nil
	case journalConflict:
		return handoffResult("CONFLICT", "handoff_input_unverifiable"), nil
	}
	if receipt["inputAcceptance"] == "UNKNOWN" {
		return handoffResult("UNKNOWN", "guidance_acceptance_unknown"), nil
	}
	if receipt["recoveryKind"] == "terminal" {
		return handoffResult("NOT_READY", "guidance_execution_already_terminal"), nil
	}
	// The demo never delivers AG-UI input itself: the adapter does, with
	// its own admission and fence (protocol.md §7.3).
	return handoffResult("NOT_READY", "agui_input_delivery_required"), nil
}

// inputAcceptance is the receipt's inputAcceptance for a prepare request.
func (a *Agent) inputAcceptance(contextID string, p map[string]any) string {
	gid, _ := p["guidanceId"].(string)
	digest, _ := p["inputDigest"].(string)
	if gid == "" || digest == "" {
		return "UNKNOWN"
	}
	if a.journalState(contextID, gid, digest) == journalApplied {
		return "APPLIED"
	}
	return "NOT_APPLIED_CONFIRMED"
}
