// Type-checked by e2e/copilotkit_react_test.go (tsc --noEmit): the
// declarations of @iac-code-agui/protocol compile and say what the server
// accepts.
import type {
  ForwardedProps, Interrupt, PermissionAnswer, QuestionAnswer, DeploymentConfirmationAnswer,
  IacCodeCustomEvents, IacCodeSessionV1, PipelineActivityContent, ResumeEntry,
} from "@iac-code-agui/protocol";
import { CUSTOM_EVENT_NAMES, PIPELINE_ACTIVITY_TYPE, schemas } from "@iac-code-agui/protocol";

export const props: ForwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "inv-1", cwd: "/w", runMode: "pipeline" } };
// @ts-expect-error rosInvocationId is required
export const missing: ForwardedProps = { iacCode: { schemaVersion: 1, cwd: "/w" } };
// @ts-expect-error unknown keys are refused
export const unknownKey: ForwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "i", cwd: "/w", executionFence: 1 } };

export const allow: PermissionAnswer = { decision: "allow_once" };
// @ts-expect-error only allow_once or deny
export const always: PermissionAnswer = { decision: "always" };
export const free: QuestionAnswer = { freeText: "Use the cheapest region" };
// @ts-expect-error a question's free-text answer is freeText, not text
export const text: QuestionAnswer = { text: "x" };
export const deploy: DeploymentConfirmationAnswer = { selectedId: "confirm", parameter_overrides: { InstanceCount: 2 } };
export const entry: ResumeEntry = { interruptId: "ask-1", status: "resolved", payload: free };

export function describe(it: Interrupt): string {
  switch (it.metadata.kind) {
    case "permission":
      return `${it.metadata.toolUseId} ${it.reason}`;
    default:
      return it.metadata.standardOptions.map((o) => o.title).join(", ");
  }
}

export function onCustom<N extends keyof IacCodeCustomEvents>(name: N, value: IacCodeCustomEvents[N]): string | undefined {
  if (name === "iac-code.session.v1") return (value as IacCodeSessionV1).executionId;
  return undefined;
}

export const activity = (c: PipelineActivityContent): string => `${PIPELINE_ACTIVITY_TYPE} ${c.pipelineRunId}`;
export const names: readonly string[] = CUSTOM_EVENT_NAMES;
export const files: string[] = Object.keys(schemas);
