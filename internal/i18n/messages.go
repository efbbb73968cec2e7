package i18n

// Public English messages. Each is a key of every catalogue; the English text
// is the identity, so a message outside this list passes through T unchanged.

// Command line, YAML and start-up (protocol.md §1.3, §1.5, §1.7, §1.8).
const (
	MsgPortRange           = "--port must be between 1 and 65535."
	MsgStateDirNotString   = "--state-dir must be a string."
	MsgIdleShutdownInvalid = "--idle-shutdown must be a non-negative number."
	MsgA2AURLNotString     = "--a2a-url must be a string."
	MsgAuthTokenNotString  = "auth_token must be a string."
	MsgA2ATokenNotString   = "a2a_token must be a string."
	MsgConfigNotMapping    = "AG-UI config file must contain a YAML mapping."
	MsgConfigLoad          = "Unable to load the AG-UI config file."
	MsgA2AURLNotLoopback   = "The AG-UI adapter may connect only to a loopback A2A HTTP(S) URL."
	// MsgA2AExitedDuringStartup is a format string: its %d is the child's exit
	// code (the original's "{}" placeholder). Use Tf or fmt.Sprintf after T.
	MsgA2AExitedDuringStartup = "The local A2A process exited during startup (exit code %d)."
	MsgA2ANotReady            = "The local A2A process did not become ready in time."
	// The safety options are ours (docs/operations.md, Security): the
	// original has no Host or Origin checks, no CORS and no --demo.
	MsgAllowedHostsInvalid = "--allowed-hosts must be a comma-separated list of host names or IP addresses, without scheme, port or path."
	MsgCORSOriginsInvalid  = "--cors-origins must be a comma-separated list of origins such as http://localhost:5173 (scheme, host and optional port only)."
	MsgDemoInvalid         = "--demo must be true or false (IAC_CODE_AGUI_DEMO: 1 or 0)."
	MsgDemoWithA2AURL      = "--demo and --a2a-url cannot be used together: choose the demo agent or the A2A server at --a2a-url."
	MsgNoUpstream          = "No A2A agent: --a2a-url is not set and iac-code is not on PATH. Point at a running agent with --a2a-url URL, or ask for the scripted demo agent with --demo."
	// MsgLogFormatInvalid is not in the original, which has no --log-format.
	MsgLogFormatInvalid = "--log-format must be text or json."
	// MsgStateStoreInvalid and MsgRedisPasswordOnFlag are ours: the
	// original has no shared store.
	MsgStateStoreInvalid    = "--state-store must be file or a redis:// or rediss:// URL."
	MsgRedisPasswordOnFlag  = "The Redis password cannot be given on the command line; set IAC_CODE_AGUI_REDIS_PASSWORD or redis_password in the YAML file."
	MsgAdvertiseURLInvalid  = "--advertise-url must be an http(s) URL without credentials."
	MsgLeaseTTLInvalid      = "--lease-ttl must be a number of seconds between 1 and 3600."
	MsgReplicaTokenRequired = "Several replicas need IAC_CODE_AGUI_REPLICA_TOKEN (or replica_token in the YAML file)."
	// MsgStreamWriteTimeoutInvalid is ours: the original does not bound a
	// stream's writes.
	MsgStreamWriteTimeoutInvalid = "--stream-write-timeout must be a number of seconds greater than 0."
	// MsgReplicaURLsInvalid is ours too (forwarding only to configured
	// replicas).
	MsgReplicaURLsInvalid = "--replica-urls must list the other replicas' http(s) URLs, without credentials; it is required with --advertise-url and a Redis store."
	// MsgCompatInvalid and MsgPortInUse are ours (--compat; the hint for a
	// busy port). MsgPortInUse's %s is the host:port that is taken.
	MsgCompatInvalid = "--compat must be copilotkit or none."
	MsgPortInUse     = "The address %s is already in use; choose another port with --port (or IAC_CODE_AGUI_PORT)."
	// The A2A profile options are ours (--a2a-profile generic).
	MsgA2AProfileInvalid  = "--a2a-profile must be iac-code or generic."
	MsgA2AURLInvalid      = "--a2a-url must be an http or https URL without credentials, query or fragment."
	MsgGenericNeedsA2AURL = "--a2a-profile generic needs --a2a-url: the URL of a running A2A agent."
)

