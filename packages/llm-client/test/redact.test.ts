/**
 * The one redactor: keys, custom header values and credentials in URLs are
 * masked in every message the client produces, and a URL whose credentials
 * the server rejects is not retried.
 */

import { errorMessage } from "@yoi/manifest/errors";
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderKind } from "../src/item.ts";
import {
  clearRegisteredSecrets,
  hasUrlCredentials,
  redactDeep,
  redactedJson,
  redactSecrets,
  registerClientSecrets,
  registerSecret,
} from "../src/redact.ts";
import { startScriptedServer, WIRE_FORMATS } from "../src/testing/scripted-server.ts";
import { clientFor, collect, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  clearRegisteredSecrets();
});

describe("redactSecrets", () => {
  it("masks credentials inside URLs", () => {
    expect(redactSecrets("GET https://alice:s3cr3t-pw@proxy.example/v1/chat failed")).toBe(
      "GET https://<redacted>@proxy.example/v1/chat failed",
    );
    expect(redactSecrets("http://h/v1?api-key=abcdef123&x=1&token=tok-999#f")).toBe(
      "http://h/v1?api-key=<redacted>&x=1&token=<redacted>#f",
    );
    expect(redactSecrets("https://g.example/v1beta/models?key=AIzaNotReallyAKey")).toBe(
      "https://g.example/v1beta/models?key=<redacted>",
    );
    expect(redactSecrets("http://127.0.0.1:8080/v1 is fine")).toBe("http://127.0.0.1:8080/v1 is fine");
  });

  it("masks key-shaped strings and registered values wherever they appear", () => {
    expect(redactSecrets("bad key sk-proj-abcdefghijkl")).toBe("bad key <redacted>");
    expect(redactSecrets("Authorization: Bearer abc.def.ghi.jkl")).toBe("Authorization: Bearer <redacted>");
    registerSecret("custom-header-value-42");
    registerSecret("1"); // too short to register: would garble every number
    expect(redactSecrets('header "custom-header-value-42" rejected; code 1')).toBe(
      'header "<redacted>" rejected; code 1',
    );
    expect(redactDeep({ a: ["custom-header-value-42"], n: 3 })).toEqual({ a: ["<redacted>"], n: 3 });
  });

  it("redactedJson: the JSON of the redacted value, without changing the value", () => {
    registerSecret("custom-header-value-42");
    const record = {
      v: 1,
      item: { type: "tool_result", output: "token custom-header-value-42 here", images: [] },
      list: ["plain", "Bearer abcdefghijklmnop", 3, null, true],
      when: new Date(0),
      skipped: undefined,
    };
    const before = structuredClone(record);
    const json = redactedJson(record);
    expect(JSON.parse(json)).toEqual({
      v: 1,
      item: { type: "tool_result", output: "token <redacted> here", images: [] },
      list: ["plain", "Bearer <redacted>", 3, null, true],
      when: "1970-01-01T00:00:00.000Z",
    });
    expect(record).toEqual(before);
    // Nothing to redact: the same text JSON.stringify gives.
    const clean = { a: [1, { b: "two" }], c: "three" };
    expect(redactedJson(clean)).toBe(JSON.stringify(clean));
    expect(redactedJson("custom-header-value-42")).toBe('"<redacted>"');
    expect(redactedJson(undefined)).toBe("null");
  });

  it("registers a client's key, header values and URL credentials", () => {
    registerClientSecrets({
      apiKey: "plain-key-without-prefix",
      headers: { "x-gateway-token": "gw-token-value" },
      baseURL: "https://user:pass-word@gw.example/v1?api_key=qkey-123456",
    });
    const text = "plain-key-without-prefix gw-token-value pass-word qkey-123456";
    expect(redactSecrets(text)).toBe("<redacted> <redacted> <redacted> <redacted>");
    expect(hasUrlCredentials("https://user:pw@h/v1")).toBe(true);
    expect(hasUrlCredentials("https://h/v1?key=abc")).toBe(true);
    expect(hasUrlCredentials("https://h/v1")).toBe(false);
  });
});

describe("client messages are redacted and rejected credentials are not retried", () => {
  for (const provider of Object.keys(WIRE_FORMATS) as ProviderKind[]) {
    it(provider, async () => {
      const header = "hdr-secret-0xC0FFEE";
      const s = await startScriptedServer({
        provider,
        script: () => ({
          type: "error",
          status: 401,
          // A server that echoes what it got: the message must still not show it.
          message: `invalid credentials for ${header} at https://bob:hunter22@gw/v1?api-key=k3y-zzz`,
        }),
      });
      servers.push(s);
      const url = new URL(s.baseURL);
      // Key-bearing query parameters are an OpenAI-compatible gateway habit (Azure's api-key).
      if (provider.startsWith("openai")) url.searchParams.set("api-key", "k3y-zzz");
      const { client } = clientFor(provider, url.toString(), { headers: { "x-gw": header } });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("auth");
      const text = JSON.stringify(r.events);
      for (const secret of [header, "hunter22", "k3y-zzz"]) expect(text).not.toContain(secret);
      expect(s.requests).toHaveLength(1);
    });
  }

  it("a base URL with user:password@ is refused at once, without showing the password", () => {
    expect(() => clientFor("openai-chat", "http://bob:hunter22@127.0.0.1:9/v1")).toThrow(
      /user:password@ credentials.*headers instead/,
    );
    try {
      clientFor("openai-chat", "http://bob:hunter22@127.0.0.1:9/v1");
    } catch (error) {
      expect(errorMessage(error)).not.toContain("hunter22");
    }
  });
});
