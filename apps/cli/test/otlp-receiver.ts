/**
 * An OTLP/HTTP receiver on 127.0.0.1 for the tests and the bench: takes
 * `/v1/traces` and `/v1/metrics` in both encodings (`application/x-protobuf`
 * and `application/json`) and turns them into one plain shape. The protobuf
 * side is a small wire-format reader over the field numbers of the
 * opentelemetry-proto messages it needs (trace, metrics, common), so what
 * the test checks is what went over the wire, not what an SDK decoder says.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { errorMessage } from "@yoi/manifest/errors";

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  statusCode: number;
  resource: Record<string, unknown>;
  scope: string;
}

export interface ReceivedPoint {
  attributes: Record<string, unknown>;
  /** Sums and gauges. */
  value?: number;
  /** Histograms. */
  count?: number;
  sum?: number;
}

export interface ReceivedMetric {
  name: string;
  unit: string;
  points: ReceivedPoint[];
}

export interface OtlpReceiver {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  /** Content types of the requests, per path. */
  requests: { path: string; contentType: string; headers: IncomingMessage["headers"] }[];
  close(): Promise<void>;
}

/**
 * Starts the receiver; `hang: true` accepts requests and never answers (a
 * collector that is stuck), `status` answers every request (or the first
 * `statusTimes`) with that HTTP status and keeps nothing (a collector that
 * refuses), `ackFirst` answers 200 as soon as a request is in and decodes
 * it after (the benchmark's collector: what the decoding takes is not
 * counted as the sender's, and a body that does not decode throws), `tls`
 * serves HTTPS
 * with that key and certificate. Gzipped bodies (`content-encoding: gzip`)
 * are unpacked first.
 */
export async function startOtlpReceiver(
  options: {
    hang?: boolean;
    ackFirst?: boolean;
    status?: number;
    statusTimes?: number;
    tls?: { key: Buffer; cert: Buffer };
  } = {},
): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const requests: OtlpReceiver["requests"] = [];
  let refused = 0;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (options.hang) return;
      if (
        options.status !== undefined &&
        (options.statusTimes === undefined || refused++ < options.statusTimes)
      ) {
        res.writeHead(options.status).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
      const contentType = req.headers["content-type"] ?? "";
      const path = req.url ?? "";
      requests.push({ path, contentType, headers: req.headers });
      const json = contentType.includes("json");
      const ok = () => {
        // An empty success response is valid in both encodings.
        res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
        res.end(json ? "{}" : undefined);
      };
      // Answered before the decoding: the decoder's time is not the sender's (a real collector queues and answers).
      if (options.ackFirst) ok();
      try {
        if (path === "/v1/traces")
          spans.push(...(json ? spansFromJson(JSON.parse(body.toString("utf8"))) : spansFromProto(body)));
        else if (path === "/v1/metrics")
          metrics.push(
            ...(json ? metricsFromJson(JSON.parse(body.toString("utf8"))) : metricsFromProto(body)),
          );
        else {
          if (!options.ackFirst) res.writeHead(404).end();
          return;
        }
      } catch (error) {
        if (options.ackFirst) throw error;
        res.writeHead(400).end(errorMessage(error));
        return;
      }
      if (!options.ackFirst) ok();
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handle) : createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    spans,
    metrics,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- JSON (OTLP/JSON: camelCase, ids in hex, 64-bit integers as strings) ----

type Json = Record<string, unknown>;
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

function anyValueJson(v: Json | undefined): unknown {
  if (v === undefined) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return list((v.arrayValue as Json).values).map(anyValueJson);
  return undefined;
}

function attributesJson(v: unknown): Record<string, unknown> {
  return Object.fromEntries(list(v).map((kv) => [String(kv.key), anyValueJson(kv.value as Json)]));
}

