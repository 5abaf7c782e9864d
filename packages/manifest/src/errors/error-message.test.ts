import { describe, expect, it } from "vitest";
import { errorMessage, rootCauseMessage } from "./error-message.ts";

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

describe("rootCauseMessage", () => {
  /** What a provider SDK raises when fetch could not connect: its own words, fetch's, then the system's. */
  const wrapped = (reason: Error) =>
    new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: reason }) });

  it("reaches the system's reason under an SDK's and fetch's wrappers", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8080"), { code: "ECONNREFUSED" });
    expect(rootCauseMessage(wrapped(refused))).toBe("connect ECONNREFUSED 127.0.0.1:8080");
    // fetch refuses some ports itself (6000, 10080, ...), with nothing but this to say so.
    expect(rootCauseMessage(wrapped(new Error("bad port")))).toBe("bad port");
  });

  it("adds the code a message leaves out, and keeps only the first line", () => {
    const tls = Object.assign(new Error("40ADD3:error:0A00010B:SSL routines::wrong version number:\n"), {
      code: "ERR_SSL_WRONG_VERSION_NUMBER",
    });
    expect(rootCauseMessage(wrapped(tls))).toBe(
      "40ADD3:error:0A00010B:SSL routines::wrong version number: (ERR_SSL_WRONG_VERSION_NUMBER)",
    );
    expect(rootCauseMessage(wrapped(Object.assign(new Error(""), { code: "ECONNRESET" })))).toBe(
      "ECONNRESET",
    );
  });

  it("speaks through the first error of an AggregateError that has no message", () => {
    const both = new AggregateError(
      [
        Object.assign(new Error("connect ECONNREFUSED ::1:8080"), { code: "ECONNREFUSED" }),
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8080"), { code: "ECONNREFUSED" }),
      ],
      "",
    );
    expect(rootCauseMessage(wrapped(both))).toBe("connect ECONNREFUSED ::1:8080");
  });

  it("keeps the error's own message when nothing under it says more, and survives a loop", () => {
    expect(rootCauseMessage(new Error("Request timed out."))).toBe("Request timed out.");
    expect(rootCauseMessage(new Error("outer", { cause: new Error("") }))).toBe("outer");
    expect(rootCauseMessage("plain")).toBe("plain");
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(["a", "b"]).toContain(rootCauseMessage(a));
  });
});
