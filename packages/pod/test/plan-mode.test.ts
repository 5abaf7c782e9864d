/**
 * Plan mode hands over: exit_plan_mode is offered only in plan mode, its
 * call asks the user every time, an approval switches to the chosen mode,
 * a rejection's feedback reaches the model and plan mode stays; with no
 * one to ask it is denied with a message saying the plan is the answer.
 * And the Shift+Tab cycle.
 */
import { describe, expect, it } from "vitest";
import { PermissionPolicy, type PermissionPrompt } from "../src/permissions/policy.ts";
import { exitPlanModeTool } from "../src/tools/exit-plan-mode.ts";

const call = (callId = "p1") => ({ callId, name: "exit_plan_mode", args: { plan: "1. edit a.ts" } });

describe("exit_plan_mode through the permission policy", () => {
  it("an approval switches to the chosen mode and the tool says so; it is asked every time", async () => {
    const asked: string[] = [];
    const ask: PermissionPrompt = async (request) => {
      asked.push(request.tool);
      return { action: "approve_plan", mode: "acceptEdits" };
    };
    const policy = new PermissionPolicy({}, { mode: "plan", ask });
    const tool = exitPlanModeTool(policy);
    const outcome = await policy.check({ ...call(), precheck: async () => undefined });
    expect(outcome).toMatchObject({ action: "allow", by: "user" });
    expect(policy.mode).toBe("acceptEdits");
    expect(await tool.execute({ plan: "x" }, {} as never)).toMatch(
      /^The user approved the plan\. The session is now in acceptEdits mode/,
    );
    // Back in plan mode, the next plan asks again (no "always" for plans).
    policy.setMode("plan");
    await policy.check(call("p2"));
    expect(asked).toEqual(["exit_plan_mode", "exit_plan_mode"]);
  });

  it("a rejection with feedback keeps plan mode and hands the feedback to the model", async () => {
    const policy = new PermissionPolicy(
      {},
      { mode: "plan", ask: async () => ({ action: "deny", reason: "keep the old API" }) },
    );
    const outcome = await policy.check(call());
    expect(outcome).toMatchObject({ action: "deny", by: "user" });
    expect(policy.mode).toBe("plan");
    expect(PermissionPolicy.denialMessage(outcome)).toBe(
      "The user rejected the plan and said: keep the old API\nYou are still in plan mode. Revise the plan with this in mind and present it again with exit_plan_mode.",
    );
  });

  it("with no one to ask it is denied, plan mode stays, and the model is told to answer with the plan", async () => {
    const policy = new PermissionPolicy(
      { rules: [{ tool: "exit_plan_mode", action: "allow" }] },
      { mode: "plan" },
    );
    const outcome = await policy.check(call());
    expect(outcome).toMatchObject({ action: "deny", by: "no_ui" });
    expect(policy.mode).toBe("plan");
    expect(PermissionPolicy.denialMessage(outcome)).toMatch(/End your turn with the plan as your answer\.$/);
  });

  it("outside plan mode the tool refuses before anyone is asked", async () => {
    let asked = false;
    const ask: PermissionPrompt = async () => {
      asked = true;
      return "allow";
    };
    const policy = new PermissionPolicy({}, { mode: "default", ask });
    const tool = exitPlanModeTool(policy);
    const outcome = await policy.check({
      ...call(),
      precheck: async () => {
        try {
          await tool.check?.({ plan: "x" }, { callId: "p1", signal: new AbortController().signal });
          return undefined;
        } catch (error) {
          return (error as Error).message;
        }
      },
    });
    expect(asked).toBe(false);
    expect(outcome).toMatchObject({ action: "deny", by: "tool" });
    expect(outcome.reason).toMatch(/only for plan mode, and the session is in default mode/);
  });
});

describe("the Shift+Tab cycle", () => {
  const cycle = (policy: PermissionPolicy, steps: number) => {
    const seen: string[] = [policy.mode];
    for (let i = 0; i < steps; i++) {
      policy.setMode(policy.nextMode());
      seen.push(policy.mode);
    }
    return seen;
  };

  it("default → acceptEdits → plan → default, even where bypassPermissions would be allowed", () => {
    const policy = new PermissionPolicy({}, { sandbox: "active" });
    expect(cycle(policy, 4)).toEqual(["default", "acceptEdits", "plan", "default", "acceptEdits"]);
  });

  it("bypassPermissions joins when the session started in it, or with the explicit opt-in", () => {
    const started = new PermissionPolicy({}, { sandbox: "active", mode: "bypassPermissions" });
    expect(cycle(started, 4)).toEqual([
      "bypassPermissions",
      "default",
      "acceptEdits",
      "plan",
      "bypassPermissions",
    ]);
    const optIn = new PermissionPolicy({}, { sandbox: "unavailable", allowUnsandboxedBypass: true });
    expect(cycle(optIn, 4)).toEqual(["default", "acceptEdits", "plan", "bypassPermissions", "default"]);
  });
});
