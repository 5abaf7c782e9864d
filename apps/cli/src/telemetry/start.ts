/**
 * The OpenTelemetry SDK of the `yoi` command, loaded (as its own chunk)
 * only when an OTLP endpoint is set: a tracer provider with a bounded batch
 * processor, a meter provider with a periodic reader, OTLP over HTTP
 * (protobuf or JSON, see otlp-http.ts) and the async-hooks context manager
 * that carries the run's span through the agent loop. The libraries emit through
 * `@opentelemetry/api`; registering these globals is what turns them on.
 *
 * A collector that is down or slow never fails or holds a run: exports run
 * in the background with a short time limit, the queue is bounded (spans
 * past it are dropped), and the flush at exit waits at most that limit.
 * What was not delivered is counted and said once, on stderr, at exit.
 */
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { redactSecrets, registerClientSecrets } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import { cliVersion } from "../version.ts";
import type { TelemetrySettings } from "./otel-env.ts";
import { otlpMetricExporter, otlpSpanExporter } from "./otlp-http.ts";

/** Spans held for export at most; past it the batch processor drops them (and they are counted). */
const MAX_QUEUED_SPANS = 2048;
const MAX_EXPORT_BATCH = 512;
/** An export result's success code (`ExportResultCode.SUCCESS` of @opentelemetry/core). */
const EXPORT_SUCCESS = 0;

/** The running SDK: `shutdown` flushes (bounded) and says what was lost, once. */
export interface Telemetry {
  shutdown(): Promise<void>;
}

/** Counts what an exporter delivered and remembers the first failure's reason. */
class Delivery {
  delivered = 0;
  failedExports = 0;
  reason: string | undefined;

  settle(count: number, code: number, error: Error | undefined): void {
    if (code === EXPORT_SUCCESS) {
      this.delivered += count;
      return;
    }
    this.failedExports++;
    this.reason ??= describeFailure(error);
  }
}

function describeFailure(error: Error | undefined): string {
  // The exporters' errors (otlp-http.ts) already name the HTTP status or the network error's code.
  return error === undefined ? "the export failed" : redactSecrets(errorMessage(error));
}

/** The span exporter with every export's outcome counted. */
function countingSpanExporter(inner: SpanExporter, delivery: Delivery): SpanExporter {
  return {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        delivery.settle(spans.length, result.code, result.error);
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The metric exporter with every export's outcome counted (temporality and aggregation as the inner one chooses). */
function countingMetricExporter(inner: PushMetricExporter, delivery: Delivery): PushMetricExporter {
  const wrapped: PushMetricExporter = {
    export(batch: ResourceMetrics, done) {
      inner.export(batch, (result) => {
        delivery.settle(1, result.code, result.error);
        done(result);
      });
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
  if (inner.selectAggregationTemporality)
    wrapped.selectAggregationTemporality = inner.selectAggregationTemporality.bind(inner);
  if (inner.selectAggregation) wrapped.selectAggregation = inner.selectAggregation.bind(inner);
  return wrapped;
}

/**
 * Registers the SDK globally and returns its handle. `warn` gets the one
 * line about undelivered telemetry at shutdown.
 */
export function startTelemetry(settings: TelemetrySettings, warn: (line: string) => void): Telemetry {
  // Header values are credentials more often than not: hidden on every channel from here on.
  for (const target of [settings.traces, settings.metrics]) {
    if (target) registerClientSecrets({ headers: target.headers, baseURL: target.url });
  }
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    "service.name": settings.serviceName,
    "service.version": cliVersion(),
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

  const spans = new Delivery();
  let ended = 0;
  let tracerProvider: TracerProvider | undefined;
  if (settings.traces) {
    const processor = new BatchSpanProcessor({
      exporter: countingSpanExporter(otlpSpanExporter(settings.traces, settings.timeoutMs), spans),
      maxQueueSize: MAX_QUEUED_SPANS,
      maxExportBatchSize: MAX_EXPORT_BATCH,
      exportTimeoutMillis: settings.timeoutMs,
    });
    tracerProvider = new TracerProvider({
      resource,
      spanProcessors: [
        {
          // Counts every span handed to the queue; what never reaches the collector is the difference.
          onStart: (span, parent) => processor.onStart(span, parent),
          onEnd: (span) => {
            ended++;
            processor.onEnd(span);
          },
          forceFlush: () => processor.forceFlush(),
          shutdown: () => processor.shutdown(),
        },
      ],
    });
    trace.setGlobalTracerProvider(tracerProvider);
  }

  const metricDelivery = new Delivery();
  let meterProvider: MeterProvider | undefined;
  if (settings.metrics) {
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: countingMetricExporter(
            otlpMetricExporter(settings.metrics, settings.timeoutMs, settings.temporality),
            metricDelivery,
          ),
          exportIntervalMillis: settings.metricIntervalMs,
          exportTimeoutMillis: Math.min(settings.timeoutMs, settings.metricIntervalMs),
        }),
      ],
    });
    metrics.setGlobalMeterProvider(meterProvider);
  }

  let shutdown: Promise<void> | undefined;
  return {
    shutdown() {
      shutdown ??= (async () => {
        const flushes = Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<void>((resolve) => {
          // A little over one export's limit: the exporters give up on their own by then.
          timer = setTimeout(resolve, settings.timeoutMs + 250);
          timer.unref();
        });
        await Promise.race([flushes, limit]);
        clearTimeout(timer);
        const lost: string[] = [];
        const droppedSpans = ended - spans.delivered;
        if (settings.traces && droppedSpans > 0)
          lost.push(
            `${droppedSpans} span${droppedSpans === 1 ? "" : "s"} to ${redactSecrets(settings.traces.url)}`,
          );
        if (settings.metrics && metricDelivery.failedExports > 0)
          lost.push(
            `${metricDelivery.failedExports} metric export${metricDelivery.failedExports === 1 ? "" : "s"} to ${redactSecrets(settings.metrics.url)}`,
          );
        if (lost.length > 0) {
          const reason = spans.reason ?? metricDelivery.reason ?? "the collector did not answer in time";
          warn(`telemetry: ${lost.join(" and ")} could not be delivered (${reason})`);
        }
      })();
      return shutdown;
    },
  };
}
