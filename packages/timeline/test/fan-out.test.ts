import { describe, expect, it } from "vitest";
import { Timeline } from "../src/index.ts";
import { ev } from "./helpers.ts";

describe("fan-out", () => {
  function timeline(): Timeline {
    return new Timeline();
  }

  it("delivers in registration order, isolates a throwing handler and keeps `this`", () => {
    const t = timeline();
    const seen: string[] = [];
    class Upper {
      readonly name = "upper";
      prefix = "U:";
      onEvent(_scope: undefined, e: { phase: string; text?: string }): void {
        if (e.phase === "delta") seen.push(this.prefix + e.text);
      }
    }
    t.on("text", {
      name: "boom",
      onEvent: (_s, e) => {
        if (e.phase === "delta") throw new Error("boom");
      },
    });
    t.on("text", new Upper());
    t.on("ping", {
      name: "p1",
      onEvent: () => {
        throw new Error("p1");
      },
    });
    t.on("ping", { name: "p2", onEvent: () => seen.push("ping") });
    for (const e of [ev.textStart(0), ev.text(0, "a"), ev.ping(), ev.text(0, "b"), ev.textStop(0)])
      t.dispatch(e);
    expect(seen).toEqual(["U:a", "ping", "U:b"]);
    expect(t.handlerErrors.map((e) => `${e.handler}/${e.kind}/${e.phase ?? "-"}`)).toEqual([
      "boom/text/delta",
      "p1/ping/-",
    ]);
  });

  it("handles many handlers of one kind (beyond the unrolled limit)", () => {
    const t = timeline();
    const counts = new Array<number>(40).fill(0);
    for (let i = 0; i < 40; i++) {
      t.on("text", {
        name: `h${i}`,
        createScope: () => ({ n: 0 }),
        onEvent(scope, e) {
          if (e.phase === "delta") scope.n++;
          if (e.phase === "stop") counts[i] = scope.n;
        },
      });
    }
    for (const e of [ev.textStart(0), ev.text(0, "a"), ev.text(0, "b"), ev.textStop(0)]) t.dispatch(e);
    expect(counts).toEqual(new Array(40).fill(2));
  });
});
