/** The OTEL_* variables as yoi reads them (otel-env.ts): which signals go where, and what is refused. */
import { describe, expect, it } from "vitest";
import { readTelemetryConfig, telemetryRequested } from "../src/telemetry/otel-env.ts";

const on = (env: Record<string, string>) => {
  const config = readTelemetryConfig(env);
  if (config.kind !== "on") throw new Error(`expected on, got ${JSON.stringify(config)}`);
  return config.settings;
};

describe("OTEL variables", () => {
  it("nothing set, or the SDK disabled: not requested, nothing loaded", () => {
    expect(telemetryRequested({})).toBe(false);
    expect(telemetryRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBe(false);
    expect(
      telemetryRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBe(false);
    expect(readTelemetryConfig({})).toEqual({ kind: "off" });
  });

  it("the shared endpoint is a base each signal appends its path to; a signal's own is used as given", () => {
    const s = on({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://metrics.example/ingest",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json",
    });
    expect(s.traces).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      headers: {},
      compression: "none",
    });
    expect(s.metrics).toEqual({
      url: "https://metrics.example/ingest",
      protocol: "http/json",
      headers: {},
      compression: "none",
    });
    expect(s.serviceName).toBe("yoi");
  });

  it("only the signal whose endpoint is set, and `none` turns one off", () => {
    const s = on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" });
    expect(s.metrics).toBeUndefined();
    const t = on({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_TRACES_EXPORTER: "none" });
    expect(t.traces).toBeUndefined();
    expect(t.metrics?.url).toBe("http://c/v1/metrics");
    expect(
      readTelemetryConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none",
      }),
    ).toEqual({ kind: "off" });
  });

  it("headers are percent-decoded, a signal's own win; resource attributes and service name pass through", () => {
    const s = on({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-a=1",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-a=2",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=dev,team=agents",
      OTEL_SERVICE_NAME: "my-agent",
      OTEL_EXPORTER_OTLP_TIMEOUT: "250",
    });
    expect(s.traces?.headers).toEqual({ authorization: "Bearer abc", "x-a": "2" });
    expect(s.metrics?.headers).toEqual({ authorization: "Bearer abc", "x-a": "1" });
    expect(s.resourceAttributes).toEqual({ "deployment.environment": "dev", team: "agents" });
    expect(s.serviceName).toBe("my-agent");
    expect(s.timeoutMs).toBe(250);
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_TRACES_EXPORTER: "zipkin" },
      /OTEL_TRACES_EXPORTER="zipkin"/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_HEADERS: "a=%E0%A4%A" },
      /malformed %-escape/,
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_HEADERS: "=x" }, /malformed at entry 1/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_METRIC_EXPORT_INTERVAL: "-5" },
      /OTEL_METRIC_EXPORT_INTERVAL/,
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_RESOURCE_ATTRIBUTES: "novalue" }, /"novalue"/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://c:4317" }, /must be an http:\/\/ or https:\/\/ URL/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_COMPRESSION: "brotli" },
      /OTEL_EXPORTER_OTLP_COMPRESSION="brotli" is not supported; use none or gzip/,
    ],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "weekly",
      },
      /TEMPORALITY_PREFERENCE="weekly" is not supported; use cumulative or delta or lowmemory/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "https://c", OTEL_EXPORTER_OTLP_CERTIFICATE: "/no/such/ca.pem" },
      /OTEL_EXPORTER_OTLP_CERTIFICATE names "\/no\/such\/ca.pem", which cannot be read \(ENOENT\); set it to a PEM file/,
    ],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://c",
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: import.meta.filename,
      },
      /OTEL_EXPORTER_OTLP_CLIENT_KEY is missing: a client certificate needs its key/,
    ],
  ] as const)("refuses %j", (env, message) => {
    const config = readTelemetryConfig(env);
    expect(config.kind).toBe("invalid");
    expect(config.kind === "invalid" && config.message).toMatch(message);
  });

  it("compression and TLS files: a signal's own variable wins; certificates only for an https:// collector", () => {
    const s = on({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://c",
      OTEL_EXPORTER_OTLP_COMPRESSION: "GZIP",
      OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: "none",
      OTEL_EXPORTER_OTLP_CERTIFICATE: import.meta.filename,
    });
    expect(s.traces?.compression).toBe("gzip");
    expect(s.metrics?.compression).toBe("none");
    expect(s.traces?.tls?.ca?.toString("utf8")).toContain("compression and TLS files");
    const plain = on({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      OTEL_EXPORTER_OTLP_CERTIFICATE: "/no/such/ca.pem",
    });
    expect(plain.traces?.tls).toBeUndefined();
  });

  it("metrics temporality: cumulative unless the preference says delta or lowmemory", () => {
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c" }).temporality).toBe("cumulative");
    expect(
      on({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "Delta",
      }).temporality,
    ).toBe("delta");
  });

  it("never quotes a header value back", () => {
    const config = readTelemetryConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
      OTEL_EXPORTER_OTLP_HEADERS: "ok=1,secret-token-value",
    });
    expect(config).toMatchObject({ kind: "invalid", message: expect.stringContaining("entry 2") });
    expect(JSON.stringify(config)).not.toContain("secret-token-value");
  });
});