function spansFromJson(body: Json): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of list(body.resourceSpans)) {
    const resource = attributesJson((rs.resource as Json | undefined)?.attributes);
    for (const ss of list(rs.scopeSpans)) {
      const scope = String((ss.scope as Json | undefined)?.name ?? "");
      for (const s of list(ss.spans)) {
        out.push({
          name: String(s.name),
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: String(s.parentSpanId ?? ""),
          kind: Number(s.kind ?? 0),
          attributes: attributesJson(s.attributes),
          events: list(s.events).map((e) => ({
            name: String(e.name),
            attributes: attributesJson(e.attributes),
          })),
          statusCode: Number((s.status as Json | undefined)?.code ?? 0),
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

function metricsFromJson(body: Json): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of list(body.resourceMetrics)) {
    for (const sm of list(rm.scopeMetrics)) {
      for (const m of list(sm.metrics)) {
        const data = (m.sum ?? m.gauge ?? m.histogram) as Json | undefined;
        out.push({
          name: String(m.name),
          unit: String(m.unit ?? ""),
          points: list(data?.dataPoints).map((p) => ({
            attributes: attributesJson(p.attributes),
            ...(p.asDouble !== undefined ? { value: Number(p.asDouble) } : {}),
            ...(p.asInt !== undefined ? { value: Number(p.asInt) } : {}),
            ...(p.count !== undefined ? { count: Number(p.count) } : {}),
            ...(p.sum !== undefined ? { sum: Number(p.sum) } : {}),
          })),
        });
      }
    }
  }
  return out;
}

// ---- protobuf wire format ----

/** One field of a message: its number and its raw value (varint as bigint, bytes, or fixed as a Buffer). */
interface Field {
  n: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const n = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ n, wire, varint: varint() });
    else if (wire === 1) {
      out.push({ n, wire, bytes: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ n, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) {
      out.push({ n, wire, bytes: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const all = (fs: Field[], n: number) => fs.filter((f) => f.n === n);
const one = (fs: Field[], n: number) => fs.find((f) => f.n === n);
const str = (f: Field | undefined) => f?.bytes?.toString("utf8") ?? "";
const hex = (f: Field | undefined) => f?.bytes?.toString("hex") ?? "";

/** AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array. */
function anyValueProto(buf: Buffer): unknown {
  const fs = fields(buf);
  const f = fs[0];
  if (f === undefined) return undefined;
  switch (f.n) {
    case 1:
      return str(f);
    case 2:
      return f.varint === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.varint!));
    case 4:
      return f.bytes!.readDoubleLE(0);
    case 5:
      return all(fields(f.bytes!), 1).map((v) => anyValueProto(v.bytes!));
    default:
      return undefined;
  }
}

/** KeyValue: 1 key, 2 value. */
function attributesProto(fs: Field[]): Record<string, unknown> {
  return Object.fromEntries(
    fs.map((f) => {
      const kv = fields(f.bytes!);
      const v = one(kv, 2);
      return [str(one(kv, 1)), v ? anyValueProto(v.bytes!) : undefined];
    }),
  );
}

/** ExportTraceServiceRequest 1 -> ResourceSpans (1 resource, 2 scope_spans) -> ScopeSpans (1 scope, 2 spans) -> Span. */
function spansFromProto(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const rsf = fields(rs.bytes!);
    const res = one(rsf, 1);
    const resource = res ? attributesProto(all(fields(res.bytes!), 1)) : {};
    for (const ss of all(rsf, 2)) {
      const ssf = fields(ss.bytes!);
      const scopeField = one(ssf, 1);
      const scope = scopeField ? str(one(fields(scopeField.bytes!), 1)) : "";
      for (const sp of all(ssf, 2)) {
        // Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 11 events, 15 status.
        const s = fields(sp.bytes!);
        const status = one(s, 15);
        out.push({
          name: str(one(s, 5)),
          traceId: hex(one(s, 1)),
          spanId: hex(one(s, 2)),
          parentSpanId: hex(one(s, 4)),
          kind: Number(one(s, 6)?.varint ?? 0n),
          attributes: attributesProto(all(s, 9)),
          // Event: 1 time, 2 name, 3 attributes.
          events: all(s, 11).map((e) => {
            const ef = fields(e.bytes!);
            return { name: str(one(ef, 2)), attributes: attributesProto(all(ef, 3)) };
          }),
          // Status: 3 code.
          statusCode: status ? Number(one(fields(status.bytes!), 3)?.varint ?? 0n) : 0,
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

/**
 * ExportMetricsServiceRequest 1 -> ResourceMetrics (2 scope_metrics) -> ScopeMetrics (2 metrics) -> Metric
 * (1 name, 3 unit, 5 gauge, 7 sum, 9 histogram; each with data points at 1).
 */
function metricsFromProto(body: Buffer): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of all(fields(body), 1)) {
    for (const sm of all(fields(rm.bytes!), 2)) {
      for (const m of all(fields(sm.bytes!), 2)) {
        const mf = fields(m.bytes!);
        const gaugeOrSum = one(mf, 5) ?? one(mf, 7);
        const histogram = one(mf, 9);
        const points: ReceivedPoint[] = [];
        if (gaugeOrSum) {
          // NumberDataPoint: 7 attributes, 4 as_double, 6 as_int.
          for (const p of all(fields(gaugeOrSum.bytes!), 1)) {
            const pf = fields(p.bytes!);
            const dbl = one(pf, 4);
            const int = one(pf, 6);
            points.push({
              attributes: attributesProto(all(pf, 7)),
              ...(dbl ? { value: dbl.bytes!.readDoubleLE(0) } : {}),
              ...(int ? { value: Number(int.bytes!.readBigInt64LE(0)) } : {}),
            });
          }
        }
        if (histogram) {
          // HistogramDataPoint: 9 attributes, 4 count (fixed64), 5 sum (double).
          for (const p of all(fields(histogram.bytes!), 1)) {
            const pf = fields(p.bytes!);
            const sum = one(pf, 5);
            points.push({
              attributes: attributesProto(all(pf, 9)),
              count: Number(one(pf, 4)?.bytes?.readBigUInt64LE(0) ?? 0n),
              ...(sum ? { sum: sum.bytes!.readDoubleLE(0) } : {}),
            });
          }
        }
        out.push({ name: str(one(mf, 1)), unit: str(one(mf, 3)), points });
      }
    }
  }
  return out;
}
