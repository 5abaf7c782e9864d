import { describe, expect, it, vi } from "vitest";
import { YoiError } from "./yoi-error.ts";

/** A subclass written the way every yoi error class is. */
class SampleError extends YoiError<"one" | "two"> {
  static override readonly marker: symbol = Symbol.for("yoi.error.test.SampleError");
  override readonly name = "SampleError";
}

/** A subclass without a marker of its own: recognised as its parent. */
class NarrowerError extends SampleError {
  readonly detail = "more";
}

/** A subclass with its own marker: recognised as itself and as its parent. */
class SpecialError extends SampleError {
  static override readonly marker: symbol = Symbol.for("yoi.error.test.SpecialError");
}

describe("YoiError", () => {
  it("keeps code, message, name and cause", () => {
    const cause = new Error("disk gone");
    const error = new SampleError("two", "could not write", { cause });
    expect(error.code).toBe("two");
    expect(error.message).toBe("could not write");
    expect(error.name).toBe("SampleError");
    expect(error.cause).toBe(cause);
    expect(String(error)).toBe("SampleError: could not write");
    expect(error.stack).toContain("could not write");
  });

  it("has no cause property when none is given, and its markers do not show", () => {
    const error = new SampleError("one", "m");
    expect(Object.hasOwn(new YoiError("x", "m"), "cause")).toBe(false);
    expect(Object.keys(error)).toEqual(["name", "code"]);
    expect({ ...error }).toEqual({ name: "SampleError", code: "one" });
  });

  it("recognises its own class, subclasses and the base; nothing else", () => {
    const sample = new SampleError("one", "m");
    expect(SampleError.isInstance(sample)).toBe(true);
    expect(YoiError.isInstance(sample)).toBe(true);
    expect(SampleError.isInstance(new NarrowerError("one", "m"))).toBe(true);
    expect(SampleError.isInstance(new SpecialError("one", "m"))).toBe(true);
    expect(SpecialError.isInstance(new SpecialError("one", "m"))).toBe(true);
    expect(SpecialError.isInstance(sample)).toBe(false);
    expect(SampleError.isInstance(new YoiError("one", "m"))).toBe(false);
    for (const other of [new Error("m"), { code: "one", message: "m" }, null, undefined, "one", 1]) {
      expect(YoiError.isInstance(other)).toBe(false);
      expect(SampleError.isInstance(other)).toBe(false);
    }
  });

  it("recognises an error made by another copy of the module, which instanceof does not", async () => {
    vi.resetModules();
    const copy = (await import("./yoi-error.ts")) as typeof import("./yoi-error.ts");
    expect(copy.YoiError).not.toBe(YoiError);
    const fromCopy = new copy.YoiError("x", "from the other copy");
    expect(fromCopy instanceof YoiError).toBe(false);
    expect(YoiError.isInstance(fromCopy)).toBe(true);
    expect(copy.YoiError.isInstance(new SampleError("one", "m"))).toBe(true);
  });
});
