/**
 * The standard OpenTelemetry variables yoi reads, checked before anything is
 * loaded: which signals go where, over which OTLP protocol, with which
 * headers, compression and TLS files. Nothing here imports the SDK; `telemetryRequested` is the one
 * check the start-up path pays.
 */

import { readFileSync } from "node:fs";
import * as path from "node:path";

/** The OTLP protocols yoi exports with (gRPC would need a gRPC stack in the bundle). */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`. */
export type TemporalityPreference = "cumulative" | "delta" | "lowmemory";

/** The TLS files of `OTEL_EXPORTER_OTLP_CERTIFICATE` and the client pair, read when the variables are. */
export interface TlsFiles {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export interface SignalTarget {
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  compression: "gzip" | "none";
  /** Only when a certificate variable is set. */
  tls?: TlsFiles;
}

export interface TelemetrySettings {
  traces: SignalTarget | undefined;
  metrics: SignalTarget | undefined;
  /** One export's time limit, and the bound of the flush at exit. */
  timeoutMs: number;
  metricIntervalMs: number;
  temporality: TemporalityPreference;
  serviceName: string;
  resourceAttributes: Record<string, string>;
}

export type TelemetryConfig =
  | { kind: "off" }
  | { kind: "invalid"; message: string }
  | { kind: "on"; settings: TelemetrySettings };

type Env = Readonly<Record<string, string | undefined>>;

/** Default export time limit: short, so a collector that does not answer never holds a run or its exit for long. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 1_500;
const DEFAULT_METRIC_INTERVAL_MS = 60_000;

const SIGNAL_PATHS = { traces: "v1/traces", metrics: "v1/metrics" } as const;

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? undefined : v;
}

/** Whether an OTLP endpoint is set at all: the only check made when telemetry is not wanted. */
export function telemetryRequested(env: Env): boolean {
  if (value(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return false;
  return (
    value(env, "OTEL_EXPORTER_OTLP_ENDPOINT") !== undefined ||
    value(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") !== undefined ||
    value(env, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") !== undefined
  );
}

class Invalid extends Error {}

/** Reads and checks the variables; `invalid` carries the one line to show. */
export function readTelemetryConfig(env: Env): TelemetryConfig {
  if (!telemetryRequested(env)) return { kind: "off" };
  try {
    const timeoutMs = positiveInt(env, "OTEL_EXPORTER_OTLP_TIMEOUT") ?? DEFAULT_EXPORT_TIMEOUT_MS;
    const settings: TelemetrySettings = {
      traces: signal(env, "traces"),
      metrics: signal(env, "metrics"),
      timeoutMs,
      metricIntervalMs: positiveInt(env, "OTEL_METRIC_EXPORT_INTERVAL") ?? DEFAULT_METRIC_INTERVAL_MS,
      temporality: oneOf(env, "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", [
        "cumulative",
        "delta",
        "lowmemory",
      ]),
      serviceName: value(env, "OTEL_SERVICE_NAME") ?? "yoi",
      resourceAttributes: keyValues(env, "OTEL_RESOURCE_ATTRIBUTES", false),
    };
    if (settings.traces === undefined && settings.metrics === undefined) return { kind: "off" };
    return { kind: "on", settings };
  } catch (error) {
    if (error instanceof Invalid) return { kind: "invalid", message: error.message };
    throw error;
  }
}

function signal(env: Env, name: "traces" | "metrics"): SignalTarget | undefined {
  const upper = name.toUpperCase();
  const exporter = value(env, `OTEL_${upper}_EXPORTER`)?.toLowerCase();
  if (exporter === "none") return undefined;
  if (exporter !== undefined && exporter !== "otlp")
    throw new Invalid(
      `OTEL_${upper}_EXPORTER=${JSON.stringify(exporter)} is not supported; yoi exports with "otlp" (or set "none")`,
    );
  const own = value(env, `OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`);
  const shared = value(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  let url: string;
  if (own !== undefined) url = httpUrl(own, `OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`);
  else if (shared !== undefined) {
    // The shared endpoint is a base: each signal appends its own path.
    const base = httpUrl(shared, "OTEL_EXPORTER_OTLP_ENDPOINT");
    url = `${base.endsWith("/") ? base : `${base}/`}${SIGNAL_PATHS[name]}`;
  } else return undefined;
  // The signal's own variable when it is set, else the shared one.
  const variable = (suffix: string) =>
    value(env, `OTEL_EXPORTER_OTLP_${upper}_${suffix}`) !== undefined
      ? `OTEL_EXPORTER_OTLP_${upper}_${suffix}`
      : `OTEL_EXPORTER_OTLP_${suffix}`;
  // Certificates matter to an https:// collector only.
  const tls =
    new URL(url).protocol === "https:"
      ? tlsFiles(env, variable("CERTIFICATE"), variable("CLIENT_CERTIFICATE"), variable("CLIENT_KEY"))
      : undefined;
  return {
    url,
    protocol: protocol(env, upper),
    headers: {
      ...keyValues(env, "OTEL_EXPORTER_OTLP_HEADERS", true),
      ...keyValues(env, `OTEL_EXPORTER_OTLP_${upper}_HEADERS`, true),
    },
    compression: oneOf(env, variable("COMPRESSION"), ["none", "gzip"]),
    ...(tls ? { tls } : {}),
  };
}

/** A choice among `allowed` (case-insensitive); the first is the default. */
function oneOf<T extends string>(env: Env, name: string, allowed: readonly [T, ...T[]]): T {
  const given = value(env, name)?.toLowerCase();
  if (given === undefined) return allowed[0];
  if ((allowed as readonly string[]).includes(given)) return given as T;
  throw new Invalid(`${name}=${JSON.stringify(given)} is not supported; use ${allowed.join(" or ")}`);
}

/** The certificate files the variables name, read now: a path that cannot be read is the variable's error. */
function tlsFiles(env: Env, caName: string, certName: string, keyName: string): TlsFiles | undefined {
  const read = (name: string): Buffer | undefined => {
    const file = value(env, name);
    if (file === undefined) return undefined;
    try {
      return readFileSync(path.resolve(file));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new Invalid(
        `${name} names ${JSON.stringify(file)}, which cannot be read${typeof code === "string" ? ` (${code})` : ""}; set it to a PEM file`,
      );
    }
  };
  const files: TlsFiles = {};
  const ca = read(caName);
  const cert = read(certName);
  const key = read(keyName);
  if (ca) files.ca = ca;
  if (cert) files.cert = cert;
  if (key) files.key = key;
  if ((cert === undefined) !== (key === undefined))
    throw new Invalid(
      `${cert ? keyName : certName} is missing: a client certificate needs its key, and a key its certificate`,
    );
  return ca || cert ? files : undefined;
}

function httpUrl(text: string, name: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Invalid(`${name} is not a URL; set it like http://localhost:4318`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Invalid(
      `${name} must be an http:// or https:// URL (yoi speaks OTLP over HTTP), got ${url.protocol}//`,
    );
  return text;
}