// HTTP errors before the stream starts (protocol.md §2.3–§2.6).
const (
	MsgUnauthorized = "A valid bearer token is required."
	// MsgHostNotAllowed and MsgOriginNotAllowed are ours: the refusals of
	// the Host and Origin checks.
	MsgHostNotAllowed        = "The request's Host is not one this server answers to (see --allowed-hosts)."
	MsgOriginNotAllowed      = "The request's Origin is not allowed (see --cors-origins)."
	MsgUnsupportedMediaType  = "Content-Type must be application/json."
	MsgRequestTooLarge       = "The AG-UI request body is too large."
	MsgInvalidJSON           = "The request body is not valid JSON."
	MsgInputNotObject        = "RunAgentInput must be a JSON object."
	MsgInvalidEnvelope       = "Invalid AG-UI RunAgentInput envelope."
	MsgInvalidForwardedProps = "Invalid iac-code forwarded properties."
	MsgStateUnavailable      = "The AG-UI adapter state is unavailable."
	MsgExecutionToResumeLost = "The execution to resume is no longer available."
	MsgRunIDUsed             = "The AG-UI run id has already been used."
	MsgThreadBusy            = "The AG-UI thread already has an active run."
	MsgThreadBindingConflict = "The AG-UI thread is already bound to another workspace or caller."
	MsgResumeMismatch        = "The resume request does not match the interrupted run."
	MsgResumeRequired        = "The AG-UI thread is waiting for interrupt responses."
	MsgToolsNotSupported     = "Client-provided tools are not supported."
	MsgCancelTooLarge        = "The cancel request body is too large."
	// MsgRequestTimeout is ours: the original has no body deadline.
	MsgRequestTimeout = "The request body was not received in time."
	// MsgOwnerUnavailable is ours: the original runs one process.
	MsgOwnerUnavailable          = "The replica that serves this thread is not reachable; retry shortly."
	MsgCancelInvalidJSON         = "The cancel request body is not valid JSON."
	MsgCancelNotObject           = "The cancel request must be a JSON object."
	MsgCancelIdentityRequired    = "threadId and rosInvocationId are required."
	MsgExecutionNotFound         = "The execution was not found."
	MsgWorkspaceNotAbsolute      = "The iac-code workspace must be an absolute path."
	MsgWorkspaceInvalid          = "The iac-code workspace is invalid."
	MsgWorkspaceOutsideRoots     = "The iac-code workspace is outside the allowed roots."
	MsgWorkspaceNotDirectory     = "The iac-code workspace is not a directory."
	MsgWorkspaceCreateFailed     = "The iac-code workspace cannot be created."
	MsgUserMessageRequired       = "A new run requires a user message."
	MsgImageMediaTypeUnsupported = "The image media type is not supported."
	MsgImageBase64Invalid        = "The image data is not valid base64."
	MsgImageInvalid              = "The image data is invalid."
	MsgImageTooLarge             = "An image exceeds the maximum size."
	MsgImagesTotalTooLarge       = "The total image content exceeds the maximum size."
	MsgRemoteMediaUnsupported    = "Remote media URLs are not supported."
	MsgContentTypeUnsupported    = "Only text and inline data images are supported."
	MsgContentInvalid            = "The user message content is invalid."
)

