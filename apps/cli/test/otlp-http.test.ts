/** The trimmed OTLP exporters (src/telemetry/otlp-http.ts): the temporality each preference gives each instrument. */
import { AggregationTemporality, InstrumentType } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { otlpMetricExporter } from "../src/telemetry/otlp-http.ts";

const target = {
  url: "http://127.0.0.1:1/v1/metrics",
  protocol: "http/protobuf",
  headers: {},
  compression: "none",
} as const;
const { CUMULATIVE: C, DELTA: D } = AggregationTemporality;

describe("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", () => {
  it.each([
    ["cumulative", [C, C, C, C, C, C, C]],
    ["delta", [D, D, C, D, D, C, D]],
    ["lowmemory", [D, D, C, C, C, C, C]],
  ] as const)("%s", (preference, expected) => {
    const exporter = otlpMetricExporter(target, 1000, preference);
    const kinds = [
      InstrumentType.COUNTER,
      InstrumentType.HISTOGRAM,
      InstrumentType.UP_DOWN_COUNTER,
      InstrumentType.OBSERVABLE_COUNTER,
      InstrumentType.OBSERVABLE_GAUGE,
      InstrumentType.OBSERVABLE_UP_DOWN_COUNTER,
      InstrumentType.GAUGE,
    ];
    expect(kinds.map((k) => exporter.selectAggregationTemporality?.(k))).toEqual(expected);
  });
});