function protocol(env: Env, upper: string): OtlpProtocol {
  const name =
    value(env, `OTEL_EXPORTER_OTLP_${upper}_PROTOCOL`) !== undefined
      ? `OTEL_EXPORTER_OTLP_${upper}_PROTOCOL`
      : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const given = value(env, name) ?? "http/protobuf";
  if (given === "http/protobuf" || given === "http/json") return given;
  const hint =
    given === "grpc" ? " (gRPC is not built in; point it at the collector's HTTP port, usually 4318)" : "";
  throw new Invalid(
    `${name}=${JSON.stringify(given)} is not supported; use http/protobuf or http/json${hint}`,
  );
}

/**
 * `key1=value1,key2=value2`, each part percent-decoded (the W3C baggage
 * form the OpenTelemetry variables use). A header value is never quoted
 * back: it is usually a credential.
 */
function keyValues(env: Env, name: string, secret: boolean): Record<string, string> {
  const text = value(env, name);
  const out: Record<string, string> = {};
  if (text === undefined) return out;
  for (const [i, entry] of text.split(",").entries()) {
    if (entry.trim() === "") continue;
    const eq = entry.indexOf("=");
    const key = eq > 0 ? decode(entry.slice(0, eq).trim(), name) : "";
    if (eq <= 0 || key === "" || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) {
      const shown = secret ? `entry ${i + 1}` : JSON.stringify(entry.trim());
      throw new Invalid(`${name} is malformed at ${shown}; write it as key1=value1,key2=value2`);
    }
    out[key] = decode(entry.slice(eq + 1).trim(), name);
  }
  return out;
}

function decode(text: string, name: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Invalid(`${name} has a malformed %-escape; write it as key1=value1,key2=value2`);
  }
}

function positiveInt(env: Env, name: string): number | undefined {
  const text = value(env, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0)
    throw new Invalid(`${name} must be a positive whole number of milliseconds, got ${JSON.stringify(text)}`);
  return n;
}