// RUN_ERROR messages (protocol.md §2.7, §5.7–§5.9, §9.3).
const (
	MsgTaskIdentityChanged           = "The A2A task identity changed unexpectedly."
	MsgContextIdentityChanged        = "The A2A context identity changed unexpectedly."
	MsgSessionIdentityChanged        = "The iac-code session identity changed unexpectedly."
	MsgInterruptForeign              = "An interrupt belongs to another A2A task/context."
	MsgTaskIdentityMismatch          = "The A2A task identity does not match the interrupted run."
	MsgA2AUnavailable                = "The local A2A execution service is unavailable."
	MsgA2ARejectedInterruptResponse  = "The local A2A execution service rejected the interrupt response."
	MsgPermissionResponseNotAccepted = "The A2A permission response was not accepted."
	MsgInterruptResponseNotAccepted  = "The A2A interrupt response was not accepted."
	MsgA2AExecutionFailed            = "The A2A execution failed."
	MsgCancelled                     = "The execution was cancelled."
	MsgCancelledByInterruptResponse  = "The execution was cancelled by the interrupt response."
	MsgTaskToResumeUnavailable       = "The A2A task to resume is unavailable."
	MsgSessionToResumeUnavailable    = "The iac-code session to resume is unavailable."
	MsgResumeAlreadyApplied          = "The interrupt response has already been applied."
	MsgResumeDuplicateIDs            = "The resume contains duplicate interrupt ids."
	MsgResumeIncomplete              = "The resume must resolve every pending interrupt exactly once."
	MsgUnknownInterrupt              = "The resume references an unknown interrupt."
	MsgPayloadRequired               = "A resolved interrupt requires a payload."
	MsgPayloadInvalid                = "The interrupt response payload is invalid."
	MsgPayloadNoAnswer               = "The interrupt response does not contain an answer."
	MsgMappingCommitFailed           = "The execution mapping could not be committed."
	MsgSessionMappingCommitFailed    = "The execution session mapping could not be committed."
	MsgInterruptedStateCommitFailed  = "The interrupted execution state could not be committed."
	MsgAcceptedResponseCommitFailed  = "The accepted interrupt response could not be committed."
	MsgSessionBackupNotReady         = "Session backup is still synchronizing. Retry after 3 seconds."
	MsgObservedExecutionFailed       = "The observed execution failed."
	// MsgExecutionExpired belongs to the removed interrupt TTL (protocol.md
	// §5.11); our server never emits it, it is kept so a stored message still
	// translates.
	MsgExecutionExpired = "The interrupted execution has expired."
)

// Messages the sources use without quoting their text (protocol.md §2.7 "message
// not given"). These wordings are ours.
const (
	// MsgResourceSelectorInvalid: A2A_PROTOCOL_ERROR for a resource selector
	// without an id or a tool-use id.
	MsgResourceSelectorInvalid = "The resource selection request is missing its identity."
	// MsgResourceLabelTooLong: RESUME_PAYLOAD_INVALID for a label over 1024
	// characters.
	MsgResourceLabelTooLong = "The resource selection label is too long."
	// MsgResumeReconcileCommitFailed: STATE_PERSISTENCE_FAILED for a failed
	// write during resume reconciliation.
	MsgResumeReconcileCommitFailed = "The resumed execution state could not be committed."
	// MsgCancelNotCommitted: STATE_PERSISTENCE_FAILED (HTTP 503) when the
	// cancellation extension cannot persist its result (protocol.md §12.9).
	MsgCancelNotCommitted = "The cancellation could not be committed."
	// MsgShuttingDown: RUN_ERROR ADAPTER_SHUTTING_DOWN, ours (issue 29):
	// a run the server ended because it stops; the thread stays resumable.
	MsgShuttingDown = "The AG-UI adapter is shutting down; send the request again with a new run id."
)

// Hints, ours (issue 29): the error envelope's hint member (protocol.md
// §2.4) says what to do about a refusal whose message cannot (the
// message is the spec's).
const (
	MsgHintRosInvocationMismatch = "Send the rosInvocationId of the run that raised the interrupts; keep it together with the threadId across page reloads."
	MsgHintRunIDReused           = "Each run needs a new runId, a resume too. CopilotKit reuses the interrupted run's id for its resume: start the server with --compat copilotkit."
	MsgHintRunIDReusedCompat     = "Send the resume with a new runId: the interrupted run's id is accepted for its resume only until the server restarts, and only when the resume answers every pending interrupt."
)

