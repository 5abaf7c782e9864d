import { describe, expect, it } from "vitest";
import { defaultSystem } from "../src/assembly/worker-settings.ts";

describe("defaultSystem", () => {
  it("names the project root alone when it is the whole scope", () => {
    expect(defaultSystem("/p", [])).toContain(
      "Project root: /p. Paths are relative to it; nothing outside it can be read or written.",
    );
  });

  it("names the other writable and read-only directories of the scope", () => {
    const text = defaultSystem("/p", [], { write: ["/p", "/lib"], read: ["/p", "/lib", "/docs"] });
    expect(text).toContain(
      "Project root: /p. Paths are relative to it. Also readable and writable (by absolute path): /lib. Also readable, not writable (by absolute path): /docs. Nothing outside these can be read or written.",
    );
  });

  it("says when the root itself is not writable", () => {
    expect(defaultSystem("/p", [], { write: ["/p/src"], read: ["/p/src", "/p"] })).toContain(
      "Also readable and writable (by absolute path): /p/src. The project root itself is not writable.",
    );
  });
});
