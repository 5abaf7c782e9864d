import { describe, expect, it } from "vitest";
import { yoiCacheDir } from "./cache-dir.ts";

describe("yoiCacheDir", () => {
  it("is $XDG_CACHE_HOME/yoi when XDG_CACHE_HOME is absolute", () => {
    expect(yoiCacheDir({ XDG_CACHE_HOME: "/var/cache/me", HOME: "/home/me" })).toBe("/var/cache/me/yoi");
  });

  it("ignores a relative or empty XDG_CACHE_HOME (the XDG spec calls it invalid) and uses ~/.cache/yoi", () => {
    expect(yoiCacheDir({ XDG_CACHE_HOME: "cache", HOME: "/home/me" })).toBe("/home/me/.cache/yoi");
    expect(yoiCacheDir({ XDG_CACHE_HOME: "", HOME: "/home/me" })).toBe("/home/me/.cache/yoi");
  });
});
