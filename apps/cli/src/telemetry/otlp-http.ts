/**
 * OTLP over HTTP, trimmed to what yoi sends: each export is one POST of one
 * encoded batch (protobuf or JSON, gzipped when asked), with a time limit.
 * The encoding is the OpenTelemetry serializers'; the request goes through
 * `node:http(s)`, which the provider SDKs' transport has loaded and used by
 * the time a batch leaves (src/startup/provider-fetch.ts), where Node's
 * `fetch` would load undici for it first, some 40 ms of the exit flush
 * (bench/telemetry.bench.ts). `node:https` takes a collector's own TLS
 * files (`OTEL_EXPORTER_OTLP_CERTIFICATE`, the client pair), and Node's
 * global agent goes through `HTTP(S)_PROXY` with `NODE_USE_ENV_PROXY=1`.
 *
 * A collector that answers "busy" (429, 502, 503, 504) gets a second try
 * after 100 ms; nothing else is retried. Both tries fit in the export limit,
 * which is short on purpose, so a collector that is down never holds a run;
 * a batch that still fails is counted and said at exit (start.ts).
 */
import { gzipSync } from "node:zlib";
import {
  JsonMetricsSerializer,
  JsonTraceSerializer,
  ProtobufMetricsSerializer,
  ProtobufTraceSerializer,
} from "@opentelemetry/otlp-transformer";
import {
  AggregationTemporality,
  InstrumentType,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { rootCauseMessage, YoiError } from "@yoi/manifest/errors";
import type { SignalTarget, TemporalityPreference, TlsFiles } from "./otel-env.ts";

/** `ExportResultCode` of @opentelemetry/core: SUCCESS and FAILED. */
const SUCCESS = 0;
const FAILED = 1;

type ExportResult = { code: number; error?: Error };

/** The HTTP statuses after which OTLP/HTTP says to try again. */
const RETRYABLE = new Set([429, 502, 503, 504]);
const RETRY_DELAY_MS = 100;

/** An export the collector did not take: its HTTP status, or why no answer came. */
export class OtlpExportError extends YoiError<"otlp_export"> {
  override readonly name = "OtlpExportError";
  static override readonly marker: symbol = Symbol.for("yoi.error.OtlpExportError");

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("otlp_export", message, options);
  }
}

interface Serializer<T> {
  serializeRequest(items: T): Uint8Array | undefined;
}

/** Sends one encoded batch; resolves when the collector took it (2xx), rejects with why not. */
async function post(target: SignalTarget, body: Uint8Array, timeoutMs: number): Promise<void> {
  const headers: Record<string, string> = {
    ...target.headers,
    "content-type": target.protocol === "http/json" ? "application/json" : "application/x-protobuf",
  };
  let payload = body;
  if (target.compression === "gzip") {
    payload = gzipSync(body);
    headers["content-encoding"] = "gzip";
  }
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const left = Math.max(1, deadline - Date.now());
    const status = await postOnce(target.url, target.tls, headers, payload, left);
    if (status >= 200 && status <= 299) return;
    // A collector that is busy (the statuses OTLP calls retryable) gets one more try, within the same limit.
    if (attempt === 1 && RETRYABLE.has(status) && deadline - Date.now() > RETRY_DELAY_MS * 2) {
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS).unref());
      continue;
    }
    throw new OtlpExportError(`the collector answered HTTP ${status}`);
  }
}

/** One POST through node:http(s), with the collector's TLS files when it has its own. */
async function postOnce(
  url: string,
  tls: TlsFiles | undefined,
  headers: Record<string, string>,
  payload: Uint8Array,
  timeoutMs: number,
): Promise<number> {
  // Node's own module: `import("node:http")` reads every export, `WebSocket` among them, which loads undici.
  const { request } = process.getBuiltinModule(
    new URL(url).protocol === "https:" ? "node:https" : "node:http",
  );
  return new Promise<number>((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(payload.byteLength) },
        ...tls,
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          clearTimeout(timer);
          resolve(res.statusCode ?? 0);
        });
        res.on("error", fail);
      },
    );
    // The whole exchange, answer included, within the limit.
    const timer = setTimeout(
      () => req.destroy(new OtlpExportError(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    function fail(error: Error): void {
      clearTimeout(timer);
      // The time limit's own error, or the network error as one line (ECONNREFUSED ...).
      reject(
        OtlpExportError.isInstance(error)
          ? error
          : new OtlpExportError(rootCauseMessage(error), { cause: error }),
      );
    }
    req.on("error", fail);
    req.end(payload);
  });
}

/** Exports in flight, so that a flush or a shutdown can wait for them. */
class InFlight {
  readonly #pending = new Set<Promise<void>>();

  track(sending: Promise<void>): void {
    this.#pending.add(sending);
    void sending.finally(() => this.#pending.delete(sending));
  }

  async settle(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}

function send<T>(
  serializer: Serializer<T>,
  target: SignalTarget,
  timeoutMs: number,
  inFlight: InFlight,
  items: T,
  done: (result: ExportResult) => void,
): void {
  let body: Uint8Array | undefined;
  try {
    body = serializer.serializeRequest(items);
  } catch (error) {
    done({ code: FAILED, error: error as Error });
    return;
  }
  if (body === undefined) {
    done({ code: FAILED, error: new OtlpExportError("the batch could not be encoded") });
    return;
  }
  inFlight.track(
    post(target, body, timeoutMs).then(
      () => done({ code: SUCCESS }),
      (error: Error) => done({ code: FAILED, error }),
    ),
  );
}

/** Spans to `target`, one POST per batch. */
export function otlpSpanExporter(target: SignalTarget, timeoutMs: number): SpanExporter {
  const serializer: Serializer<ReadableSpan[]> =
    target.protocol === "http/json" ? JsonTraceSerializer : ProtobufTraceSerializer;
  const inFlight = new InFlight();
  return {
    export: (spans, done) => send(serializer, target, timeoutMs, inFlight, spans, done),
    forceFlush: () => inFlight.settle(),
    shutdown: () => inFlight.settle(),
  };
}

/** Metrics to `target`, one POST per collection, with the temporality the variables prefer. */
export function otlpMetricExporter(
  target: SignalTarget,
  timeoutMs: number,
  temporality: TemporalityPreference,
): PushMetricExporter {
  const serializer: Serializer<ResourceMetrics> =
    target.protocol === "http/json" ? JsonMetricsSerializer : ProtobufMetricsSerializer;
  const inFlight = new InFlight();
  return {
    export: (metrics, done) => send(serializer, target, timeoutMs, inFlight, metrics, done),
    forceFlush: () => inFlight.settle(),
    shutdown: () => inFlight.settle(),
    selectAggregationTemporality: (kind) => temporalityOf(kind, temporality),
  };
}

/**
 * `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` as the specification
 * defines it: `delta` makes counters, histograms and gauges delta;
 * `lowmemory` only synchronous counters and histograms; up-down counters
 * stay cumulative in both.
 */
function temporalityOf(kind: InstrumentType, preference: TemporalityPreference): AggregationTemporality {
  if (preference === "delta" && kind !== InstrumentType.UP_DOWN_COUNTER)
    return kind === InstrumentType.OBSERVABLE_UP_DOWN_COUNTER
      ? AggregationTemporality.CUMULATIVE
      : AggregationTemporality.DELTA;
  if (preference === "lowmemory" && (kind === InstrumentType.COUNTER || kind === InstrumentType.HISTOGRAM))
    return AggregationTemporality.DELTA;
  return AggregationTemporality.CUMULATIVE;
}
