/**
 * The provider SDKs' transport in the bundle (src/startup/provider-fetch.ts):
 * what fetch does that the SDKs rely on, against servers on 127.0.0.1. The
 * SDKs themselves go through it in every black-box test of `yoi -p`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormData, fetch, Headers, ReadableStream, Response } from "../src/startup/provider-fetch.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let seen: Seen[] = [];
let origin = "";
let otherOrigin = "";
let release: (() => void) | undefined;

function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
  const url = new URL(req.url ?? "/", origin);
  switch (url.pathname) {
    case "/echo":
      res.writeHead(201, "Made", { "content-type": "application/json", "x-multi": ["a", "b"] });
      res.end(JSON.stringify({ method: req.method, body }));
      return;
    case "/gzip":
      res.writeHead(200, { "content-encoding": "gzip" });
      res.end(gzipSync("unpacked by gzip"));
      return;
    case "/br":
      res.writeHead(200, { "content-encoding": "br" });
      res.end(brotliCompressSync("unpacked by brotli"));
      return;
    case "/stream":
      // Two events, the second only once the test has read the first.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      release = () => res.end("data: two\n\n");
      return;
    case "/hang":
      res.writeHead(200);
      res.write("partial");
      return;
    case "/torn":
      // Headers and part of a body, then the connection dies.
      res.writeHead(200, req.url?.endsWith("gz") ? { "content-encoding": "gzip" } : {});
      res.write(req.url?.endsWith("gz") ? gzipSync("x".repeat(100)).subarray(0, 20) : "partial");
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    case "/torn-redirect":
      res.writeHead(302, { location: "/echo" });
      res.write("moved");
      res.socket?.destroy();
      return;
    case "/307":
      res.writeHead(307, { location: "/echo" });
      res.end();
      return;
    case "/303":
      res.writeHead(303, { location: "/echo" });
      res.end();
      return;
    case "/away":
      res.writeHead(302, { location: `${otherOrigin}/echo` });
      res.end();
      return;
    case "/loop":
      res.writeHead(302, { location: "/loop" });
      res.end();
      return;
    default:
      res.writeHead(404);
      res.end("no such path");
  }
}

const servers = [createServer(), createServer()];
beforeAll(async () => {
  for (const server of servers) {
    server.on("request", (req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (part: string) => {
        body += part;
      });
      req.on("end", () => handle(req, res, body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  }
  origin = `http://127.0.0.1:${(servers[0]!.address() as AddressInfo).port}`;
  // Another origin: the same kind of server under another host name.
  otherOrigin = `http://localhost:${(servers[1]!.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("fetch over node:http, as the provider SDKs use it", () => {
  it("sends the method, headers and body, and answers status, headers and the body", async () => {
    seen = [];
    const headers = new Headers({ "Content-Type": "application/json", "X-Api-Key": "k" });
    const response = await fetch(`${origin}/echo`, { method: "post", headers, body: '{"a":1}' });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe("Made");
    expect(response.ok).toBe(true);
    expect(response.url).toBe(`${origin}/echo`);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(response.headers.get("x-multi")).toBe("a, b");
    expect(await response.json()).toEqual({ method: "POST", body: '{"a":1}' });
    await expect(response.text()).rejects.toThrow(/already been read/);
    expect(seen[0]!.headers["x-api-key"]).toBe("k");
    expect(seen[0]!.headers["content-length"]).toBe("7");
    expect(seen[0]!.headers["accept-encoding"]).toBe("gzip, deflate, br");
  });

  it("takes headers as a record or pairs, and sends a string body as text when no type is given", async () => {
    seen = [];
    await (await fetch(`${origin}/echo`, { method: "PUT", headers: [["x-one", "1"]], body: "plain" })).text();
    await (await fetch(new URL(`${origin}/echo`), { headers: { "x-two": "2" } })).text();
    expect(seen[0]!.headers["x-one"]).toBe("1");
    expect(seen[0]!.headers["content-type"]).toBe("text/plain;charset=UTF-8");
    expect(seen[1]!.method).toBe("GET");
    expect(seen[1]!.headers["x-two"]).toBe("2");
  });

  it("decodes gzip and brotli bodies", async () => {
    expect(await (await fetch(`${origin}/gzip`)).text()).toBe("unpacked by gzip");
    expect(await (await fetch(`${origin}/br`)).text()).toBe("unpacked by brotli");
  });

  it("hands the body over as it arrives, to an async iterator and to a reader", async () => {
    const iterated = await fetch(`${origin}/stream`);
    const chunks = iterated.body![Symbol.asyncIterator]();
    expect(Buffer.from((await chunks.next()).value as Uint8Array).toString()).toBe("data: one\n\n");
    release?.();
    expect(Buffer.from((await chunks.next()).value as Uint8Array).toString()).toBe("data: two\n\n");
    expect((await chunks.next()).done).toBe(true);

    const read = await fetch(`${origin}/stream`);
    const reader = read.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("data: one\n\n");
    release?.();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("data: two\n\n");
    expect((await reader.read()).done).toBe(true);
    reader.releaseLock();
  });

  it("follows redirects as fetch does, and drops credentials when one leaves the origin", async () => {
    seen = [];
    const kept = await fetch(`${origin}/307`, {
      method: "POST",
      body: "again",
      headers: { "x-api-key": "k" },
    });
    expect(await kept.json()).toEqual({ method: "POST", body: "again" });
    expect(kept.redirected).toBe(true);
    expect(seen[1]!.headers["x-api-key"]).toBe("k");

    const other = await fetch(`${origin}/303`, { method: "POST", body: "dropped" });
    expect(await other.json()).toEqual({ method: "GET", body: "" });

    seen = [];
    const away = await fetch(`${origin}/away`, {
      headers: { authorization: "Bearer secret", "x-api-key": "k", "x-goog-api-key": "g", "x-kept": "1" },
    });
    expect(away.url).toBe(`${otherOrigin}/echo`);
    await away.text();
    const arrived = seen[1]!.headers;
    expect(arrived.authorization).toBeUndefined();
    expect(arrived["x-api-key"]).toBeUndefined();
    expect(arrived["x-goog-api-key"]).toBeUndefined();
    expect(arrived["x-kept"]).toBe("1");

    const manual = await fetch(`${origin}/307`, { redirect: "manual" });
    expect(manual.status).toBe(307);
    expect(manual.headers.get("location")).toBe("/echo");
    await expect(fetch(`${origin}/loop`)).rejects.toThrow(/fetch failed/);
  });

  it("rejects with the signal's reason when aborted, before the answer and while reading it", async () => {
    const early = new AbortController();
    early.abort();
    await expect(fetch(`${origin}/echo`, { signal: early.signal })).rejects.toMatchObject({
      name: "AbortError",
    });

    const late = new AbortController();
    const response = await fetch(`${origin}/hang`, { signal: late.signal });
    const chunks = response.body![Symbol.asyncIterator]();
    await chunks.next();
    const pending = chunks.next();
    late.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("a connection that dies under a body nobody reads fails nothing; one being read ends it with an error", async () => {
    // Unread: neither the plain nor the decoded body may raise an unhandled error (it would end the process).
    const unread = [await fetch(`${origin}/torn`), await fetch(`${origin}/torn?gz`)];
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(unread.map((r) => r.status)).toEqual([200, 200]);
    await expect(fetch(`${origin}/torn-redirect`)).rejects.toThrow(/fetch failed/);
    // Read: the read fails, as fetch's does.
    await expect((await fetch(`${origin}/torn`)).text()).rejects.toThrow();
    await expect((await fetch(`${origin}/torn?gz`)).text()).rejects.toThrow(/terminated/);
  });

  it("fails a request that cannot connect as fetch does, with the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("fetch failed");
    expect(((error as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("leaves a body it does not send itself to Node's own fetch", async () => {
    seen = [];
    const response = await fetch(`${origin}/echo`, { method: "POST", body: new URLSearchParams({ q: "1" }) });
    expect(await response.json()).toEqual({ method: "POST", body: "q=1" });
    expect(seen[0]!.headers["content-type"]).toContain("application/x-www-form-urlencoded");
  });
});

describe("Headers, Response and the stand-ins of Node's classes", () => {
  it("Headers: names without case, values joined, name order, bad input refused", () => {
    const headers = new Headers([
      ["B-Name", "2"],
      ["a-name", " 1 "],
    ]);
    headers.append("b-name", "3");
    expect([...headers]).toEqual([
      ["a-name", "1"],
      ["b-name", "2, 3"],
    ]);
    expect(headers.has("A-NAME")).toBe(true);
    headers.delete("a-name");
    expect(headers.get("a-name")).toBeNull();
    expect(() => headers.set("bad name", "x")).toThrow(TypeError);
    expect(() => headers.set("x-ok", "line\nbreak")).toThrow(TypeError);
    expect(Object.prototype.toString.call(headers)).toBe("[object Headers]");
  });

  it("Response from a string or bytes, as the Gemini SDK makes one per streamed event", async () => {
    const response = new Response('{"n":1}', { status: 200, headers: new Headers({ "x-a": "1" }) });
    expect(response.headers.get("x-a")).toBe("1");
    expect(await response.json()).toEqual({ n: 1 });
    expect(response.bodyUsed).toBe(true);
    expect(await new Response(new Uint8Array([104, 105])).text()).toBe("hi");
    expect(new Response(null, { status: 404 }).ok).toBe(false);
  });

  it("FormData and ReadableStream answer instanceof and construct Node's own", () => {
    expect({} instanceof FormData).toBe(false);
    const form = new (FormData as unknown as new () => globalThis.FormData)();
    expect(form).toBeInstanceOf(globalThis.FormData);
    expect(form instanceof FormData).toBe(true);
    const stream = new (ReadableStream as unknown as new () => globalThis.ReadableStream)();
    expect(stream instanceof ReadableStream).toBe(true);
    expect(("text" as unknown) instanceof ReadableStream).toBe(false);
  });
});