// Interrupt fallback messages (protocol.md §5.2); they use the interrupt
// projection's own language.
const (
	MsgPermissionRequired = "Permission required"
	MsgInputRequired      = "Input required"
)

// Messages returns every Msg… constant in declaration order (a fresh copy).
func Messages() []string { return append([]string(nil), messages...) }

var messages = []string{
	MsgPortRange, MsgStateDirNotString, MsgIdleShutdownInvalid, MsgA2AURLNotString,
	MsgAuthTokenNotString, MsgA2ATokenNotString, MsgConfigNotMapping, MsgConfigLoad,
	MsgA2AURLNotLoopback, MsgA2AExitedDuringStartup, MsgA2ANotReady,
	MsgAllowedHostsInvalid, MsgCORSOriginsInvalid, MsgDemoInvalid, MsgDemoWithA2AURL, MsgNoUpstream,
	MsgLogFormatInvalid,
	MsgStateStoreInvalid, MsgRedisPasswordOnFlag,
	MsgAdvertiseURLInvalid, MsgLeaseTTLInvalid, MsgReplicaTokenRequired, MsgStreamWriteTimeoutInvalid, MsgReplicaURLsInvalid,
	MsgCompatInvalid, MsgPortInUse,
	MsgA2AProfileInvalid, MsgA2AURLInvalid, MsgGenericNeedsA2AURL,

	MsgUnauthorized, MsgHostNotAllowed, MsgOriginNotAllowed, MsgUnsupportedMediaType, MsgRequestTooLarge, MsgInvalidJSON,
	MsgInputNotObject, MsgInvalidEnvelope, MsgInvalidForwardedProps, MsgStateUnavailable,
	MsgExecutionToResumeLost, MsgRunIDUsed, MsgThreadBusy, MsgThreadBindingConflict,
	MsgResumeMismatch, MsgResumeRequired, MsgToolsNotSupported, MsgCancelTooLarge, MsgRequestTimeout, MsgOwnerUnavailable,
	MsgCancelInvalidJSON, MsgCancelNotObject, MsgCancelIdentityRequired, MsgExecutionNotFound,
	MsgWorkspaceNotAbsolute, MsgWorkspaceInvalid, MsgWorkspaceOutsideRoots,
	MsgWorkspaceNotDirectory, MsgWorkspaceCreateFailed, MsgUserMessageRequired,
	MsgImageMediaTypeUnsupported, MsgImageBase64Invalid, MsgImageInvalid, MsgImageTooLarge,
	MsgImagesTotalTooLarge, MsgRemoteMediaUnsupported, MsgContentTypeUnsupported,
	MsgContentInvalid,

	MsgTaskIdentityChanged, MsgContextIdentityChanged, MsgSessionIdentityChanged,
	MsgInterruptForeign, MsgTaskIdentityMismatch, MsgA2AUnavailable,
	MsgA2ARejectedInterruptResponse, MsgPermissionResponseNotAccepted,
	MsgInterruptResponseNotAccepted, MsgA2AExecutionFailed, MsgCancelled,
	MsgCancelledByInterruptResponse, MsgTaskToResumeUnavailable,
	MsgSessionToResumeUnavailable, MsgResumeAlreadyApplied, MsgResumeDuplicateIDs,
	MsgResumeIncomplete, MsgUnknownInterrupt, MsgPayloadRequired, MsgPayloadInvalid,
	MsgPayloadNoAnswer, MsgMappingCommitFailed, MsgSessionMappingCommitFailed,
	MsgInterruptedStateCommitFailed, MsgAcceptedResponseCommitFailed,
	MsgSessionBackupNotReady, MsgObservedExecutionFailed, MsgExecutionExpired,

	MsgResourceSelectorInvalid, MsgResourceLabelTooLong, MsgResumeReconcileCommitFailed,
	MsgCancelNotCommitted, MsgShuttingDown,

	MsgHintRosInvocationMismatch, MsgHintRunIDReused, MsgHintRunIDReusedCompat,

	MsgPermissionRequired, MsgInputRequired,
}
