import { describe, expect, it } from "vitest";
import { errorMessage } from "./error-message.ts";

describe("errorMessage", () => {
  it("gives an Error's message without its name", () => {
    expect(errorMessage(new TypeError("bad input"))).toBe("bad input");
    expect(errorMessage(Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" }))).toBe(
      "EACCES: permission denied",
    );
  });

  it("reads the message of an error-like object (another realm, a plain rejection)", () => {
    expect(errorMessage({ message: "from a worker", code: "E" })).toBe("from a worker");
  });

  it("gives the string form of anything else", () => {
    expect(errorMessage("plain text")).toBe("plain text");
    expect(errorMessage(42)).toBe("42");
    expect(errorMessage(undefined)).toBe("undefined");
    expect(errorMessage(null)).toBe("null");
    expect(errorMessage({ message: 7 })).toBe("[object Object]");
  });

  it("does not throw for a value that has no string form", () => {
    expect(errorMessage(Object.create(null))).toBe("[object Object]");
  });
});
